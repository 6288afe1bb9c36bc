"""MLIR's ``math`` dialect ops Triton 3.6 emits: elementwise transcendental and rounding
functions of one operand, and ``math.fma``."""
from __future__ import annotations

from .spec import fail, op

UNARY_MATH = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "absf", "absi", "floor", "ceil",
              "sin", "cos", "erf", "tanh"]


def _same_types(op_, ctx) -> None:
    t = op_.result.type
    for i, v in enumerate(op_.operands):
        if v.type != t:
            fail(op_, f"operand #{i} has type {v.type} but the result has {t}")


_TRAITS = ("pure", "elementwise", "same_operands_and_result_type")

SPECS = [op("math." + n, ["operand"], traits=_TRAITS,
            format="$operand attr-dict `:` type($result)", verify=_same_types,
            doc=f"elementwise {n}") for n in UNARY_MATH]
SPECS.append(op("math.fma", ["a", "b", "c"], traits=_TRAITS,
                format="$a `,` $b `,` $c attr-dict `:` type($result)", verify=_same_types,
                doc="a*b+c, one rounding"))
