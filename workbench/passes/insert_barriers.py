"""``tritongpu-insert-barriers``: ``gpu.barrier`` (``bar.sync 0``) only where two shared-memory
accesses of different threads could race, as Triton's membar analysis
(``lib/Analysis/Membar.cpp``; PTX ISA 9.7.13.1 ``bar.sync`` orders the shared-memory accesses
of the CTA's threads).

Each op reads and writes byte intervals of ``global_smem``, from the offsets of
``tritongpu-allocate-shared-memory`` (run first):

* ``ttg.local_alloc`` with a source and ``ttg.local_store`` write their buffer;
  ``ttg.local_load`` and ``ttng.warp_group_dot`` read theirs (a memdesc is traced back through
  views and loop-carried values to its ``local_alloc``; one that cannot be traced counts as
  all of shared memory);
* an op with scratch (a layout conversion, a reduction across warps, ...) writes and reads
  its scratch interval; its own store-barrier-load sequence is the code generator's;
* ``ttg.async_copy_global_to_local`` writes its slot asynchronously: it waits like a write for
  earlier accesses (write-after-read), and its bytes become a pending write at the
  ``ttg.async_wait`` that lets them land; an asynchronous ``ttng.warp_group_dot`` is a read
  still in progress until ``ttng.warp_group_dot_wait``;
* the TMA ops of a tensor descriptor (``triton-nvidia-tma-lowering``, :mod:`.pipeline_tma`):
  ``ttng.init_barrier`` and ``inval_barrier`` (thread 0) write their mbarrier; such writes
  are kept apart (``mbar``): two of them need no barrier between them (one thread), anything
  else touching the bytes does (``init`` must be seen by every thread before they use the
  mbarrier, ``inval`` must wait until every thread is done with it). ``wait_barrier`` reads
  it. The copy checks its mbarrier operand against those writes but leaves no read behind
  (a wait follows it); arrivals, byte completions and waits are ordered by the mbarrier
  itself (PTX ISA 9.7.13.15: a copy may complete its bytes before the expecting arrival).
  ``barrier_expect`` (thread 0 re-arms the mbarrier for its next phase) waits for earlier
  reads (every thread has seen the previous phase complete) and leaves no access behind.
  The copy writes its tile asynchronously (like ``ttg.async_copy_global_to_local``) and every
  thread waits on the mbarrier itself, so ``wait_barrier`` ends the pending copies without a
  barrier (the data is visible to each waiting thread). ``ttng.async_tma_copy_local_to_global``
  (and ``ttng.async_tma_reduce``) reads its tile now and keeps reading it (like an
  asynchronous wgmma) until ``ttng.async_tma_store_wait``. Triton 3.6's membar treats the
  mbarrier ops as plain accesses and puts a ``bar.sync`` between each two of them; these are
  the ones it needs.

The analysis keeps the intervals read and written since the last barrier; an op that reads
bytes pending a write (read-after-write) or writes bytes pending a read or a write
(write-after-read, write-after-write) gets a barrier before it, which clears both sets. Loops
iterate their body to a fixed point (the state entering the body joins the state before the
loop and at the end of the body, the back edge), ``scf.if`` joins its branches, so a hazard
across a back edge or a branch is found too. Running the pass twice adds nothing.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..ir.core import Operation, functions
from ..ir.types import MemDescType
from .allocate_shared import buffer_bytes
from .manager import Pass

ALL = (0, 1 << 62)
EMPTY: frozenset = frozenset()
_LOOPS = {"scf.for", "scf.while"}


@dataclass(frozen=True)
class State:
    """Byte intervals ``(start, end)`` read and written since the last barrier, written by
    copies in flight, and read by asynchronous wgmma in flight."""

    reads: frozenset = EMPTY
    writes: frozenset = EMPTY
    copies: frozenset = EMPTY
    wgmma: frozenset = EMPTY
    #: mbarriers written by thread 0 (``init_barrier``, ``inval_barrier``)
    mbar: frozenset = EMPTY

    def join(self, other: State) -> State:
        return State(self.reads | other.reads, self.writes | other.writes,
                     self.copies | other.copies, self.wgmma | other.wgmma,
                     self.mbar | other.mbar)


def _hit(a, b) -> bool:
    return any(x0 < y1 and y0 < x1 for x0, x1 in a for y0, y1 in b)


class Membar:
    """The analysis over one function; ``scratch(op)``: the op's scratch bytes."""

    def __init__(self, scratch: Callable[[Operation], int] | None):
        self.scratch = scratch
        self.added = 0

    # what an op touches -----------------------------------------------------------------------
    def interval(self, v, depth: int = 0) -> tuple:
        """Bytes of the buffer that memdesc value ``v`` views (ALL when unknown)."""
        op = v.defining_op
        if depth > 16:
            return ALL
        if op is None:  # a loop-carried memdesc: the loop's init operand
            block = v.owner
            loop = block.parent.parent if block.parent is not None else None
            if loop is not None and loop.name == "scf.for" and v.index >= 1:
                return self.interval(loop.operands[3 + v.index - 1], depth + 1)
            return ALL
        if op.name == "ttg.local_alloc":
            if "allocation.offset" not in op.attributes:
                return ALL
            start = int(op.attributes["allocation.offset"])
            return start, start + buffer_bytes(op.result.type)
        src = [o for o in op.operands if isinstance(o.type, MemDescType)]
        if src:
            return self.interval(src[0], depth + 1)
        return ALL

    def _scratch(self, op: Operation) -> frozenset:
        if op.name == "ttg.local_alloc" or "allocation.offset" not in op.attributes:
            return EMPTY
        start = int(op.attributes["allocation.offset"])
        n = self.scratch(op) if self.scratch is not None else ALL[1] - start
        return frozenset({(start, start + n)}) if n else EMPTY

    def effects(self, op: Operation) -> tuple[frozenset, frozenset]:
        """``(reads, writes)`` of ``op`` that take effect now (not the async ones)."""
        name = op.name
        mem = [self.interval(o) for o in op.operands if isinstance(o.type, MemDescType)]
        if name in _TMA_EFFECTS:
            return _TMA_EFFECTS[name](mem)
        if name == "ttg.local_load" or (name == "ttng.warp_group_dot"
                                        and not op.attributes.get("isAsync")):
            return frozenset(mem), EMPTY
        if name == "ttg.local_store" or (name == "ttg.local_alloc" and op.operands):
            own = [self.interval(op.result)] if name == "ttg.local_alloc" else mem
            return EMPTY, frozenset(own)
        s = self._scratch(op)
        return s, s

    # the walk ---------------------------------------------------------------------------------
    def needs_barrier(self, op: Operation, st: State) -> bool:
        if op.name == "ttg.async_copy_global_to_local":
            dst = frozenset(self.interval(o) for o in op.operands
                            if isinstance(o.type, MemDescType))
            return _hit(dst, st.reads | st.writes | st.mbar)
        if op.name == "ttng.async_tma_copy_global_to_local":
            mem = [self.interval(o) for o in op.operands if isinstance(o.type, MemDescType)]
            return _hit({mem[0]}, st.reads | st.writes | st.mbar) or \
                _hit({mem[1]}, st.writes | st.mbar)
        if op.name in ("ttng.init_barrier", "ttng.inval_barrier", "ttng.barrier_expect"):
            own = {self.interval(op.operands[0])}
            return _hit(own, st.reads | st.writes)
        rd, wr = self.effects(op)
        if st.mbar:
            return _hit(rd, st.writes | st.mbar) or _hit(wr, st.reads | st.writes | st.mbar)
        if op.name == "ttng.warp_group_dot" and op.attributes.get("isAsync"):
            rd = frozenset(self.interval(o) for o in op.operands
                           if isinstance(o.type, MemDescType))
        return _hit(rd, st.writes) or _hit(wr, st.reads | st.writes)

    def after(self, op: Operation, st: State, insert: bool) -> State:
        """The state after ``op`` (its barrier, if any, already applied)."""
        name = op.name
        if name == "gpu.barrier":
            return State(copies=st.copies, wgmma=st.wgmma)
        if name == "ttng.barrier_expect":
            return st
        if name in ("ttng.init_barrier", "ttng.inval_barrier"):
            own = frozenset({self.interval(op.operands[0])})
            return State(st.reads, st.writes, st.copies, st.wgmma, st.mbar | own)
        if name in _LOOPS:
            return self.loop(op, st, insert)
        if name == "scf.if":
            outs = [self.block(r.blocks[0], st, insert) for r in op.regions if r.blocks]
            res = st if len(outs) < 2 else State()
            for o in outs:
                res = res.join(o)
            return res
        if name == "ttg.async_copy_global_to_local":
            dst = frozenset(self.interval(o) for o in op.operands
                            if isinstance(o.type, MemDescType))
            return State(st.reads, st.writes, st.copies | dst, st.wgmma, st.mbar)
        if name == "ttg.async_wait":
            keep = st.copies if int(op.attributes.get("num", 0)) > 0 else EMPTY
            return State(st.reads, st.writes | st.copies, keep, st.wgmma, st.mbar)
        if (name == "ttng.warp_group_dot" and op.attributes.get("isAsync")) or \
                name in ("ttng.async_tma_copy_local_to_global", "ttng.async_tma_reduce"):
            rd = frozenset(self.interval(o) for o in op.operands
                           if isinstance(o.type, MemDescType))
            return State(st.reads | rd, st.writes, st.copies, st.wgmma | rd, st.mbar)
        if name == "ttng.async_tma_copy_global_to_local":
            mem = [self.interval(o) for o in op.operands if isinstance(o.type, MemDescType)]
            return State(st.reads, st.writes, st.copies | {mem[0]}, st.wgmma, st.mbar)
        if name == "ttng.wait_barrier":
            return State(st.reads | {self.interval(op.operands[0])}, st.writes, EMPTY,
                         st.wgmma, st.mbar)
        if name in ("ttng.async_tma_store_wait", "ttng.warp_group_dot_wait"):
            keep = st.wgmma if int(op.attributes.get("pendings", 0)) > 0 else EMPTY
            return State(st.reads | st.wgmma, st.writes, st.copies, keep, st.mbar)
        rd, wr = self.effects(op)
        return State(st.reads | rd, st.writes | wr, st.copies, st.wgmma, st.mbar)

    def block(self, block, st: State, insert: bool) -> State:
        for op in list(block.ops):
            if self.needs_barrier(op, st):
                if insert:
                    block.insert_before(op, Operation("gpu.barrier", [], [], loc=op.loc))
                    self.added += 1
                st = State(copies=st.copies, wgmma=st.wgmma)
            st = self.after(op, st, insert)
        return st

    def _body(self, loop: Operation, st: State, insert: bool) -> State:
        for region in loop.regions:
            for b in region.blocks:
                st = self.block(b, st, insert)
        return st

    def loop(self, loop: Operation, entry: State, insert: bool) -> State:
        state = entry
        for _ in range(8):
            nxt = entry.join(self._body(loop, state, False))
            if nxt == state:
                break
            state = nxt
        return entry.join(self._body(loop, state, insert))


#: reads and writes (byte intervals) of the TMA ops that take effect now, from the intervals of
#: their memdesc operands in order
_TMA_EFFECTS: dict[str, Callable[[list], tuple[frozenset, frozenset]]] = {
    "ttng.wait_barrier": lambda m: (frozenset(m), EMPTY),
    "ttng.async_tma_copy_local_to_global": lambda m: (frozenset(m), EMPTY),
    "ttng.async_tma_reduce": lambda m: (frozenset(m), EMPTY),
}


def insert_barriers(func: Operation, scratch: Callable[[Operation], int] | None = None) -> int:
    """Insert the barriers of ``func`` (module docstring); returns how many were added.
    ``scratch``: bytes of scratch an op needs (None: an op with an ``allocation.offset``
    counts as using everything above it)."""
    m = Membar(scratch)
    m.block(func.regions[0].blocks[0], State(), True)
    return m.added


@dataclass
class InsertBarriers(Pass):
    """The ``tritongpu-insert-barriers`` pass. ``scratch``: the backend's scratch bytes of an
    op (see :mod:`.allocate_shared`)."""

    name = "tritongpu-insert-barriers"
    scratch: Callable[[Operation], int] | None = field(default=None, repr=False)

    def run(self, module: Operation, ctx=None) -> None:
        for func in functions(module):
            insert_barriers(func, self.scratch)


__all__ = ["InsertBarriers", "Membar", "State", "insert_barriers"]
