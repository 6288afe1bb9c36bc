"""``tritongpu-pipeline``: software pipelining of loops feeding ``tt.dot`` (``num_stages``).

A K loop after ``tritongpu-accelerate-matmul`` reads its operands as
``tt.load -> ttg.local_alloc -> ttg.local_load -> tt.dot``: every iteration waits for global
memory before the tensor cores can start. With ``num_stages = S >= 2`` each such load (its
address computed from the induction variable and loop-invariant values only, no mask or a
mask with a zero/absent ``other``) is turned into an asynchronous copy into one of ``S``
shared-memory buffers, issued ``S - 1`` iterations ahead (reference 5.2 step 2; Triton 3.6
``Pipeliner/``; PTX ISA 9.7.9.25 ``cp.async``, ``cp.async.commit_group``,
``cp.async.wait_group``)::

    %buf = ttg.local_alloc : () -> !ttg.memdesc<S x M x K x f16, #shared, #smem, mutable>
    // prologue: iterations 0 .. S-2, predicated on lb + s * step < ub
    ttg.async_copy_global_to_local %ptr(iv = lb + s*step), %buf[s], %pred ; ttg.async_commit_group
    scf.for %iv ... {
      %i = (%iv - lb) / step
      ttg.async_wait {num = S - 2}      // the group of iteration i has landed (this thread)
      [gpu.barrier]                     // by tritongpu-insert-barriers: for every thread;
                                        // and slot (i-1) % S is free again
      ttg.async_copy_global_to_local %ptr(iv + (S-1)*step), %buf[(i + S - 1) % S], %pred
      ttg.async_commit_group            // one group per iteration (possibly empty)
      %a = ttg.local_load %buf[i % S]   // ldmatrix as before
      tt.dot ...
    }
    ttg.async_wait {num = 0}

The ``gpu.barrier`` is placed by :mod:`.insert_barriers` (run after this pass). One
``bar.sync`` per iteration does both jobs (visibility of the landed copies, and no
thread still reading the slot about to be overwritten, which was read in the previous
iteration). The copies are predicated off past the last iteration, so nothing is left in
flight but empty groups; the final ``async_wait`` drains them anyway.

New ops (registered in the op catalogue on import; Triton's names, without async tokens):
``ttg.memdesc_index %buf, %i`` (slot ``i`` of a multi-buffer), ``ttg.async_copy_global_to_
local %ptrs, %dst, %pred[, %mask]`` (``%pred`` an ``i1`` scalar guarding the whole copy: our
addition, Triton folds it into the mask; a false mask element zero-fills),
``ttg.async_commit_group``, ``ttg.async_wait {num}``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation, Value, functions
from ..ir.types import MemDescType, TensorType, i1, i32
from .effects import is_pure
from .manager import Pass



def _const(before: Operation, value, t=i32) -> Value:
    op = Operation("arith.constant", [], [t], {"value": value}, loc=before.loc)
    before.parent.insert_before(before, op)
    return op.result


def _binop(before: Operation, name: str, a: Value, b: Value, t=i32) -> Value:
    op = Operation(name, [a, b], [t], loc=before.loc)
    before.parent.insert_before(before, op)
    return op.result


def _slice(value: Value, body, iv: Value, ops: list, seen: set) -> bool:
    """Collect (in ``ops``, topological order) the body ops ``value`` depends on. False when it
    depends on an iter arg other than ``iv`` or on an op that is not pure."""
    d = value.defining_op
    if d is None:
        return value is iv or value.owner is not body
    if d.parent is not body:
        return True  # defined outside the loop (the body has no nested blocks we descend)
    if id(d) in seen:
        return True
    if not is_pure(d) or d.regions:
        return False
    seen.add(id(d))
    if not all(_slice(v, body, iv, ops, seen) for v in d.operands):
        return False
    ops.append(d)
    return True


def _clone(ops: list, mapping: dict, before: Operation) -> None:
    for op in ops:
        new = Operation(op.name, [mapping.get(id(v), v) for v in op.operands],
                        [r.type for r in op.results], dict(op.attributes), loc=op.loc)
        for r, nr in zip(op.results, new.results):
            nr.name = r.name
            mapping[id(r)] = nr
        before.parent.insert_before(before, new)


def _is_zero(v: Value) -> bool:
    d = v.defining_op
    return d is not None and d.name == "arith.constant" and d.attributes.get("value") in (0, 0.0)


def candidates(loop: Operation) -> list:
    """``(load, alloc, [local_load...], slice ops)`` of the loop's pipelinable operand loads."""
    body = loop.regions[0].block
    iv = body.args[0]
    out = []
    for alloc in body.ops:
        if alloc.name != "ttg.local_alloc" or not alloc.operands:
            continue
        load = alloc.operands[0].defining_op
        if load is None or load.name != "tt.load" or load.parent is not body or \
                len(load.result.uses) != 1 or load.attributes.get("isVolatile"):
            continue
        if len(load.operands) == 3 and not _is_zero(load.operands[2]):
            continue
        users = [u for u, _ in alloc.result.uses]
        if not users or any(u.name != "ttg.local_load" for u in users):
            continue
        if not isinstance(load.operands[0].type, TensorType):
            continue
        ops, seen = [], set()
        if all(_slice(v, body, iv, ops, seen) for v in load.operands[:2]):
            out.append((load, alloc, users, ops))
    return out


def _issue(loop, cand, buf, iv_value, slot, pred, before) -> None:
    """Clone the address (and mask) computation with the induction variable = ``iv_value``
    and issue the async copy of one stage into ``buf[slot]`` before ``before``."""
    load, alloc, _, ops = cand
    iv = loop.regions[0].block.args[0]
    mapping = {id(iv): iv_value}
    _clone(ops, mapping, before)
    t = alloc.result.type
    idx = Operation("ttg.memdesc_index", [buf, slot],
                    [MemDescType(tuple(t.shape), t.element, t.encoding, True)], loc=load.loc)
    before.parent.insert_before(before, idx)
    operands = [mapping.get(id(load.operands[0]), load.operands[0]), idx.result, pred]
    if len(load.operands) > 1:
        operands.append(mapping.get(id(load.operands[1]), load.operands[1]))
    before.parent.insert_before(before, Operation("ttg.async_copy_global_to_local", operands,
                                                  [], loc=load.loc))


def pipeline_loop(loop: Operation, stages: int) -> bool:
    """Pipeline one ``scf.for`` (module docstring). Returns True when it was changed."""
    cands = candidates(loop)
    if not cands or stages < 2:
        return False
    body = loop.regions[0].block
    iv = body.args[0]
    lb, ub, step = loop.operands[:3]
    bufs = []
    for _, alloc, _, _ in cands:
        t = alloc.result.type
        a = Operation("ttg.local_alloc", [], [MemDescType((stages,) + tuple(t.shape), t.element,
                                                          t.encoding, True)], loc=alloc.loc)
        a.result.name = alloc.result.name
        loop.parent.insert_before(loop, a)
        bufs.append(a.result)
    # prologue
    for s in range(stages - 1):
        iv_s = _binop(loop, "arith.addi", lb, _binop(loop, "arith.muli", step, _const(loop, s)))
        pred = _binop(loop, "arith.cmpi", iv_s, ub, i1)
        pred.defining_op.attributes["predicate"] = "slt"
        slot = _const(loop, s)
        for c, buf in zip(cands, bufs):
            _issue(loop, c, buf, iv_s, slot, pred, loop)
        loop.parent.insert_before(loop, Operation("ttg.async_commit_group", [], [], loc=loop.loc))
    # steady state, at the top of the body
    first = body.ops[0]
    i = _binop(first, "arith.divsi", _binop(first, "arith.subi", iv, lb), step)
    n_st = _const(first, stages)
    rd = _binop(first, "arith.remsi", i, n_st)
    wr = _binop(first, "arith.remsi", _binop(first, "arith.addi", i, _const(first, stages - 1)),
                n_st)
    ahead = _binop(first, "arith.addi", iv, _binop(first, "arith.muli", step,
                                                   _const(first, stages - 1)))
    pred = _binop(first, "arith.cmpi", ahead, ub, i1)
    pred.defining_op.attributes["predicate"] = "slt"
    body.insert_before(first, Operation("ttg.async_wait", [], [], {"num": stages - 2},
                                        loc=loop.loc))
    for c, buf in zip(cands, bufs):
        _issue(loop, c, buf, ahead, wr, pred, first)
    body.insert_before(first, Operation("ttg.async_commit_group", [], [], loc=loop.loc))
    for (load, alloc, users, _), buf in zip(cands, bufs):
        for u in users:
            t = alloc.result.type
            idx = Operation("ttg.memdesc_index", [buf, rd],
                            [MemDescType(tuple(t.shape), t.element, t.encoding, True)],
                            loc=u.loc)
            body.insert_before(u, idx)
            u.set_operand(0, idx.result)
        alloc.erase()
        load.erase()
    blk = loop.parent
    blk.insert(blk.ops.index(loop) + 1, Operation("ttg.async_wait", [], [], {"num": 0},
                                                  loc=loop.loc))
    _dce(body)
    return True


def _dce(block) -> None:
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.ops)):
            if op.results and not any(r.uses for r in op.results) and is_pure(op) and \
                    not op.regions:
                op.erase()
                changed = True


@dataclass
class Pipeline(Pass):
    """The ``tritongpu-pipeline`` pass. Options: ``num_stages`` (buffers per pipelined load;
    < 2 leaves loops alone)."""

    name = "tritongpu-pipeline"
    num_stages: int = 3

    def run(self, module: Operation, ctx=None) -> None:
        if self.num_stages < 2:
            return
        for func in functions(module):
            for op in list(func.walk()):
                if op.name == "scf.for" and any(o.name == "tt.dot" for o in
                                                op.regions[0].block.ops):
                    pipeline_loop(op, self.num_stages)


__all__ = ["Pipeline", "pipeline_loop", "candidates"]
