"""``tritongpu-insert-barriers``: ``gpu.barrier`` (``bar.sync 0``) between shared-memory
accesses of different threads that could race (Triton's membar analysis,
``lib/Analysis/Membar.cpp``; PTX ISA 9.7.13.1 ``bar.sync`` orders the shared-memory accesses
of the CTA's threads).

The explicit buffers (``ttg.local_alloc``/``local_store``/``local_load``, the pipeline's
``ttg.async_copy_global_to_local``/``async_wait``) are treated as one resource, so buffers that
share bytes after ``tritongpu-allocate-shared-memory``'s reuse are safe. The state at each
point is four flags: reads since the last barrier, writes since the last barrier, async
copies not yet waited for, and asynchronous wgmma reads not yet waited for.

* a read (``local_load``) after writes needs a barrier (read-after-write);
* a write (``local_alloc`` with a source, ``local_store``) or an async copy after reads or
  writes needs a barrier (write-after-read, write-after-write);
* ``async_wait`` turns copies in flight into writes (this thread's copies have landed; other
  threads see them only after a barrier);
* ``gpu.barrier`` clears reads and writes;
* an asynchronous ``ttng.warp_group_dot`` (Hopper wgmma left in flight) is a read that is
  still going on; ``ttng.warp_group_dot_wait`` turns the groups it waits for into finished
  reads of this thread, so the next write waits at a barrier for every warp group's wait.
  Writes while a group is still in flight are allowed: the pipeline pass only writes slots
  that the in-flight group does not read.

Loops iterate the analysis of their body to a fixed point (the state entering the body is the
join of the state before the loop and at the end of the body), then insert; ``scf.if`` joins
its branches. For the pipelined K loop this gives exactly one barrier per iteration, after
``async_wait`` and before the next copies. Scratch space of reductions and conversions is the
code generator's (after ``ttg.shared``) and synchronised there.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation, functions
from .manager import Pass

_READS = {"ttg.local_load", "ttng.warp_group_dot"}
_WRITES = {"ttg.local_store"}


def _join(a: tuple, b: tuple) -> tuple:
    return tuple(x or y for x, y in zip(a, b, strict=False))


def _needs_barrier(op: Operation, rd: bool, wr: bool) -> bool:
    """Whether ``op`` must wait for the shared-memory reads (``rd``) or writes (``wr``) still
    pending since the last barrier: a read after a write, a write after either."""
    name = op.name
    if name in _READS:
        return wr
    if name in _WRITES or (name == "ttg.local_alloc" and op.operands) or \
            name == "ttg.async_copy_global_to_local":
        return rd or wr
    return False


def _after(op: Operation, state: tuple, insert: bool) -> tuple:
    """The state ``(reads, writes, copies in flight, async wgmma reads in flight)`` after
    ``op``, given the state before it (barrier already placed)."""
    rd, wr, fly, rfly = state
    name = op.name
    if name == "gpu.barrier":
        rd = wr = False
    elif name == "ttng.warp_group_dot" and op.attributes.get("isAsync"):
        rfly = True
    elif name in _READS:
        rd = True
    elif name == "ttng.warp_group_dot_wait":
        rd = rd or rfly
        rfly = rfly and int(op.attributes.get("pendings", 0)) > 0
    elif name == "ttg.async_copy_global_to_local":
        fly = True
    elif name == "ttg.async_wait":
        wr = wr or fly
        fly = fly and int(op.attributes.get("num", 0)) > 0
    elif name in _WRITES or (name == "ttg.local_alloc" and op.operands):
        wr = True
    elif name == "scf.for":
        return _loop(op, (rd, wr, fly, rfly), insert)
    elif name == "scf.if":
        outs = [_block(r.blocks[0], (rd, wr, fly, rfly), insert) for r in op.regions
                if r.blocks]
        st = (rd, wr, fly, rfly) if len(outs) < 2 else (False, False, False, False)
        for o in outs:
            st = _join(st, o)
        return st
    return rd, wr, fly, rfly


def _block(block, state: tuple, insert: bool) -> tuple:
    rd, wr, fly, rfly = state
    for op in list(block.ops):
        if _needs_barrier(op, rd, wr):
            if insert:
                block.insert_before(op, Operation("gpu.barrier", [], [], loc=op.loc))
            rd = wr = False
        rd, wr, fly, rfly = _after(op, (rd, wr, fly, rfly), insert)
    return rd, wr, fly, rfly


def _loop(loop: Operation, entry: tuple, insert: bool) -> tuple:
    body = loop.regions[0].blocks[0]
    state = entry
    for _ in range(4):
        end = _block(body, state, False)
        nxt = _join(entry, end)
        if nxt == state:
            break
        state = nxt
    end = _block(body, state, insert)
    return _join(entry, end)


def insert_barriers(func: Operation) -> int:
    """Insert the barriers of ``func`` (module docstring); returns how many were added."""
    before = sum(1 for op in func.walk() if op.name == "gpu.barrier")
    _block(func.regions[0].blocks[0], (False, False, False, False), True)
    return sum(1 for op in func.walk() if op.name == "gpu.barrier") - before


@dataclass
class InsertBarriers(Pass):
    """The ``tritongpu-insert-barriers`` pass (no options)."""

    name = "tritongpu-insert-barriers"

    def run(self, module: Operation, ctx=None) -> None:
        for func in functions(module):
            insert_barriers(func)


__all__ = ["InsertBarriers", "insert_barriers"]
