"""``tritongpu-pipeline`` for tensor descriptor loads on Hopper: TMA copies issued ``S - 1``
iterations ahead into ``S`` shared-memory slots, each slot's arrival tracked by an mbarrier
(Triton 3.6 ``lib/Dialect/TritonGPU/Transforms/Pipeliner/LowerLoops.cpp``, the TMA part:
``createTMAAsyncLoad``, ``createTMABarrierAndWait``; PTX ISA 9.7.9.25.5.1
``cp.async.bulk.tensor``, 9.7.13.15 ``mbarrier``). Loads that follow each other with no
reader of their tiles in between share one barrier per slot (a matmul's A and B tiles);
attention's K and V tiles, read by different dots, get a barrier array each, each waited
for where its load was (:func:`barrier_groups`). Below, one group.

A K loop whose dot operands are ``tt.descriptor_load -> ttg.local_alloc`` (read by a
``ttng.warp_group_dot`` directly or through ``ttg.memdesc_trans``) whose coordinates are
affine in the loop (:mod:`.pipeline_analysis`: functions of the induction variable, of
loop-invariant values and of integers advanced by a loop-invariant step) becomes, with
``num_stages = S >= 2``::

    %a = ttg.local_alloc : () -> !ttg.memdesc<S x BM x BK, #shared, #smem, mutable>  // per load
    %bar = ttg.local_alloc : () -> !ttg.memdesc<S x 1 x i64, #shared1, #smem, mutable>
    ttng.init_barrier %bar[s], 1                          // s = 0 .. S-1
    // prologue, s = 0 .. S-2, p_s = (lb + s * step < ub):
    ttng.barrier_expect %bar[s], <bytes of all the stage's tiles>, %p_s
    ttng.async_tma_copy_global_to_local %desc[coords(lb + s * step)] %a[s], %bar[s], %p_s
    scf.for %iv ... {
      %i = (%iv - lb) / step
      ttng.wait_barrier %bar[i % S], (i / S) & 1           // the slot's tiles have landed
      %d = ttng.warp_group_dot %a[i % S], ... {isAsync = true}
      %w = ttng.warp_group_dot_wait %d {pendings = 1}       // iteration i - 1's group is done
      ttng.barrier_expect %bar[(i + S - 1) % S], bytes, (iv + (S - 1) * step < ub)
      ttng.async_tma_copy_global_to_local %desc[coords(iv + (S - 1) * step)] ...
    }
    ttng.warp_group_dot_wait {pendings = 0}; ttng.inval_barrier %bar[s]  // s = 0 .. S-1

Slot ``(i + S - 1) % S`` is ``(i - 1) % S``: the prefetch refills the slot the previous
iteration's wgmma read, at the end of the body (a fused nest's epilogue ``scf.if`` after it),
after the wait that finished it (:func:`.pipeline_wgmma.launch_async_dots`, run by the pass
afterwards, makes the wgmma asynchronous and places that wait). Barrier ``s`` completes
once per use of slot ``s``, so iteration ``i`` waits for phase parity ``(i / S) & 1``. The
copies of iterations past the end are predicated off (no bytes, no arrival; nothing waits for them).
In a loop nest fused by ``tritongpu-fuse-nested-loops`` the coordinates are functions of the
fused induction variable, so the copies of the next tile's first K steps are issued during
the current tile's last ones; the accumulator the loop carries is then ``select(%last,
%init, %acc)`` and the epilogue ``scf.if`` reads it after ``warp_group_dot_wait {pendings =
0}`` (:func:`.pipeline_wgmma.epilogue_if`), as in Triton.
:mod:`.insert_barriers` places the ``gpu.barrier`` ops (after ``init_barrier``, between the
wgmma wait and the refill). ``triton-nvidia-tma-lowering`` then gives each descriptor the
slots' shared encoding.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from ..ir.core import Operation, Value
from ..ir.types import MemDescType, i1, i32, i64
from ..layouts.encodings import NVMMASharedLayout, SwizzledSharedLayout
from .pipeline_analysis import Slicer, affine_iter_args
from .pipeline_common import advance_chains as _advance_chains
from .pipeline_common import ahead_pointers as _ahead_pointers
from .pipeline_common import binop_before as _binop
from .pipeline_common import clone_before as _clone
from .pipeline_common import const_before as _const
from .pipeline_common import dce_block as _dce
from .pipeline_common import issue_point
from .pipeline_common import shift_carried as _shift_carried
from .values import block_of, defining_op

#: the encoding of Triton's mbarrier arrays (``#ttg.swizzled_shared`` vec 1, order [0])
BARRIER_ENC = SwizzledSharedLayout(1, 1, 1, (0,))


@dataclass
class TmaCandidate:
    """A pipelinable descriptor load: the ``tt.descriptor_load``, the ``ttg.local_alloc`` of
    its tile, the body ops its coordinates depend on (topological order) and the affine iter
    args they read (``carried``, :class:`~.pipeline_analysis.Affine`)."""

    load: Operation
    alloc: Operation
    ops: list
    carried: list = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        """Bytes of the tile (what its TMA copy completes on the barrier)."""
        t = self.alloc.result.type
        assert isinstance(t, MemDescType)
        return prod(t.shape) * max(8, int(getattr(t.element, "width", 8))) // 8


def _wgmma_only(alloc: Operation) -> bool:
    """Every user of the alloc is a wgmma, or a ``memdesc_trans`` read only by wgmma."""
    users = [u for u, _ in alloc.result.uses]
    for u in users:
        if u.name == "ttg.memdesc_trans":
            if not all(w.name == "ttng.warp_group_dot" for w, _ in u.result.uses):
                return False
        elif u.name != "ttng.warp_group_dot":
            return False
    return bool(users)


def _check(load: Operation, body, iv, affine) -> tuple:
    """``(TmaCandidate | None, reason | None)`` for one ``tt.descriptor_load`` of the body."""
    uses = [u for u, _ in load.result.uses]
    if len(uses) != 1 or uses[0].name != "ttg.local_alloc" or uses[0].parent is not body:
        return None, "its tile is not stored to shared memory for the dot as loaded"
    alloc = uses[0]
    t = alloc.result.type
    if not isinstance(t, MemDescType) or not isinstance(t.encoding, NVMMASharedLayout) or \
            t.encoding.transposed or len(t.shape) != 2:
        return None, "its shared buffer is not an untransposed 2-D nvmma_shared one"
    if not _wgmma_only(alloc):
        return None, "its shared buffer is read by other ops than ttng.warp_group_dot"
    s = Slicer(body, iv, affine)
    if not s.add(load.operands[0], "descriptor"):
        return None, s.why
    for v in load.operands[1:]:
        if not s.add(v, "coordinate"):
            return None, s.why
    return TmaCandidate(load, alloc, s.ops, list(s.carried.values())), None


def find_tma_candidates(loop: Operation) -> tuple:
    """``(candidates, notes)``: the loop's pipelinable descriptor loads and one sentence per
    descriptor load feeding shared memory that is not pipelined."""
    body = loop.regions[0].block
    iv = body.args[0]
    affine = affine_iter_args(loop)
    cands, notes = [], []
    for op in list(body.ops):
        if op.name != "tt.descriptor_load":
            continue
        c, why = _check(op, body, iv, affine)
        if c is not None:
            cands.append(c)
        elif why is not None and any(u.name == "ttg.local_alloc" for u, _ in op.result.uses):
            name = op.result.name or "a tile"
            notes.append(f"the descriptor load of `{name}` was not pipelined: {why}.")
    return cands, notes


def _index(buf: Value, slot: Value, before: Operation, loc) -> Value:
    """``ttg.memdesc_index buf[slot]`` before ``before``."""
    t = buf.type
    assert isinstance(t, MemDescType)
    op = Operation("ttg.memdesc_index", [buf, slot],
                   [MemDescType(tuple(t.shape[1:]), t.element, t.encoding, True)], loc=loc)
    op.result.name = buf.name
    block_of(before).insert_before(before, op)
    return op.result


def _issue(group, bufs, bars, mapping, slot, pred, before, loc) -> None:
    """A barrier group's ``barrier_expect`` (all its tiles' bytes) and one TMA copy per load
    into ``slot``, coordinates cloned through ``mapping``, before ``before``. ``bufs``:
    ``id(load) -> buffer``."""
    bar = _index(bars, slot, before, loc)
    expect = Operation("ttng.barrier_expect", [bar, pred], [],
                       {"size": sum(c.nbytes for c in group)}, loc=loc)
    block_of(before).insert_before(before, expect)
    for c in group:
        _clone(c.ops, mapping, before)
        dst = _index(bufs[id(c.load)], slot, before, c.load.loc)
        coords = [mapping.get(id(v), v) for v in c.load.operands]
        copy = Operation("ttng.async_tma_copy_global_to_local", [*coords, dst, bar, pred], [],
                         loc=c.load.loc)
        block_of(before).insert_before(before, copy)


def barrier_groups(body, cands: list) -> list:
    """The loads that share one mbarrier per slot, as Triton 3.6 groups them
    (``LowerLoops.cpp``, ``createTMABarrierAndWait``): consecutive loads of the body, a group
    ending where an op reading an earlier member's buffer (the dot, a ``memdesc_trans``)
    comes first. Attention's K and V tiles, read by different dots, get a barrier each; a
    matmul's A and B tiles share one. Returns lists of candidates in program order."""
    by_load = {id(c.load): c for c in cands}
    seen: set = set()
    groups = []
    for c in sorted(cands, key=lambda c: body.ops.index(c.load)):
        if id(c.load) in seen:
            continue
        group, users = [c], {id(u) for u, _ in c.alloc.result.uses}
        seen.add(id(c.load))
        for op in body.ops[body.ops.index(c.load) + 1:]:
            if id(op) in users or id(op) in seen:
                break
            d = by_load.get(id(op))
            if d is not None:
                group.append(d)
                seen.add(id(op))
                users |= {id(u) for u, _ in d.alloc.result.uses}
        groups.append(group)
    return groups


def _allocs(loop: Operation, cands: list, groups: list, stages: int) -> tuple:
    """The ``S``-slot buffers (``id(load) -> buffer``, one per load) and one ``S x 1``
    mbarrier array per barrier group, before the loop, every barrier initialised to one
    arrival."""
    bufs = {}
    for c in cands:
        t = c.alloc.result.type
        a = Operation("ttg.local_alloc", [], [MemDescType((stages,) + tuple(t.shape),
                                                          t.element, t.encoding, True)],
                      loc=c.alloc.loc)
        a.result.name = c.load.result.name
        block_of(loop).insert_before(loop, a)
        bufs[id(c.load)] = a.result
    bars = []
    for group in groups:
        bars_op = Operation("ttg.local_alloc", [], [MemDescType((stages, 1), i64, BARRIER_ENC,
                                                                True)], loc=loop.loc)
        bars_op.result.name = group[0].load.result.name
        block_of(loop).insert_before(loop, bars_op)
        for s in range(stages):
            bar = _index(bars_op.result, _const(loop, s), loop, loop.loc)
            block_of(loop).insert_before(loop, Operation("ttng.init_barrier", [bar], [],
                                                         {"count": 1}, loc=loop.loc))
        bars.append(bars_op.result)
    return bufs, bars


def _read_slot(c: TmaCandidate, buf: Value, rd: Value) -> None:
    """Point the alloc's readers at slot ``rd`` of ``buf`` (indexed where the load was, as
    Triton places the extract) and drop the load and the alloc (a ``memdesc_trans`` view
    becomes a view of a mutable buffer)."""
    slot = _index(buf, rd, c.load, c.alloc.loc)
    c.alloc.result.replace_all_uses_with(slot)
    for u, _ in slot.uses:
        if u.name == "ttg.memdesc_trans":
            t = u.result.type
            assert isinstance(t, MemDescType)
            u.result.type = MemDescType(tuple(t.shape), t.element, t.encoding, True)
    c.alloc.erase()
    c.load.erase()


def pipeline_tma_loop(loop: Operation, stages: int, notes: list | None = None) -> bool:
    """Pipeline the descriptor loads of one ``scf.for`` (module docstring). Returns True when
    it was changed; ``notes`` receives a sentence per descriptor load left alone."""
    cands, why = find_tma_candidates(loop)
    if notes is not None:
        notes.extend(why)
    if not cands or stages < 2:
        return False
    body = loop.regions[0].block
    iv = body.args[0]
    lb, ub, step = loop.operands[:3]
    groups = barrier_groups(body, cands)
    bufs, bars = _allocs(loop, cands, groups, stages)
    chains = _advance_chains(loop, cands, stages)
    for s in range(stages - 1):  # prologue: iteration s into slot s
        iv_s = _binop(loop, "arith.addi", lb, _binop(loop, "arith.muli", step, _const(loop, s)))
        pred = _binop(loop, "arith.cmpi", iv_s, ub, i1)
        defining_op(pred).attributes["predicate"] = "slt"
        mapping = {id(iv): iv_s}
        mapping.update({k: ptrs[s] for k, (_, ptrs, _) in chains.items()})
        for group, bar in zip(groups, bars, strict=True):
            _issue(group, bufs, bar, mapping, _const(loop, s), pred, loop, loop.loc)
    first = body.ops[0]
    ahead_ptrs = _ahead_pointers(loop, chains, stages, first)
    i = _binop(first, "arith.divsi", _binop(first, "arith.subi", iv, lb), step)
    n_st = _const(first, stages)
    rd = _binop(first, "arith.remsi", i, n_st)
    phase = _binop(first, "arith.andi", _binop(first, "arith.divsi", i, n_st),
                   _const(first, 1))
    for group, bar in zip(groups, bars, strict=True):  # where the group's last load was
        last = group[-1].load
        wait = Operation("ttng.wait_barrier", [_index(bar, rd, last, loop.loc), phase], [],
                         loc=loop.loc)
        body.insert_before(last, wait)
    wr = _binop(first, "arith.remsi", _binop(first, "arith.addi", i, _const(first, stages - 1)),
                n_st)
    ahead = _binop(first, "arith.addi", iv, _binop(first, "arith.muli", step,
                                                   _const(first, stages - 1)))
    pred = _binop(first, "arith.cmpi", ahead, ub, i1)
    defining_op(pred).attributes["predicate"] = "slt"
    issue_at = issue_point(body)
    mapping = {id(iv): ahead}
    mapping.update(ahead_ptrs)
    for group, bar in zip(groups, bars, strict=True):
        _issue(group, bufs, bar, mapping, wr, pred, issue_at, loop.loc)
    for c in cands:
        _read_slot(c, bufs[id(c.load)], rd)
    after = block_of(loop).ops[block_of(loop).ops.index(loop) + 1:]
    anchor = after[0] if after else None
    for bar in reversed(bars):  # Triton releases the last group's barriers first
        _inval_all(loop, bar, stages, anchor)
    if anchor is not None:  # then frees barriers and buffers in reverse allocation order
        for buf in reversed([*bufs.values(), *bars]):
            block_of(loop).insert_before(anchor, Operation("ttg.local_dealloc", [buf], [],
                                                           loc=loop.loc))
    _dce(body)
    _shift_carried(loop, chains, ahead_ptrs)
    return True


def _inval_all(loop: Operation, bars: Value, stages: int, anchor) -> None:
    """``ttng.inval_barrier`` of every barrier before ``anchor`` (the op after the loop; the
    wgmma drain, added later, goes before them)."""
    blk = block_of(loop)
    if anchor is None:
        return
    for s in range(stages):
        c = Operation("arith.constant", [], [i32], {"value": s}, loc=loop.loc)
        blk.insert_before(anchor, c)
        bar = _index(bars, c.result, anchor, loop.loc)
        blk.insert_before(anchor, Operation("ttng.inval_barrier", [bar], [], loc=loop.loc))


__all__ = ["BARRIER_ENC", "TmaCandidate", "find_tma_candidates", "pipeline_tma_loop"]
