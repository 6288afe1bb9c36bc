"""Side effects of ops, shared by CSE, DCE and canonicalize (a helper, not a pass), read from
the ops' specs (:mod:`workbench.ir.dialects`: ``effects`` and the ``terminator`` trait).

``is_pure(op)``: no memory effects and no other observable behaviour; two pure ops with the
same name, operands, attributes and result types compute the same values (CSE may merge them).
``is_removable(op)``: may be deleted when its results are unused (pure ops, non-volatile loads,
region ops whose bodies are removable), as MLIR's ``wouldOpBeTriviallyDead``.
"""
from __future__ import annotations

from ..ir.core import Operation
from ..ir.dialects import OPS
from ..ir.types import MemDescType

#: Ops with memory or other side effects (their specs write or free memory, or do I/O), and the
#: function and module ops; never merged, never removed.
SIDE_EFFECTS = frozenset({n for n, s in OPS.items() if s.writes} | {"tt.func", "builtin.module"})
#: Ops that read (or allocate) memory and write none: removable when unused (unless volatile) but
#: never merged by CSE.
READS = frozenset(n for n, s in OPS.items() if s.reads)
#: Terminators: never removed by DCE.
TERMINATORS = frozenset(n for n, s in OPS.items() if "terminator" in s.traits)


def _body_ops(op: Operation):
    for region in op.regions:
        for block in region.blocks:
            yield from block.ops


def _impure_extern(op: Operation) -> bool:
    """A ``tt.extern_elementwise`` or ``tt.elementwise_inline_asm`` whose ``pure`` attribute
    is False."""
    return op.name in ("tt.extern_elementwise", "tt.elementwise_inline_asm") and \
        op.attributes.get("pure") is False


def _body_all(op: Operation, pred) -> bool:
    """True when ``pred`` holds for every op of ``op``'s regions but the terminators."""
    return all(inner.name in TERMINATORS or pred(inner) for inner in _body_ops(op))


def _immutable_alloc(op: Operation) -> bool:
    """A ``ttg.local_alloc`` of a value into an immutable buffer not yet placed in shared
    memory (no ``allocation.offset``): Triton 3.6 gives it no memory effect until the
    allocation pass runs (``LocalAllocOp::getEffects``), so CSE merges two of the same value
    and LICM hoists one whose value is loop invariant."""
    if op.name != "ttg.local_alloc" or not op.operands or "allocation.offset" in op.attributes:
        return False
    t = op.results[0].type
    return isinstance(t, MemDescType) and not t.mutable


def is_pure(op: Operation) -> bool:
    """True when ``op`` (and everything in its regions) has no side effects and reads no memory.

    ``tt.extern_elementwise`` and ``tt.elementwise_inline_asm`` are pure unless their ``pure``
    attribute is False; an immutable ``ttg.local_alloc`` of a value before shared memory is
    allocated is pure (:func:`_immutable_alloc`)."""
    name = op.name
    if _immutable_alloc(op):
        return True
    if name in SIDE_EFFECTS or name in READS or name in TERMINATORS or _impure_extern(op):
        return False
    return _body_all(op, is_pure)


def is_removable(op: Operation) -> bool:
    """True when ``op`` may be erased once its results are unused."""
    name = op.name
    if name in SIDE_EFFECTS or name in TERMINATORS or _impure_extern(op):
        return False
    if name == "tt.load" and op.attributes.get("isVolatile"):
        return False
    if name == "scf.while":  # may not terminate; keep it
        return False
    return _body_all(op, is_removable)


def is_trivially_dead(op: Operation) -> bool:
    """Removable and none of its results is used."""
    return is_removable(op) and all(not r.uses for r in op.results)
