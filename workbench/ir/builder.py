"""Building IR: an insertion point and a current source location.

Every pass and the frontend create ops through :class:`Builder`, so each op gets a location.
"""
from __future__ import annotations

from contextlib import contextmanager

from .core import UNKNOWN, Block, Location, Operation, Value
from .types import Type


class Builder:
    """Creates ops at an insertion point (a block and an index in it).

    ``loc`` is the location given to new ops; the frontend moves it from statement to
    statement (``with builder.at_loc(loc): ...``).
    """

    def __init__(self, block: Block | None = None, index: int | None = None,
                 loc: Location = UNKNOWN):
        self.block = block
        self.index = index  # None: append at the end
        self.loc = loc

    # insertion point -------------------------------------------------------------------------
    def set_insertion_point_to_end(self, block: Block) -> None:
        self.block, self.index = block, None

    def set_insertion_point_before(self, op: Operation) -> None:
        block = _parent_block(op)
        self.block, self.index = block, block.ops.index(op)

    def set_insertion_point_after(self, op: Operation) -> None:
        block = _parent_block(op)
        self.block, self.index = block, block.ops.index(op) + 1

    @contextmanager
    def at_end_of(self, block: Block):
        saved = (self.block, self.index)
        self.set_insertion_point_to_end(block)
        try:
            yield self
        finally:
            self.block, self.index = saved

    @contextmanager
    def at_loc(self, loc: Location):
        saved = self.loc
        self.loc = loc
        try:
            yield self
        finally:
            self.loc = saved

    # creation --------------------------------------------------------------------------------
    def insert(self, op: Operation) -> Operation:
        if self.block is None:
            raise RuntimeError("builder has no insertion point")
        if self.index is None:
            self.block.append(op)
        else:
            self.block.insert(self.index, op)
            self.index += 1
        return op

    def create(self, name: str, operands=(), result_types=(), attributes=None, regions: int = 0,
               loc: Location | None = None, result_name: str | None = None) -> Operation:
        """Create ``name`` at the insertion point; returns the op (``op.result`` for one result)."""
        op = Operation(name, list(operands), list(result_types), attributes, regions,
                       loc or self.loc)
        if result_name is not None:
            for r in op.results:
                r.name = result_name
        return self.insert(op)

    def value(self, name: str, operands=(), result_type: Type | None = None,
              attributes=None) -> Value:
        """Create a one-result op and return its result."""
        return self.create(name, operands, [result_type], attributes).result


def _parent_block(op: Operation) -> Block:
    if op.parent is None:
        raise RuntimeError(f"{op.name} is not in a block; cannot insert next to it")
    return op.parent
