"""``ttg.local_alloc`` of registers with ``stmatrix`` (sm_90), as Triton 3.6's
``LocalAllocOpConversion`` (``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/MemoryOpToLLVM.cpp``)
does: the register layout's bases (broadcast registers removed) are mapped to element offsets
of the shared buffer (:func:`.smem_access.swizzle_offset_py`, linear over the bits of a
power-of-two tile), and the plain form of :func:`.stmatrix.plan_store` is tried, then
``.trans``. The access is recorded with the rows the lanes address."""
from __future__ import annotations

import numpy as np

from ...layouts.banks import shared_offsets
from .cvt_swizzle import deposit, xor_image
from .smem_access import matrix_access_layout, record_access, swizzle_offset_py
from .stmatrix import emit, plan_store
from .types import byte_size


def _pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


def offsets_of(tl, enc, shape):
    """(kept register bits, register images, lane images, warp images): element offsets in
    the buffer ``enc`` of ``shape`` of thread layout ``tl``'s bases, or None when the buffer's
    offsets are not linear in them (then no matrix instruction applies)."""
    def off(c) -> int:
        return int(swizzle_offset_py(enc, shape, tuple(int(x) for x in c)))
    nbits = tl.num_regs.bit_length() - 1
    kept = [i for i in range(nbits) if any(tl.regs[1 << i])]
    imgs = [off(tl.regs[1 << i]) for i in kept]
    lanes = [off(c) for c in tl.lane]
    warps = [off(c) for c in tl.warp]
    for r in range(tl.num_regs):  # linear: every register at the XOR of its bits' offsets
        bits = sum(1 << j for j, i in enumerate(kept) if r >> i & 1)
        if off(tl.regs[r]) != xor_image(bits, imgs):
            return None
    return kept, imgs, lanes, warps


def matrix_offsets(tl, enc, shape: tuple, bits: int):
    """:func:`offsets_of` where a matrix instruction (``ldmatrix``/``stmatrix``) can apply: a
    rank-2 power-of-two buffer of 8-, 16- or 32-bit elements, offsets linear in the layout's
    bases and five lane bits; None otherwise."""
    if len(shape) != 2 or not all(_pow2(s) for s in shape) or bits not in (8, 16, 32):
        return None
    try:
        got = offsets_of(tl, enc, shape)
    except (ValueError, TypeError, AttributeError):
        return None
    if got is None or len(got[2]) != 5:
        return None
    return got


def store_matrix(kl, op, enc, base, tl, regs, elem_t, shape: tuple) -> bool:
    """Emit ``op`` (a ``ttg.local_alloc`` or ``ttg.local_store`` of a rank-2 tensor of
    ``shape`` into the buffer at byte ``base``) with ``stmatrix`` when its layout fits;
    returns whether it did."""
    bits = byte_size(elem_t) * 8
    got = matrix_offsets(tl, enc, shape, bits)
    if got is None:
        return False
    kept, imgs, lanes, warps = got
    for trans in (False, True):
        m = plan_store(imgs, lanes, warps, bits, trans)
        if m is not None:
            break
    else:
        return False
    vals = {}
    for _, words in m.instrs:
        for elems in words:
            for p in elems:
                vals[p] = regs[deposit(p, kept)]
    emit(kl, m, base, vals, elem_t, bits // 8)
    _record(kl, op, enc, shape, m, elem_t)
    return True


def _record(kl, op, enc, shape, m, elem_t) -> None:
    """The access record: rows addressed by the lanes (:func:`.smem_access.
    matrix_access_layout`) over the buffer's own encoding."""
    offs = shared_offsets(enc, shape)
    where = np.argsort(offs.ravel())

    def coord_of(o: int) -> list:
        return [int(c) for c in np.unravel_index(where[o], shape)]
    lay = matrix_access_layout(coord_of, 2, m.row_elems, m.x, m.addr_imgs, m.warp_imgs,
                               m.instr_imgs)
    record_access(kl, op, f"{op.name} (stmatrix.x{m.x}{'.trans' if m.trans else ''}, "
                  "16 B/lane)", enc, lay, shape, elem_t, 16)


__all__ = ["matrix_offsets", "offsets_of", "store_matrix"]
