"""Typed access to the IR for the passes: the tensor type of a value, the block holding an
op, the op defining a value. Each raises when the IR is not what the pass expects (a pass
bug, never a user error), instead of failing later with an AttributeError on None."""
from __future__ import annotations

from ..ir.core import Block, Operation, Value
from ..ir.types import MemDescType, TensorType


def tensor_type(v: Value) -> TensorType:
    """``v.type`` of a tensor value. Raises TypeError for any other type."""
    t = v.type
    if not isinstance(t, TensorType):
        raise TypeError(f"expected a tensor value, got {t}")
    return t


def shaped_type(v: Value) -> TensorType | MemDescType:
    """``v.type`` of a tensor or a shared-memory descriptor (both have ``shape``, ``element``
    and ``encoding``). Raises TypeError for any other type."""
    t = v.type
    if not isinstance(t, (TensorType, MemDescType)):
        raise TypeError(f"expected a tensor or memory descriptor value, got {t}")
    return t


def block_of(op: Operation) -> Block:
    """The block holding ``op``. Raises ValueError for an op outside any block."""
    if op.parent is None:
        raise ValueError(f"{op.name} is not inside a block")
    return op.parent


def defining_op(v: Value) -> Operation:
    """The op whose result ``v`` is. Raises ValueError for a block argument."""
    d = v.defining_op
    if d is None:
        raise ValueError(f"{v!r} is a block argument, not an op result")
    return d


def inside(block: Block | None, loop: Operation) -> bool:
    """True when ``block`` is nested (at any depth) in ``loop``'s regions."""
    while block is not None:
        owner = block.parent.parent if block.parent is not None else None
        if owner is None:
            return False
        if owner is loop:
            return True
        block = owner.parent
    return False


def defined_outside(v: Value, loop: Operation) -> bool:
    """True when ``v`` (an op result or a block argument) is defined outside ``loop``."""
    d = v.defining_op
    return not inside(d.parent if d is not None else v.owner, loop)
