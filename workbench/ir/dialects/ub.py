"""MLIR's ``ub`` dialect op Triton 3.6 prints in ttir: ``ub.poison``, the value of a ``@jit``
function's result on a path that returns nothing (``code_generator.py`` ends such a function
with ``ret(create_poison(type))``). Any value may stand for it; the backends give zeros, LLVM
IR prints ``poison``."""
from __future__ import annotations

from .spec import op

SPECS = [
    op("ub.poison", traits=("pure",), format="attr-dict `:` type($result)",
       doc="an unspecified value of the result type"),
]
