"""The op catalogue: one :class:`~workbench.ir.dialects.spec.OpSpec` per op, by dialect.

Names, operands, attributes and syntax follow Triton 3.6 and MLIR's upstream dialects, so what a
learner reads here is what Triton prints. :data:`OPS` maps each op name to its spec; the
printer, the parser and the verifier are derived from it (see
:mod:`workbench.ir.dialects.spec`). Adding an op: add its spec to the dialect's ``SPECS`` list
and give it a meaning in each backend.
"""
from __future__ import annotations

from . import arith, builtin, gpu, llvm, math, scf, tt, tt_regions, ttg, ttng, ub
from .arith import BINARY_FLOAT, BINARY_INT, CASTS, CMPF_PREDICATES, CMPI_PREDICATES
from .math import UNARY_MATH
from .spec import Attr, CustomSyntax, OpSpec, registry
from .tt import INPUT_PRECISIONS

#: every op the compiler knows: name -> spec
OPS: dict[str, OpSpec] = registry(builtin.SPECS, tt.SPECS, tt_regions.SPECS, arith.SPECS,
                                  math.SPECS, scf.SPECS, ttg.SPECS, ttng.SPECS, gpu.SPECS,
                                  ub.SPECS, llvm.SPECS)

__all__ = ["OPS", "OpSpec", "Attr", "CustomSyntax", "BINARY_INT", "BINARY_FLOAT", "CASTS",
           "UNARY_MATH", "CMPI_PREDICATES", "CMPF_PREDICATES", "INPUT_PRECISIONS"]
