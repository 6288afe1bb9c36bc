"""Narrowing IR types and blocks for the CPU lowering: the verifier guarantees what these
check, so a failure here is a bug in an earlier pass, reported as an AssertionError."""
from __future__ import annotations

from ...ir.core import Block, Operation
from ...ir.types import PointerType, TensorType, Type


def tensor_of(t: Type) -> TensorType:
    """``t`` as a :class:`TensorType` (a tile-valued operand or result)."""
    assert isinstance(t, TensorType), f"expected a tensor type, got {t}"
    return t


def pointee(t: Type) -> Type:
    """The element type that a pointer type, or a tensor of pointers, points to."""
    p = t.scalar
    assert isinstance(p, PointerType), f"expected a pointer type, got {t}"
    return p.pointee


def terminator_of(block: Block) -> Operation:
    """The last op of ``block`` (``scf.yield``, ``scf.condition``)."""
    op = block.terminator
    assert op is not None, "a region block without a terminator"
    return op
