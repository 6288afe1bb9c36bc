"""``allocate-shared-memory``: byte offsets of the kernel's shared-memory buffers.

Every ``ttg.local_alloc`` gets an ``allocation.offset`` (bytes from the start of the dynamic
``global_smem`` array) and the module the attribute ``ttg.shared`` (the bytes the buffers
take), as Triton's ``allocate-shared-memory-nv`` does (``make_llir`` of
``third_party/nvidia/backend/compiler.py``; Triton
``lib/Analysis/Allocation.cpp``). Buffers are aligned to 128 bytes, swizzled
``#ttg.nvmma_shared`` ones (read by wgmma) to 1024.

Liveness: a buffer is live from its ``local_alloc`` to its last use (uses through
``ttg.memdesc_index`` count; a use inside an ``scf.for`` keeps it live to the end of that
loop). Two buffers whose live ranges do not overlap may share bytes: each buffer takes the
lowest 128-byte-aligned offset free over its whole range (first fit, largest buffers first,
Triton's ``Allocation::computeOffsets`` in spirit).

The scratch space of reductions, scans and layout conversions is sized by the code generator
and placed after ``ttg.shared`` (the kernel's ``shared`` metadata is their sum); kernels above
48 KB get the dynamic shared-memory limit raised by the launcher
(``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation, functions
from ..ir.types import FloatType, IntType
from ..layouts.encodings import NVMMASharedLayout
from .manager import Pass

ALIGN = 128
#: wgmma's swizzle modes XOR address bits 4-6 with bits 7-9 of the shared address (PTX ISA
#: 9.7.15.5.1): a swizzled ``nvmma_shared`` buffer starts on a 1024-byte boundary so that the
#: pattern the hardware applies is the one its layout describes.
NVMMA_ALIGN = 1024


def align_of(t) -> int:
    """Byte alignment of a buffer of memdesc type ``t``."""
    enc = t.encoding
    if isinstance(enc, NVMMASharedLayout) and enc.swizzling_byte_width:
        return NVMMA_ALIGN
    return ALIGN


def _bytes(t) -> int:
    e = t.element
    n = (e.width + 7) // 8 if isinstance(e, IntType) else \
        {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}.get(e.name if isinstance(e, FloatType) else "", 8)
    for s in t.shape:
        n *= s
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _top(op: Operation, block) -> Operation | None:
    """The ancestor of ``op`` (or ``op``) that sits directly in ``block``, or None."""
    top: Operation | None = op
    while top is not None and top.parent is not block:
        top = top.parent_op() if top.parent is not None else None
    return top


def _live_ranges(func: Operation) -> list:
    """``(alloc op, first, last)`` with positions in the function's top-level order."""
    body = func.regions[0].block
    pos = {id(op): i for i, op in enumerate(body.ops)}
    out = []
    for op in func.walk():
        if op.name != "ttg.local_alloc":
            continue
        start = pos[id(_top(op, body))]
        last = start
        work = [op.result]
        while work:
            v = work.pop()
            for u, _ in v.uses:
                if u.name == "ttg.memdesc_index":
                    work.append(u.result)
                t = _top(u, body)
                if t is not None:
                    last = max(last, pos[id(t)])
        out.append((op, start, last))
    return out


def allocate(func: Operation) -> int:
    """Assign offsets in ``func`` (module docstring); returns the total bytes."""
    ranges = sorted(_live_ranges(func), key=lambda r: -_bytes(r[0].result.type))
    placed: list = []  # (offset, size, first, last)
    total = 0
    for op, first, last in ranges:
        size = _bytes(op.result.type)
        off, moved = 0, True
        while moved:
            moved = False
            for o, s, f, la in sorted(placed):
                overlap_time = not (la < first or last < f)
                if overlap_time and off < o + s and o < off + size:
                    a = align_of(op.result.type)
                    off, moved = (o + s + a - 1) // a * a, True
        op.attributes["allocation.offset"] = off
        placed.append((off, size, first, last))
        total = max(total, off + size)
    return total


@dataclass
class AllocateShared(Pass):
    """The ``tritongpu-allocate-shared-memory`` pass (Triton: ``allocate-shared-memory-nv``)."""

    name = "tritongpu-allocate-shared-memory"

    def run(self, module: Operation, ctx=None) -> None:
        total = 0
        for func in functions(module):
            total = max(total, allocate(func))
        module.attributes["ttg.shared"] = total


__all__ = ["AllocateShared", "allocate"]
