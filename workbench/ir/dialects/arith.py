"""MLIR's ``arith`` dialect as Triton 3.6 uses it: constants, integer and float arithmetic,
compares, select and conversions (MLIR's ``ArithOps.td`` names and syntax)."""
from __future__ import annotations

from ..types import FloatType, IntType, TensorType, like, shape_of
from .spec import REQUIRED, Attr, CustomSyntax, fail, i1_like_operand, op

BINARY_INT = ["addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "andi", "ori", "xori",
              "shli", "shrsi", "shrui", "maxsi", "minsi", "maxui", "minui"]
BINARY_FLOAT = ["addf", "subf", "mulf", "divf", "remf", "maxnumf", "minnumf", "maximumf",
                "minimumf"]
CASTS = ["extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "extf", "truncf",
         "bitcast"]
_COMMUTATIVE = {"addi", "muli", "andi", "ori", "xori", "maxsi", "minsi", "maxui", "minui",
                "addf", "mulf", "maxnumf", "minnumf", "maximumf", "minimumf"}

#: MLIR arith's ``cmpi`` and ``cmpf`` predicates
CMPI_PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF_PREDICATES = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
                   "ult", "ule", "une", "uno", "true"]

_PURE_ELEMENTWISE = ("pure", "elementwise")


def _same_types(op, ctx) -> None:
    t = op.result.type
    for i, v in enumerate(op.operands):
        if v.type != t:
            fail(op, f"operand #{i} has type {v.type} but the result has {t}")


def _binary_check(kind):
    def check(op, ctx) -> None:
        _same_types(op, ctx)
        if not isinstance(op.result.type.scalar, kind):
            fail(op, f"expects {'integer' if kind is IntType else 'float'} operands, "
                     f"got {op.result.type}")
    return check


def _compare_check(preds):
    def check(op, ctx) -> None:
        a, b = op.operands
        if a.type != b.type:
            fail(op, f"operands have different types {a.type} and {b.type}")
        if op.attributes.get("predicate") not in preds:
            fail(op, f"unknown predicate {op.attributes.get('predicate')!r}")
        if op.result.type != like(a.type, IntType(1)):
            fail(op, f"result must be {like(a.type, IntType(1))}, got {op.result.type}")
    return check


def _select_check(op, ctx) -> None:
    c, x, y = op.operands
    if not (x.type == y.type == op.result.type):
        fail(op, f"branches {x.type}, {y.type} and result {op.result.type} differ")
    if c.type.scalar != IntType(1) or shape_of(c.type) not in ((), shape_of(x.type)):
        fail(op, f"condition must be i1 of the same shape, got {c.type}")


def _cast_check(op, ctx) -> None:
    if shape_of(op.operands[0].type) != shape_of(op.result.type):
        fail(op, f"cast changes the shape: {op.operands[0].type} to {op.result.type}")


# arith.select: MLIR prints the condition's type only when it is a tensor ---------------------
def _print_select(p, o, indent) -> None:
    c = o.operands[0]
    cond = f"{p.t(c.type)}, " if isinstance(c.type, TensorType) else ""
    p.emit(indent, f"{p.results(o)}arith.select {p.vs(o.operands)}{p.attr_dict_text(o)} : "
                   f"{cond}{p.t(o.result.type)}", o.loc)


def _parse_select(r, name):
    ops = [r.use()]
    for _ in range(2):
        r.expect(",")
        ops.append(r.use())
    attrs = r.optional_attr_dict()
    r.expect(":")
    types = r.type_list()
    return r.make(name, ops, [types[-1]], attrs)


# arith.constant: a literal whose syntax depends on its type ----------------------------------
def _print_constant(p, o, indent) -> None:
    from ..attrs import format_float
    rt, val = o.result.type, o.attributes["value"]
    head = f"{p.results(o)}arith.constant "
    if isinstance(rt, TensorType):
        el = rt.element
        lit = format_float(float(val), el) if isinstance(el, FloatType) else (
            ("true" if val else "false") if el == IntType(1) else str(int(val)))
        text = f"dense<{lit}> : {p.t(rt)}"
    elif isinstance(rt, FloatType):
        text = f"{format_float(float(val), rt)} : {rt}"
    elif rt == IntType(1):
        text = "true" if val else "false"
    else:
        text = f"{int(val)} : {rt}"
    p.emit(indent, head + text, o.loc)


def _parse_constant(r, name):
    r.ws()
    lit_pos = r.i
    if r.eat_word("dense"):
        r.expect("<")
        lit = "true" if r.eat_word("true") else "false" if r.eat_word("false") \
            else r.number_text()
        r.expect(">")
        r.expect(":")
        t = r.type()
    elif r.at_word("true") or r.at_word("false"):
        lit = r.ident()
        t = IntType(1)
    else:
        lit = r.number_text()
        r.expect(":")
        t = r.type()
    return r.make(name, [], [t], {"value": r.literal(lit, t, lit_pos)})


SPECS = [
    op("arith.constant", attributes=[Attr("value", "any", REQUIRED)],
       traits=("pure", "constant_like"), custom=CustomSyntax(_print_constant, _parse_constant),
       doc="a scalar, or a splat tensor constant (value is a Python int/float/bool)"),
    op("arith.cmpi", ["lhs", "rhs"], attributes=[Attr("predicate", "enum", None)],
       traits=_PURE_ELEMENTWISE, format="$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs)",
       infer=i1_like_operand, verify=_compare_check(CMPI_PREDICATES),
       doc="integer compare -> i1"),
    op("arith.cmpf", ["lhs", "rhs"], attributes=[Attr("predicate", "enum", None)],
       traits=_PURE_ELEMENTWISE, format="$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs)",
       infer=i1_like_operand, verify=_compare_check(CMPF_PREDICATES),
       doc="float compare -> i1"),
    op("arith.select", ["condition", "true_value", "false_value"], traits=_PURE_ELEMENTWISE,
       custom=CustomSyntax(_print_select, _parse_select), verify=_select_check,
       doc="elementwise choose"),
]
for _n in BINARY_INT + BINARY_FLOAT:
    SPECS.append(op(
        "arith." + _n, ["lhs", "rhs"],
        traits=_PURE_ELEMENTWISE + ("same_operands_and_result_type",)
        + (("commutative",) if _n in _COMMUTATIVE else ()),
        format="$lhs `,` $rhs attr-dict `:` type($result)",
        verify=_binary_check(IntType if _n in BINARY_INT else FloatType),
        doc=f"elementwise {_n}"))
for _n in CASTS:
    SPECS.append(op("arith." + _n, ["in"], results=("out",), traits=_PURE_ELEMENTWISE,
                    format="$in attr-dict `:` type($in) `to` type($out)", verify=_cast_check,
                    doc=f"conversion {_n}"))
