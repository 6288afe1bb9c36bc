"""The preparation and helpers of ``tritongpu-fuse-nested-loops`` (:mod:`.fuse_nested_loops`
describes the pass; Triton 3.6 ``FuseNestedLoops.cpp``): which nests are fusable, hoisting
the inner loop's bounds, moving epilogue-only work, the guard for an empty inner loop, and
placeholder values of carried types."""
from __future__ import annotations

from ..ir.attrs import UNIT
from ..ir.clone import clone_op
from ..ir.core import Block, Operation, Value
from ..ir.types import FloatType, IntType, PointerType, TensorType, i1
from .effects import is_pure
from .values import block_of, defined_outside

FLATTEN = "tt.flatten"
MUST_EXECUTE = "ttg.must-execute"


def inner_loop(outer: Operation) -> Operation | None:
    """The one ``scf.for`` directly in ``outer``'s body when the nest is fusable (no other
    ``scf.for`` there, none inside it), else None."""
    body = outer.regions[0].block
    loops = [op for op in body.ops if op.name == "scf.for"]
    if len(loops) != 1:
        return None
    if any(op.name == "scf.for" for op in loops[0].walk() if op is not loops[0]):
        return None
    return loops[0]


def _scalar(t) -> bool:
    return isinstance(t, (IntType, FloatType, PointerType))


def hoistable(outer: Operation, values, ops: list, seen: set) -> bool:
    """Collect in ``ops`` (topological order) the ops of ``outer``'s body computing
    ``values`` when all are pure scalar ops of values defined before ``outer`` (Triton's
    ``canHoistLoopBoundComputation``); False when one is not."""
    for v in values:
        if defined_outside(v, outer):
            continue
        d = v.defining_op
        if d is None or d.parent is not outer.regions[0].block or d.regions or \
                not is_pure(d) or not all(_scalar(r.type) for r in d.results) or \
                not all(_scalar(o.type) for o in d.operands):
            return False
        if id(d) in seen:
            continue
        if not hoistable(outer, d.operands, ops, seen):
            return False
        seen.add(id(d))
        ops.append(d)
    return True


def _top(op: Operation, block: Block) -> Operation | None:
    """The ancestor of ``op`` (or ``op``) directly in ``block``, or None."""
    top: Operation | None = op
    while top is not None and top.parent is not block:
        top = top.parent_op()
    return top


def sink_epilogue_only(outer: Operation, inner: Operation) -> None:
    """Move the pure prologue ops whose results are read only after the inner loop into the
    epilogue, keeping their order (Triton's ``optimizeEpilogueDependencies``)."""
    body = outer.regions[0].block
    idx = body.ops.index(inner)
    sunk: list = []
    ids: set = set()
    for op in reversed(body.ops[:idx]):
        if op.regions or not is_pure(op) or op.name == "tt.dot":
            continue
        users = [_top(u, body) for r in op.results for u, _ in r.uses]
        if all(u is not None and (id(u) in ids or body.ops.index(u) > idx) for u in users):
            sunk.append(op)
            ids.add(id(op))
    for op in reversed(sunk):
        body.ops.remove(op)
        body.insert(body.ops.index(inner) + 1 + sunk[::-1].index(op), op)


def _const(before: Operation, value, t) -> Value:
    op = Operation("arith.constant", [], [t], {"value": value}, loc=before.loc)
    block_of(before).insert_before(before, op)
    return op.result


def _op(before: Operation, name: str, operands, t, **attrs) -> Value:
    op = Operation(name, list(operands), [t], attrs, loc=before.loc)
    block_of(before).insert_before(before, op)
    return op.result


def _trip_count(before: Operation, lb: Value, ub: Value, step: Value) -> Value:
    """``(ub - lb + step - 1) / step`` before ``before`` (a positive constant ``step``)."""
    t = lb.type
    diff = _op(before, "arith.subi", [ub, lb], t)
    s = int(step.defining_op.attributes["value"])  # type: ignore[union-attr]
    return _op(before, "arith.divsi", [_op(before, "arith.addi", [diff, _const(before, s - 1, t)],
                                           t), step], t)


def _positive_const(v: Value) -> bool:
    d = v.defining_op
    return d is not None and d.name == "arith.constant" and \
        isinstance(d.attributes.get("value"), int) and d.attributes["value"] > 0


def placeholder(before: Operation, t) -> Value | None:
    """A value of type ``t`` that is never read before it is written (Triton's
    ``createPoisonOrZero``: zero for numbers, ``ub.poison`` for pointers and tensors of
    pointers), or None."""
    elem = t.element if isinstance(t, TensorType) else t
    if isinstance(elem, (IntType, FloatType)):
        zero = 0.0 if isinstance(elem, FloatType) else (False if elem == i1 else 0)
        return _const(before, zero, t)
    if isinstance(elem, PointerType):
        op = Operation("ub.poison", [], [t], loc=before.loc)
        block_of(before).insert_before(before, op)
        return op.result
    return None


def _replace_outside(v: Value, new: Value, region_op: Operation) -> None:
    """Replace the uses of ``v`` that are not nested in ``region_op``."""
    for u, i in list(v.uses):
        if u is not region_op and not _nested_in(u, region_op):
            u.set_operand(i, new)


def _nested_in(op: Operation, anc: Operation) -> bool:
    p = op.parent_op()
    while p is not None:
        if p is anc:
            return True
        p = p.parent_op()
    return False


def speculate(outer: Operation, inner: Operation) -> bool:
    """Hoist the inner loop's bounds before the nest and guard it: ``scf.if len_j <= 0``
    runs a copy of the nest without the inner loop, the ``else`` the nest, whose inner loop
    is then marked ``ttg.must-execute``. False (nothing changed) when the bounds cannot be
    hoisted or a step is not a positive constant."""
    ops: list = []
    if not all(_positive_const(v) for v in (outer.operands[2], inner.operands[2])) or \
            not hoistable(outer, inner.operands[:3], ops, set()):
        return False
    blk = block_of(outer)
    for op in ops:
        op.parent.ops.remove(op)  # type: ignore[union-attr]
        blk.insert_before(outer, op)
    n = _trip_count(outer, *inner.operands[:3])
    empty = _op(outer, "arith.cmpi", [n, _const(outer, 0, n.type)], i1, predicate="sle")
    guard = Operation("scf.if", [empty], [r.type for r in outer.results], regions=2,
                      loc=outer.loc)
    blk.insert_before(outer, guard)
    for r, g in zip(outer.results, guard.results, strict=True):
        r.replace_all_uses_with(g)
    then = guard.regions[0].add_block()
    vmap: dict = {}
    copy = clone_op(outer, vmap)
    then.append(copy)
    dead = vmap[id(inner.results[0])].defining_op if inner.results else None
    dead = dead or next(op for op in copy.regions[0].block.ops if op.name == "scf.for")
    for r, init in zip(dead.results, dead.operands[3:], strict=True):
        r.replace_all_uses_with(init)
    dead.erase()
    results = _fold_idle(copy)
    then.append(Operation("scf.yield", results, [], loc=outer.loc))
    other = guard.regions[1].add_block()
    blk.ops.remove(outer)
    other.append(outer)
    other.append(Operation("scf.yield", list(outer.results), [], loc=outer.loc))
    inner.attributes[MUST_EXECUTE] = UNIT
    return True


def _fold_idle(loop: Operation) -> list:
    """The results of ``loop``; a loop whose body only yields its iter args unchanged (as the
    nest copy without its inner loop often is) is erased and its inits are the results (what
    Triton's canonicalizer does after the pass)."""
    body = loop.regions[0].block
    if len(body.ops) != 1 or list(body.ops[0].operands) != body.args[1:]:
        return list(loop.results)
    inits = list(loop.operands[3:])
    for r, v in zip(loop.results, inits, strict=True):
        r.replace_all_uses_with(v)
    loop.erase()
    return inits


def _outputs(ops: list, later) -> list:
    """Results of ``ops`` read by an op for which ``later(op)`` holds."""
    return [r for op in ops for r in op.results if any(later(u) for u, _ in r.uses)]


__all__ = ["FLATTEN", "MUST_EXECUTE", "inner_loop", "hoistable", "sink_epilogue_only",
           "speculate", "placeholder"]
