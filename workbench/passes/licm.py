"""Loop-invariant code motion (``triton-licm``), as Triton 3.6 runs it in ``make_ttgir`` right
before the software pipeliner (``lib/Dialect/Triton/Transforms/LoopInvariantCodeMotion.cpp``,
built on MLIR's ``moveLoopInvariantCode``).

Loops are visited innermost first (an op hoisted out of an inner loop lands in the outer loop's
body and may leave that loop too). In each loop body, an op moves to just before the loop when
every value it uses (its operands and the values its regions read from outside) is defined
outside the loop and

- it is side-effect free and speculatable: pure ops, except integer divisions and remainders
  whose divisor is not a constant known to be safe (non-zero; for signed ones also not -1),
  and region ops other than ``tt.reduce``/``tt.scan`` (MLIR treats ``scf.if`` and loops as not
  speculatable);
- or it is a non-volatile ``tt.load`` in an ``scf.for`` whose whole body only reads memory
  (no stores, atomics, allocations, barriers or prints). Such a load would run once even when
  the loop runs zero times, so its mask gains the loop's entry condition ``lb < ub``
  (``arith.cmpi slt``, splat to the pointer's shape and and-ed with the old mask).

Ops move in the order they are found, so the hoisted code keeps its program order. The
pipeliner then sees only the per-iteration work in the loop (the address increments and the
loads), as in Triton's pipelined ttgir.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ..ir.core import Block, Operation
from ..ir.dialects import OPS
from ..ir.types import TensorType, i1
from .canonicalize import const_value
from .effects import TERMINATORS, is_pure
from .manager import Pass
from .values import block_of, defined_outside, inside

LOOPS = ("scf.for", "scf.while")
#: region ops that are pure and speculatable (their bodies are combiners)
_SPECULATABLE_REGION_OPS = frozenset({"tt.reduce", "tt.scan"})
_DIVISIONS = frozenset({"arith.divsi", "arith.divui", "arith.remsi", "arith.remui",
                        "arith.ceildivsi", "arith.ceildivui", "arith.floordivsi"})


def _used_values(op: Operation):
    """The operands of ``op`` and of every op nested in its regions."""
    for inner in op.walk():
        yield from inner.operands


def _invariant(op: Operation, loop: Operation) -> bool:
    """Every value ``op`` reads from outside itself comes from outside ``loop``."""
    return all(defined_outside(v, loop) or inside(block_of(v.defining_op)
                                                   if v.defining_op is not None else v.owner,
                                                   op)
               for v in _used_values(op))


def _safe_divisor(op: Operation) -> bool:
    """An integer division or remainder cannot trap: a constant divisor, non-zero, and not -1
    for the signed forms (MLIR's ``getSpeculatability`` of arith's division ops)."""
    d = const_value(op.operands[1])
    if d is None or d == 0:
        return False
    return not (op.name in ("arith.divsi", "arith.remsi", "arith.ceildivsi", "arith.floordivsi")
                and d == -1)


def speculatable(op: Operation) -> bool:
    """Side-effect free and safe to run when the loop would not have (see the module doc)."""
    if op.name in TERMINATORS or not is_pure(op):
        return False
    if op.regions and op.name not in _SPECULATABLE_REGION_OPS:
        return False
    return op.name not in _DIVISIONS or _safe_divisor(op)


def _only_reads(op: Operation) -> bool:
    """``op`` and everything nested in it read memory at most (no write, free, allocation and
    no op of unknown effects)."""
    for inner in op.walk():
        if inner is op and inner.name in LOOPS:
            continue
        spec = OPS.get(inner.name)
        if spec is None or inner.name == "tt.call":
            return False
        if any(not e.startswith("read:") for e in spec.effects):
            return False
        if inner.name == "tt.load" and inner.attributes.get("isVolatile"):
            return False
    return True


def _guard_load(load: Operation, loop: Operation) -> None:
    """Give ``load`` (about to leave ``loop``, an scf.for) the mask ``mask & (lb < ub)``."""
    block = block_of(loop)
    lb, ub = loop.operands[0], loop.operands[1]
    cond = Operation("arith.cmpi", [lb, ub], [i1], {"predicate": "slt"}, loc=loop.loc)
    block.insert_before(loop, cond)
    pred = cond.result
    ptr_t = load.operands[0].type
    if isinstance(ptr_t, TensorType):
        mask_t = TensorType(ptr_t.shape, i1, ptr_t.encoding)
        splat = Operation("tt.splat", [pred], [mask_t], loc=loop.loc)
        block.insert_before(loop, splat)
        pred = splat.result
    if len(load.operands) > 1:
        both = Operation("arith.andi", [load.operands[1], pred], [pred.type], loc=loop.loc)
        block.insert_before(loop, both)
        load.set_operand(1, both.result)
    else:
        load.add_operand(pred)


def _body_blocks(loop: Operation) -> list[Block]:
    return [b for r in loop.regions for b in r.blocks]


def hoist_from(loop: Operation) -> int:
    """Move ``loop``'s invariant ops to just before it; returns how many moved."""
    blocks = _body_blocks(loop)
    reads_only: bool | None = None
    work = deque(op for b in blocks for op in b.ops)
    moved = 0
    while work:
        op = work.popleft()
        if op.parent not in blocks or not _invariant(op, loop):
            continue
        if op.name == "tt.load":
            if loop.name != "scf.for" or op.attributes.get("isVolatile"):
                continue
            if reads_only is None:
                reads_only = _only_reads(loop)
            if not reads_only:
                continue
            _guard_load(op, loop)
        elif not speculatable(op):
            continue
        op.parent.ops.remove(op)
        block_of(loop).insert_before(loop, op)
        moved += 1
        work.extend(user for r in op.results for user, _ in r.uses if user.parent in blocks)
    return moved


def _loops_innermost_first(op: Operation) -> list[Operation]:
    out: list[Operation] = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                out += _loops_innermost_first(inner)
    if op.name in LOOPS:
        out.append(op)
    return out


@dataclass
class LoopInvariantCodeMotion(Pass):
    """Hoist loop-invariant ops out of ``scf.for``/``scf.while`` bodies (see the module doc).
    No options."""

    name = "triton-licm"

    def run(self, module: Operation, ctx=None) -> None:
        for loop in _loops_innermost_first(module):
            hoist_from(loop)

