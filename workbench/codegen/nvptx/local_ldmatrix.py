"""``ttg.local_load`` into any distributed layout with ``ldmatrix`` (PTX ISA 9.7.9.16
ldmatrix, sm_75 and later), as Triton 3.6's ``LocalLoadOpConversion``
(``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/MemoryOpToLLVM.cpp``) does for every
``local_load``: the destination layout's bases (broadcast registers removed) are mapped to
element offsets of the shared buffer (:func:`.local_stmatrix.matrix_offsets`), and the plain
form of :func:`.cvt_ldmatrix.matrix_load` is tried, then ``.trans``. When neither fits, the
caller falls back to ``ld.shared``. The access is recorded with the rows the lanes address."""
from __future__ import annotations

import numpy as np

from ...layouts.banks import shared_offsets
from .cvt_ldmatrix import access_layout, emit, matrix_load
from .cvt_lower import Side
from .cvt_swizzle import flat_of
from .local_stmatrix import matrix_offsets
from .smem_access import record_access
from .types import byte_size


def plan_load(tl, enc, shape: tuple, bits: int):
    """The :class:`.cvt_ldmatrix.MatrixLoad` reading thread layout ``tl`` from the buffer
    ``enc`` of ``shape`` (``bits``-bit elements), or None when no ``ldmatrix`` form fits."""
    got = matrix_offsets(tl, enc, shape, bits)
    if got is None:
        return None
    kept, imgs, lanes, warps = got
    s = Side(flat_of(tl)[0], tuple(kept), 1, (), tuple(range(len(imgs))), tuple(imgs), tuple(lanes),
             tuple(warps))
    tile_bits = (shape[0] * shape[1]).bit_length() - 1
    for trans in (False, True):
        m = matrix_load(s, trans, bits, tile_bits)
        if m is not None:
            return m
    return None


def load_matrix(kl, op, enc, base, tl, elem_t, shape: tuple):
    """The registers (one value per register of ``tl``) of ``op``, a ``ttg.local_load`` of a
    rank-2 buffer of ``shape`` at byte ``base`` (an int or an i32 value), loaded with
    ``ldmatrix``; None when no form fits (nothing is emitted then)."""
    eb = byte_size(elem_t)
    m = plan_load(tl, enc, shape, eb * 8)
    if m is None:
        return None
    tile_bits = (shape[0] * shape[1]).bit_length() - 1
    got = emit(kl, m, 0, tile_bits, elem_t, eb, base)
    kept_mask = 0
    for k in m.kept:
        kept_mask |= 1 << k
    _record(kl, op, enc, shape, m, elem_t)
    return [got[r & kept_mask] for r in range(tl.num_regs)]


def _record(kl, op, enc, shape, m, elem_t) -> None:
    offs = shared_offsets(enc, shape)
    where = np.argsort(offs.ravel())

    def coord_of(o: int) -> list:
        return [int(c) for c in np.unravel_index(where[o], shape)]
    what, lay = access_layout(m, coord_of, 2)
    record_access(kl, op, f"ttg.local_load ({what}, 16 B/lane)", enc, lay, shape, elem_t, 16)


__all__ = ["load_matrix", "plan_load"]
