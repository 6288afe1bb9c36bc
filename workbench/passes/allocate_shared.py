"""``allocate-shared-memory``: byte offsets of the kernel's shared-memory buffers, by liveness.

Two kinds of buffer share the dynamic ``global_smem`` array, as in Triton's Allocation
analysis (``lib/Analysis/Allocation.cpp``, run by ``allocate-shared-memory-nv`` in
``make_llir`` of ``third_party/nvidia/backend/compiler.py``):

* **explicit** buffers, one per ``ttg.local_alloc`` result: ``bytes = numel * bits / 8``,
  aligned to the encoding's alignment (``#ttg.nvmma_shared``: ``128 * maxPhase`` with
  ``maxPhase = swizzlingByteWidth / 16``; every other shared encoding: 16 bytes). A buffer
  is live from its ``local_alloc`` to the last op that uses it or a view of it
  (``ttg.memdesc_index`` and other ops that return a view of a memdesc operand, and values
  a loop carries); a use inside a loop keeps it live to the end of that loop;
* **scratch** buffers of ops that exchange data between threads through shared memory
  (layout conversions, reductions and scans across warps, gathers, ...), sized by the code
  generator's ``scratch`` function (passed to the pass; without one there are none),
  128-byte aligned, live during their op only.

Ops are numbered in post-order (a loop gets a higher number than the ops in its body, so a
value used in a loop stays live over the whole loop). Offsets come from Triton's two steps:
``calculate_starts`` (buffers by decreasing size take the lowest start that one live
neighbour leaves free; the "triples" of the paper "Algorithms for Compile-Time Memory
Optimization", Gergov 1999) and first-fit colouring of the interference graph (buffers whose
byte ranges and live ranges both overlap), repeated until no two buffers interfere.

Results: ``allocation.offset`` on every ``local_alloc`` and every op with scratch, and the
module attribute ``ttg.shared`` (bytes, the kernel's ``shared`` metadata). Kernels above 48 KB
get the dynamic shared-memory limit raised by the launcher
(``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..ir.core import Operation, functions
from ..ir.types import FloatType, IntType, MemDescType
from ..layouts.encodings import NVMMASharedLayout
from .manager import Pass

#: alignment of scratch buffers (Triton ``getScratchValueSize``: ``scratchAlignment``)
SCRATCH_ALIGN = 128
#: alignment of explicit buffers without a stricter one (``SharedEncodingTrait::getAlignment``)
DEFAULT_ALIGN = 16

ScratchFn = Callable[[Operation], int]


def align_of(t) -> int:
    """Byte alignment of an explicit buffer of memdesc type ``t``: ``128 * maxPhase`` for a
    ``#ttg.nvmma_shared`` encoding (1024 with a 128-byte swizzle; wgmma XORs address bits 4-6
    with bits 7-9, PTX ISA 9.7.15.5.1), 16 otherwise (Triton
    ``NVMMASharedEncodingAttr::getAlignment``)."""
    enc = t.encoding
    if isinstance(enc, NVMMASharedLayout):
        return 128 * max(1, enc.swizzling_byte_width // 16)
    return DEFAULT_ALIGN


def buffer_bytes(t) -> int:
    """Bytes of a buffer of memdesc type ``t`` (every dim, multi-buffer slots included)."""
    e = t.element
    if isinstance(e, IntType):
        bits = e.width
    elif isinstance(e, FloatType):
        bits = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(e.name, 8)
    else:
        bits = 64
    n = 1
    for s in t.shape:
        n *= s
    return (n * bits + 7) // 8


@dataclass(eq=False)
class Buffer:
    """One buffer: its owner op, ``size`` and ``align`` in bytes, live range
    ``[start, end)`` in post-order op numbers, and the ``offset`` found."""

    owner: Operation
    size: int
    align: int
    start: int
    end: int
    offset: int = 0

    def place(self, offset: int) -> int:
        """Set the offset to ``offset`` rounded up to the alignment; returns it."""
        self.offset = -(-offset // self.align) * self.align
        return self.offset

    def live_with(self, other: Buffer) -> bool:
        return self.start < other.end and other.start < self.end

    def bytes_overlap(self, other: Buffer) -> bool:
        return self.offset < other.offset + other.size and \
            other.offset < self.offset + self.size


def _number(func: Operation) -> dict:
    """Post-order number of every op under ``func`` (children before their parent)."""
    ids: dict = {}

    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    visit(inner)
        ids[id(op)] = len(ids)

    visit(func)
    return ids


def _in_block(op: Operation, block) -> Operation | None:
    """The ancestor of ``op`` (or ``op``) that sits directly in ``block``, or None."""
    top: Operation | None = op
    while top is not None and top.parent is not block:
        top = top.parent_op() if top.parent is not None else None
    return top


def _aliases(v) -> list:
    """Values that view the buffer of ``v`` through ``u`` uses: results of ops returning a
    memdesc view of it, and the block argument and result of a loop that carries it."""
    out = []
    for u, i in v.uses:
        if u.name == "scf.for" and i >= 3:
            k = i - 3
            out += [u.regions[0].blocks[0].args[k + 1], u.results[k]]
        elif u.name == "scf.yield" and u.parent is not None:
            loop = u.parent_op()
            if loop is not None and loop.name == "scf.for":
                out.append(loop.results[i])
        elif u.name != "ttg.local_alloc":
            out += [r for r in u.results if isinstance(r.type, MemDescType)]
    return out


def _live_range(alloc: Operation, ids: dict) -> tuple[int, int]:
    """``[start, end)`` of the buffer of ``alloc``: from the alloc to the last op of the
    alloc's block that uses (directly or through a nested op) the buffer or one of its views."""
    block = alloc.parent
    start = ids[id(alloc)]
    end = start + 1
    seen, work = set(), [alloc.result]
    while work:
        v = work.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        work += _aliases(v)
        for u, _ in v.uses:
            top = _in_block(u, block)
            if top is not None:
                end = max(end, ids[id(top)] + 1)
    return start, end


def collect(func: Operation, scratch: ScratchFn | None = None) -> list:
    """The buffers of ``func``: explicit ones in op order, then scratch ones in op order."""
    ids = _number(func)
    explicit, temp = [], []
    for op in func.walk():
        if op.name == "ttg.local_alloc":
            t = op.result.type
            s, e = _live_range(op, ids)
            explicit.append(Buffer(op, buffer_bytes(t), align_of(t), s, e))
        elif scratch is not None and op is not func:
            n = scratch(op)
            if n > 0:
                i = ids[id(op)]
                temp.append(Buffer(op, n, SCRATCH_ALIGN, i, i + 1))
    return explicit + temp


def _calculate_starts(buffers: list) -> None:
    """Initial offsets (Triton ``calculateStarts``): each free "triple" (offset, live range)
    takes the first buffer live in it and in no other triple."""
    big = 1 << 62
    triples = [(0, 0, (0, big))]  # (offset, insertion number, live range), kept sorted
    seq = 1
    todo = list(buffers)
    while todo and triples:
        offset, _, (rs, re) = triples.pop(0)
        pick = None
        for b in todo:
            if b.start < re and rs < b.end and \
                    not any(b.start < e and s < b.end for _, _, (s, e) in triples):
                pick = b
                break
        if pick is None:
            continue
        at = pick.place(offset)
        new = [(at + pick.size, (max(rs, pick.start), min(re, pick.end)))]
        if rs < pick.start:
            new.append((offset, (rs, pick.end)))
        if pick.end < re:
            new.append((offset, (pick.start, re)))
        for off, rng in new:
            triples.append((off, seq, rng))
            seq += 1
        triples.sort(key=lambda t: (t[0], t[1]))
        todo.remove(pick)


def _interference(buffers: list) -> dict:
    graph: dict = {}
    for x in buffers:
        for y in buffers:
            if x is not y and x.live_with(y) and x.bytes_overlap(y):
                graph.setdefault(id(x), []).append(y)
    return graph


def _colour(buffers: list, graph: dict) -> int:
    """First-fit colouring; buffers of a non-zero colour move above their neighbours
    (Triton ``allocate``). Returns the bytes used."""
    colours = {id(b): (0 if i == 0 else -1) for i, b in enumerate(buffers)}
    for x in buffers:
        taken = {colours[id(y)] for y in graph.get(id(x), []) if colours[id(y)] >= 0}
        c = 0
        while c in taken:
            c += 1
        colours[id(x)] = c
    total = 0
    for x in buffers:
        if colours[id(x)] != 0:
            x.place(max((y.offset + y.size for y in graph.get(id(x), [])), default=0))
        total = max(total, x.offset + x.size)
    return total


def allocate(func: Operation, scratch: ScratchFn | None = None) -> int:
    """Assign offsets in ``func`` (module docstring); returns the total bytes."""
    buffers = sorted(collect(func, scratch), key=lambda b: -b.size)  # stable, as Triton's
    if not buffers:
        return 0
    _calculate_starts(buffers)
    graph = _interference(buffers)
    total = 0
    while True:
        total = _colour(buffers, graph)
        graph = _interference(buffers)
        if not graph:
            break
    for b in buffers:
        b.owner.attributes["allocation.offset"] = b.offset
    return total


def allocate_module(module: Operation, scratch: ScratchFn | None = None) -> int:
    """Allocate every function of ``module`` and set ``ttg.shared``; returns it (bytes)."""
    total = 0
    for func in functions(module):
        total = max(total, allocate(func, scratch))
    module.attributes["ttg.shared"] = total
    return total


@dataclass
class AllocateShared(Pass):
    """The ``tritongpu-allocate-shared-memory`` pass (Triton: ``allocate-shared-memory-nv``).

    ``scratch``: bytes of scratch an op needs (the code generator's; None: no scratch)."""

    name = "tritongpu-allocate-shared-memory"
    scratch: ScratchFn | None = field(default=None, repr=False)

    def run(self, module: Operation, ctx=None) -> None:
        allocate_module(module, self.scratch)


__all__ = ["AllocateShared", "Buffer", "align_of", "allocate", "allocate_module",
           "buffer_bytes", "collect"]
