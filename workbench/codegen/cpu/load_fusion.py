"""Load fusion in the CPU lowering: which tile loads are read inside the loop of the store
that consumes them instead of being copied into a scratch buffer first.

A tile load is normally materialised (:func:`.memory.lower_load`): one loop copies the tile
into the worker's scratch arena, and the consumer's loop reads it back. For a streaming
kernel (``tl.store(o + offs, tl.load(x + offs) + tl.load(y + offs))``) that is three passes
over the data instead of one, and the scratch copies cost about as much as the arithmetic
saves. A load is *deferred* (read per element in the store's loop) when the value it gives
cannot change between the load and the store:

- the load is not volatile, and its tile flows through a chain of single-use elementwise ops
  of the same block into the *value* operand of one ``tt.store`` (a view op on the way,
  ``tt.broadcast``, ``tt.trans``..., would read the load at another index than the store
  writes: such loads stay materialised);
- the store walks the same contiguous run as the load (:mod:`.access`), so the fused loop
  reads and writes consecutive elements (decided in :func:`.memory.lower_load`);
- no op between the load and the store (in block order) may write memory: no store, atomic,
  call or inline asm, and no op whose regions hold one.

The store itself writes while the fused loop still reads. That is harmless when the store's
pointer tile is the load's own (same SSA value: element ``i`` is read before it is written,
and by no one else); otherwise the lowering tests at run
time that the arrays the two pointers may come from do not overlap, and falls back to the
materialised load when they do (:func:`.memory.lower_store`). Bounds checks stay at the
load's position, so an out-of-bounds load is still reported before anything after it runs.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir.core import Operation
from ...ir.types import TensorType
from .scalar_ops import ELEMENTWISE

#: ops that may write memory (or run code that does)
WRITES = {"tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.call",
          "tt.elementwise_inline_asm", "tt.descriptor_store", "tt.descriptor_reduce"}


@dataclass(frozen=True)
class Fusion:
    """A deferred ``load`` read inside ``store``'s loop. ``same_pointer``: the store writes
    through the load's own pointer tile (no run-time overlap test needed)."""

    load: Operation
    store: Operation
    same_pointer: bool


def _may_write(op: Operation) -> bool:
    return any(inner.name in WRITES for inner in op.walk())


def _consumer(load: Operation) -> Operation | None:
    """The store whose value ``load`` feeds through single-use elementwise ops of its block,
    or None."""
    v = load.result
    while True:
        uses = list(v.uses)
        if len(uses) != 1:
            return None
        user, index = uses[0]
        if user.parent is not load.parent:
            return None
        if user.name == "tt.store":
            return user if index == 1 else None
        if user.name not in ELEMENTWISE or len(user.results) != 1 or not isinstance(
                user.results[0].type, TensorType):
            return None
        v = user.results[0]


def fusions(func: Operation) -> dict:
    """``{load op: Fusion}`` for every tile load of ``func`` that can be deferred into the
    store consuming it (rules in the module docstring)."""
    out: dict = {}
    for op in func.walk():
        if op.name != "tt.load" or not isinstance(op.result.type, TensorType):
            continue
        if op.attributes.get("isVolatile"):
            continue
        store = _consumer(op)
        if store is None:
            continue
        assert op.parent is not None
        ops = op.parent.ops
        i, j = ops.index(op), ops.index(store)
        if any(_may_write(x) for x in ops[i + 1:j]):
            continue
        out[op] = Fusion(op, store, store.operands[0] is op.operands[0])
    return out
