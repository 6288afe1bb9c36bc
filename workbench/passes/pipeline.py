"""``tritongpu-pipeline``: software pipelining of loops feeding ``tt.dot`` (``num_stages``).

A K loop after ``tritongpu-accelerate-matmul`` reads its operands as
``tt.load -> ttg.local_alloc -> ttg.local_load -> tt.dot``: every iteration waits for global
memory before the tensor cores can start. With ``num_stages = S >= 2`` each such load whose
address and mask are known for a future iteration (:mod:`.pipeline_analysis`: pure functions
of the induction variable, of loop-invariant values and of loop-carried pointers advanced by
a loop-invariant offset; ``other`` zero or absent) is turned into an asynchronous copy
issued ``S - 1`` iterations ahead into one of ``B`` shared-memory slots (Triton 3.6
``lib/Dialect/TritonGPU/Transforms/Pipeliner/``; PTX ISA 9.7.9.25 ``cp.async``,
``cp.async.commit_group``, ``cp.async.wait_group``). ``B = S - 1`` (Triton's ``stageDiff``)
when the operands are read into registers (``ttg.local_load``, mma.sync on sm_80), ``B = S``
when a ``ttng.warp_group_dot`` reads them from shared memory (wgmma may still be reading the
previous slot: Triton's ``loadRequiresAdditionalBuffer``). Each operand's copy is a commit
group of its own (A, then B), so waits count ``(S - 2) * operands`` groups. With ``B = S - 1``
(the mma.sync form)::

    %buf = ttg.local_alloc : () -> !ttg.memdesc<B x M x K x f16, #shared, #smem, mutable>
    // prologue: iterations s = 0 .. S-2, a group per operand; the mask says the iteration
    // exists: splat(lb + s * step < ub) [and the load's own mask]
    %ca_s = ttg.async_copy_global_to_local %a(iv = lb + s*step), %bufA[s % B] mask %m_s
    %ga_s = ttg.async_commit_group tokens %ca_s      // the same for b: %gb_s
    scf.for %iv ... iter_args(..., %ta_0 = %ga_0, .. %ta_{S-2} = %ga_{S-2}, %tb_0 = ...) {
      %i = (%iv - lb) / step
      %w = ttg.async_wait %ta_0, %tb_0 {num = (S - 2) * 2}  // iteration i's groups landed
      [gpu.barrier]                     // by tritongpu-insert-barriers: for every thread
      %a = ttg.local_load %bufA[i % B] token %w  // ldmatrix as before
      tt.dot ...
      [gpu.barrier]                     // every thread has read slot i % B ...
      %na = ttg.async_copy_global_to_local .. %bufA[(i + S - 1) % B] mask ..  // ... refilled
      %ga = ttg.async_commit_group tokens %na   // the same for b
      scf.yield ..., %ta_1, .., %ga, %tb_1, .., %gb
    }
    ttg.async_wait {num = 0}

The ``!ttg.async.token`` values are threaded as Triton 3.6 threads them (``LowerLoops.cpp``,
``createAsyncCopy``): the loop carries, per operand, the tokens of its ``S - 1`` groups in
flight, oldest first, so Triton's own parser reads the text.

With ``B = S`` (wgmma) the copies refill slot ``(i - 1) % S``, read in the previous
iteration (see Hopper below).

Loop-carried pointers (the Triton tutorial's ``a_ptrs += BLOCK_K * stride_ak``, an iter arg
``%p`` yielded as ``tt.addptr %p, %inc`` with ``%inc`` loop invariant): the prologue computes
``p_s = init + s * inc`` as a chain of ``tt.addptr`` (stage ``s`` copies from ``p_s``, with
the mask computed for ``iv = lb + s * step``). In the loop the prefetch of iteration
``i + S - 1`` needs ``p + (S - 1) * inc``: when nothing else reads ``%p`` and its final value
is unused, the loop carries the prefetch pointer itself (init ``p_{S-1}``, advanced by the
existing ``tt.addptr``, as Triton does), else it is recomputed at the top of the body. Masks
that read the induction variable (``offs_k < K - k * BLOCK_K``) are computed for iteration
``k + S - 1``; copies of iterations past the end are masked off (they zero-fill a slot
that nothing reads).

Last, on every loop of more than one stage (with a dot or not), tensor-descriptor stores write
one buffer allocated before the loop and wait for the previous copy only before the next
write (:mod:`.pipeline_tma_stores`, Triton's ``pipelineTMAStores``).

Loads of a dot's operands that cannot be pipelined are named, with the reason, in
:attr:`Pipeline.notes` (the CUDA backend copies them into ``extra["notes"]``).

**Hopper.** When a ``ttng.warp_group_dot`` reads a pipelined buffer, the copies of iteration
``i + S - 1`` go at the end of the body, after every dot (an ``scf.if`` no op uses, a fused
nest's epilogue, moves after them), as Triton's schedule orders them (``ScheduleLoops.cpp``:
the loads' cluster comes after the others, the epilogue's last): they refill slot
``(i - 1) % S``, which only the wgmma groups of iteration ``i - 1`` read.
:func:`.pipeline_wgmma.launch_async_dots` (run afterwards on every loop with a wgmma,
pipelined or not, as Triton runs ``asyncLaunchDots``) makes the dots asynchronous and places the
``ttng.warp_group_dot_wait`` ops that finish those groups before the copies: ``{pendings =
1}`` after a K loop's one dot, ``{pendings = 0}`` after attention's first dot (which also
finishes the previous iteration's second one), and ``{pendings = 0}`` after the loop.
A slot read by wgmma is indexed once, where its ``tt.load`` was (Triton's place for the
extract), a slot read by ``ttg.local_load`` right before each read.
:mod:`.insert_barriers` puts a ``gpu.barrier`` before the copies where a warp group may still
read the slot, in addition to the one after ``async_wait``.

The ``gpu.barrier`` ops are placed by :mod:`.insert_barriers` (run after this pass). The
copies are masked off past the last iteration, so nothing is left in flight but zero-fills
of unread slots; the final ``async_wait`` drains them anyway.

Ops (in the op catalogue, :mod:`workbench.ir.dialects.ttg`, as Triton 3.6 prints them):
``ttg.memdesc_index %buf[%i]`` (slot ``i`` of a multi-buffer), ``ttg.async_copy_global_to_
local %ptrs, %dst mask %m {contiguity}`` (Triton's ``getPredMask`` folds the stage's
predicate into the mask; a false mask element zero-fills), ``ttg.async_commit_group tokens``,
``ttg.async_wait %tokens {num}``, ``ttg.local_load %slot token %w``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.core import Operation, Value, functions
from ..ir.types import MemDescType, async_token, i1, like
from .manager import Pass
from .pipeline_analysis import Candidate, find_candidates, reads_by_wgmma
from .pipeline_common import add_iter_arg, increment_modulo, issue_point
from .pipeline_common import advance_chains as _advance_chains
from .pipeline_common import ahead_pointers as _ahead_pointers
from .pipeline_common import binop_before as _binop
from .pipeline_common import clone_before as _clone
from .pipeline_common import const_before as _const
from .pipeline_common import dce_block as _dce
from .pipeline_common import shift_carried as _shift_carried
from .pipeline_register_loads import route_through_shared
from .pipeline_tma import pipeline_tma_loop
from .pipeline_tma_stores import pipeline_tma_stores
from .pipeline_wgmma import launch_async_dots
from .values import block_of, defining_op, shaped_type


def candidates(loop: Operation) -> list:
    """The loop's pipelinable operand loads (:class:`~.pipeline_analysis.Candidate`)."""
    return find_candidates(loop)[0]


def _issue(cand: Candidate, buf, mapping: dict, slot, pred, before, loc) -> Value:
    """Clone the address (and mask) computation through ``mapping`` (the induction variable
    and the affine iter args of one stage), issue the async copy of that stage into
    ``buf[slot]`` before ``before`` and commit it as a group of its own. The stage's predicate
    ``pred`` (an i1: the iteration exists) is folded into the copy's mask as Triton's
    ``getPredMask`` does (``tt.splat`` of it, ``arith.andi`` with the load's mask): a copy of
    an iteration past the end zero-fills its slot, which nothing reads. Returns the group's
    ``!ttg.async.token``."""
    load, alloc = cand.load, cand.alloc
    _clone(cand.ops, mapping, before)
    blk = block_of(before)
    t = shaped_type(alloc.result)
    idx = Operation("ttg.memdesc_index", [buf, slot],
                    [MemDescType(tuple(t.shape), t.element, t.encoding, True)], loc=load.loc)
    blk.insert_before(before, idx)
    ptr = mapping.get(id(load.operands[0]), load.operands[0])
    mask = Operation("tt.splat", [pred], [like(ptr.type, i1)], loc=loc)
    blk.insert_before(before, mask)
    if len(load.operands) > 1:
        old = mapping.get(id(load.operands[1]), load.operands[1])
        mask = Operation("arith.andi", [mask.result, old], [old.type], loc=mask.loc)
        blk.insert_before(before, mask)
    attrs = {k: load.attributes[k] for k in ("cache", "evict") if k in load.attributes}
    if cand.contiguity > 1:
        attrs["contiguity"] = cand.contiguity
    copy = Operation("ttg.async_copy_global_to_local", [ptr, idx.result, mask.result],
                     [async_token], attrs, loc=load.loc)
    blk.insert_before(before, copy)
    commit = Operation("ttg.async_commit_group", [copy.result], [async_token], loc=load.loc)
    blk.insert_before(before, commit)
    copy.result.name = commit.result.name = load.result.name  # Triton names them so too
    return commit.result


def pipeline_loop(loop: Operation, stages: int, notes: list | None = None) -> bool:
    """Pipeline one ``scf.for`` (module docstring). Returns True when it was changed;
    ``notes`` (a list) receives one sentence per dot operand load that is not pipelined."""
    cands, why = find_candidates(loop)
    if notes is not None:
        notes.extend(why)
    if not cands or stages < 2:
        return False
    body = loop.regions[0].block
    iv = body.args[0]
    lb, ub, step = loop.operands[:3]
    nbuf = num_buffers(cands, stages)
    bufs = []
    for c in cands:
        t = c.alloc.result.type
        a = Operation("ttg.local_alloc", [], [MemDescType((nbuf,) + tuple(t.shape), t.element,
                                                          t.encoding, True)], loc=c.alloc.loc)
        a.result.name = c.alloc.result.name
        block_of(loop).insert_before(loop, a)
        bufs.append(a.result)
    chains = _advance_chains(loop, cands, stages)
    # prologue: stage s reads iteration s (iv = lb + s * step, carried pointers p_s)
    tokens: list = [[] for _ in cands]  # per operand, the group token of each stage
    for s in range(stages - 1):
        iv_s = _binop(loop, "arith.addi", lb, _binop(loop, "arith.muli", step, _const(loop, s)))
        pred = _binop(loop, "arith.cmpi", iv_s, ub, i1)
        defining_op(pred).attributes["predicate"] = "slt"
        slot = _const(loop, s % nbuf)
        mapping = {id(iv): iv_s}
        mapping.update({k: ptrs[s] for k, (_, ptrs, _) in chains.items()})
        for c, buf, toks in zip(cands, bufs, tokens, strict=True):  # a group per operand
            toks.append(_issue(c, buf, mapping, slot, pred, loop, loop.loc))
    # the buffer slots written and read are loop-carried i32 indices that wrap at nbuf, as
    # Triton carries them: the write index starts at the prologue's last slot, the read
    # index at -1 (each is advanced before use)
    ins_arg = add_iter_arg(loop, _const(loop, (stages - 2) % nbuf))
    ext_arg = add_iter_arg(loop, _const(loop, -1))
    # the loop carries every operand's S - 1 tokens of the groups in flight (Triton's form)
    carried = [[add_iter_arg(loop, t) for t in toks] for toks in tokens]
    # steady state, at the top of the body: prefetch iteration i + S - 1 if it exists,
    # i.e. iv < ub - (S - 1) * step
    first = body.ops[0]
    ahead_ptrs = _ahead_pointers(loop, chains, stages, first)
    last = _binop(first, "arith.subi", ub, _binop(first, "arith.muli", step,
                                                 _const(first, stages - 1)))
    pred = _binop(first, "arith.cmpi", iv, last, i1)
    defining_op(pred).attributes["predicate"] = "slt"
    rd = increment_modulo(first, ext_arg, nbuf)
    wait = Operation("ttg.async_wait", [args[0] for args in carried], [async_token],
                     {"num": (stages - 2) * len(cands)}, loc=loop.loc)
    wait.result.name = cands[0].load.result.name
    body.insert_before(first, wait)
    issue_at = issue_point(body) if nbuf == stages else body.terminator
    assert issue_at is not None
    wr = increment_modulo(issue_at, ins_arg, nbuf)
    ahead = _binop(issue_at, "arith.addi", iv, _binop(issue_at, "arith.muli", step,
                                                      _const(issue_at, stages - 1)))
    mapping = {id(iv): ahead}
    mapping.update(ahead_ptrs)
    yield_op = body.terminator
    assert yield_op is not None and yield_op.name == "scf.yield"
    yield_op.add_operand(wr)
    yield_op.add_operand(rd)
    for c, buf, args in zip(cands, bufs, carried, strict=True):
        new = _issue(c, buf, mapping, wr, pred, issue_at, loop.loc)
        for v in args[1:] + [new]:
            yield_op.add_operand(v)
    for c, buf in zip(cands, bufs, strict=True):
        _read_slots(c, buf, rd, wait.result)
    blk = block_of(loop)
    at = blk.ops.index(loop) + 1
    blk.insert(at, Operation("ttg.async_wait", [], [async_token], {"num": 0}, loc=loop.loc))
    for k, buf in enumerate(reversed(bufs)):  # freed in reverse order, as Triton's ttgir
        blk.insert(at + 1 + k, Operation("ttg.local_dealloc", [buf], [], loc=loop.loc))
    _dce(body)
    _shift_carried(loop, chains, ahead_ptrs)
    return True


def _read_slots(c: Candidate, buf: Value, rd: Value, token: Value) -> None:
    """Point the users of ``c``'s single buffer at slot ``rd`` of the multi-buffer ``buf``
    (a ``local_load`` also names the wait's ``token``) and drop the original load. Slots
    read by wgmma (no ``local_load``) are indexed once, where the load was (Triton's place
    for the extract)."""
    t = shaped_type(c.alloc.result)
    if not any(u.name == "ttg.local_load" for u in c.users):
        idx = Operation("ttg.memdesc_index", [buf, rd],
                        [MemDescType(tuple(t.shape), t.element, t.encoding, True)],
                        loc=c.alloc.loc)
        block_of(c.load).insert_before(c.load, idx)
        c.alloc.result.replace_all_uses_with(idx.result)
        for u in c.users:  # a transposed view of the slot is mutable as the slot is
            if u.name == "ttg.memdesc_trans":
                ut = u.result.type
                u.result.type = MemDescType(tuple(ut.shape), ut.element, ut.encoding, True)
        c.alloc.erase()
        c.load.erase()
        return
    for u in c.users:
        idx = Operation("ttg.memdesc_index", [buf, rd],
                        [MemDescType(tuple(t.shape), t.element, t.encoding, True)], loc=u.loc)
        block_of(u).insert_before(u, idx)
        for j, o in enumerate(list(u.operands)):
            if o is c.alloc.result:
                u.set_operand(j, idx.result)
        if u.name == "ttg.local_load" and len(u.operands) == 1:
            u.add_operand(token)
    c.alloc.erase()
    c.load.erase()


def num_buffers(cands: list, stages: int) -> int:
    """Buffers per pipelined operand: ``stages - 1`` (the distance between the copy and the
    use, Triton's ``stageDiff``), one more when an operand feeds a ``ttng.warp_group_dot``
    straight from shared memory (wgmma still reads the slot of the previous iteration; Triton
    3.6 ``LowerLoops.cpp``: ``loadRequiresAdditionalBuffer``)."""
    wgmma = any(reads_by_wgmma(c.users) for c in cands)
    return stages if wgmma else max(1, stages - 1)


@dataclass
class Pipeline(Pass):
    """The ``tritongpu-pipeline`` pass. Options: ``num_stages`` (buffers per pipelined load;
    < 2 leaves loops alone). A loop's own ``tt.num_stages`` attribute (``tl.range(...,
    num_stages=S)``; 1 on the remainder loop of ``loop_unroll_factor``) takes the place of
    the option for that loop, as Triton's ``getNumStagesOrDefault``."""

    name = "tritongpu-pipeline"
    num_stages: int = 3
    #: filled by :meth:`run`: one sentence per dot operand load of a K loop that was not
    #: pipelined although ``num_stages > 1`` (the backend copies them to ``extra["notes"]``).
    notes: list = field(default_factory=list, compare=False, repr=False)

    def run(self, module: Operation, ctx=None) -> None:
        self.notes = []
        for func in functions(module):
            for op in list(func.walk()):
                if op.name != "scf.for":
                    continue
                ops = op.regions[0].block.ops
                has_dot = any(o.name in ("tt.dot", "ttng.warp_group_dot") for o in ops)
                stages = int(op.attributes.get("tt.num_stages", self.num_stages))
                if stages < 2 or not (has_dot or "tt.num_stages" in op.attributes):
                    continue
                tma = any(o.name == "tt.descriptor_load" for o in ops)
                if not tma:  # loads read in registers that Triton pipelines too
                    route_through_shared(op)
                if not tma or not pipeline_tma_loop(op, stages, self.notes):
                    pipeline_loop(op, stages, self.notes)
            for op in list(func.walk()):  # Triton's asyncLaunchDots, on every loop
                if op.name == "scf.for" and \
                        int(op.attributes.get("tt.num_stages", self.num_stages)) >= 1:
                    launch_async_dots(op)
            for op in list(func.walk()):  # Triton's pipelineTMAStores
                if op.name == "scf.for" and \
                        int(op.attributes.get("tt.num_stages", self.num_stages)) > 1:
                    pipeline_tma_stores(op)

    @property
    def options(self) -> dict:
        return {"num_stages": self.num_stages}


__all__ = ["Pipeline", "pipeline_loop", "candidates", "find_candidates", "num_buffers"]
