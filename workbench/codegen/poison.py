"""LLVM's ``poison`` constant, which llvmlite does not spell (it has ``undef`` only): the
lowering of ``ub.poison`` in both code generators (LLVM Language Reference, "Poison Values")."""
from __future__ import annotations

from llvmlite import ir


class Poison(ir.Constant):
    """``poison`` of LLVM type ``typ``: any value may stand for it, and LLVM may fold what
    uses it."""

    def __init__(self, typ: ir.Type):
        super().__init__(typ, ir.Undefined)

    def _get_reference(self) -> str:
        return "poison"
