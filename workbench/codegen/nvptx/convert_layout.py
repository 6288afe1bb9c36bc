"""``ttg.convert_layout``: a register permutation, or a round trip through shared memory.

When both layouts give every thread the same coordinates the conversion is a register
permutation (:func:`.threads.register_map`). Otherwise data crosses threads (Triton lowers such
conversions through shared memory too) and each thread stores its registers and loads the
registers of the destination layout:

* a 2-D tile of power-of-two shape with numeric elements goes through a
  ``#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>`` buffer (Triton's
  SwizzledSharedEncoding) chosen here: ``order`` is the destination's (the source's when the
  destination has none), and over ``vec`` from the smaller of the store and load runs (each
  thread's contiguous registers along ``order[0]``, at most 16 bytes) up to 64 bytes,
  ``perPhase`` in {1, 2, 4, 8} and ``maxPhase`` in {1, 2, 4, 8, 16} the candidate with the
  fewest wavefronts of the store plus the load wins (ties: the smaller ``maxPhase``, then
  ``perPhase``). Wavefronts are counted for warp 0 from the linear layouts
  (:func:`workbench.layouts.to_linear`) and the buffer's element offsets
  (:func:`workbench.layouts.banks.shared_offsets`), with the CUDA bank model (32 banks of 4
  bytes; 8-byte accesses served per half warp, 16-byte per quarter warp). Stores and loads
  are vectorised (``st/ld.shared.v2/v4``) over those runs. The two accesses are listed in
  ``kl.shared_accesses`` with their conflict degree from
  :func:`workbench.layouts.bank_conflicts` (one source of truth for the report);
* anything else is stored at its row-major index in the scratch area and loaded back.
"""
from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError
from ...ir.types import FloatType, IntType, TensorType
from ...layouts import SwizzledSharedLayout, to_linear
from ...layouts.banks import shared_offsets
from .smem_access import (
    barrier,
    contiguous_run,
    linear_index,
    load_value,
    record_access,
    slot,
    store_value,
    swizzle_offset,
    vector_load,
    vector_store,
)
from .threads import register_map, thread_layout
from .types import byte_size


def _pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


def eligible(src_t, dst_t) -> bool:
    """2-D, power-of-two shape, int (not i1) or float elements."""
    e = src_t.element
    ok_t = isinstance(e, FloatType) or (isinstance(e, IntType) and e.width >= 8)
    return ok_t and len(src_t.shape) == 2 and all(_pow2(s) for s in src_t.shape)


def _wavefronts(offs, coords, eb: int, vec: int) -> int:
    """Wavefronts of warp 0's requests (``coords`` [L, R, 2] of the access layout)."""
    L, R = coords.shape[:2]
    if R % vec:
        return 1 << 30
    addr = offs[coords[..., 0], coords[..., 1]]  # [L, R]
    start = addr[:, ::vec] * eb  # [L, G] bytes
    vb = vec * eb
    nw = max(vb // 4, 1)
    words = (start[..., None] // 4 + np.arange(nw)).transpose(1, 0, 2)  # [G, L, nw]
    lanes = L if vb <= 4 else max(L * 4 // vb, 1)
    G = words.shape[0]
    rows = words.reshape(G * (L // lanes), lanes * nw)
    rows = np.sort(rows, axis=1)
    distinct = np.ones_like(rows, bool)
    distinct[:, 1:] = rows[:, 1:] != rows[:, :-1]
    key = (np.arange(rows.shape[0])[:, None] * 32 + rows % 32)[distinct]
    counts = np.bincount(key, minlength=rows.shape[0] * 32).reshape(rows.shape[0], 32)
    return int(counts.max(axis=1).sum())


def choose_swizzle(src_t, dst_t) -> SwizzledSharedLayout:
    """The swizzle of the conversion buffer (module docstring)."""
    shape = tuple(src_t.shape)
    eb = byte_size(src_t.element)
    denc = dst_t.encoding
    order = tuple(getattr(denc, "order", None) or getattr(src_t.encoding, "order", None)
                  or (1, 0))
    if len(order) != 2:
        order = (1, 0)
    limit = max(16 // eb, 1)
    cs = to_linear(src_t.encoding, shape).coords()[0]
    cd = to_linear(denc, shape).coords()[0]
    vs = _run(cs, order[0], limit)
    vl = _run(cd, order[0], limit)
    best = None
    vecs, v = [], min(vs, vl)
    while v <= max(vs, vl, 64 // eb) and v <= shape[order[0]]:
        vecs.append(v)
        v *= 2
    for vec in vecs:
        for pp in (1, 2, 4, 8):
            for mp in (1, 2, 4, 8, 16):
                if vec * mp > shape[order[0]] or (mp == 1 and pp > 1):
                    continue
                enc = SwizzledSharedLayout(vec, pp, mp, order)
                offs = shared_offsets(enc, shape)
                cost = _wavefronts(offs, cs, eb, min(vs, vec)) + \
                    _wavefronts(offs, cd, eb, min(vl, vec))
                key = (cost, mp, pp, -vec)
                if best is None or key < best[0]:
                    best = (key, enc)
    assert best is not None  # vecs holds at least min(vs, vl)
    return best[1]


def _run(coords, dim: int, limit: int) -> int:
    """Registers 0..v-1 hold consecutive elements along ``dim`` (warp 0, lane 0 view)."""
    v = 1
    R = coords.shape[1]
    while v * 2 <= min(limit, R):
        c0, c1 = coords[0, 0], coords[0, v]
        want = c0.copy()
        want[dim] += v
        if not np.array_equal(c1, want) or np.any(coords[:, ::v * 2, dim] % (v * 2)):
            break
        v *= 2
    return v


def scratch_bytes(op) -> int:
    """Bytes of shared scratch ``ttg.convert_layout`` ``op`` needs: 0 for a register
    permutation (or a scalar), else the whole tile (numel x element bytes)."""
    src_t, dst_t = op.operands[0].type, op.result.type
    if not isinstance(src_t, TensorType):
        return 0
    try:
        register_map(thread_layout(src_t), thread_layout(dst_t), lambda c: c)
        return 0
    except UnsupportedError:
        pass
    numel = 1
    for s in src_t.shape:
        numel *= s
    return numel * byte_size(src_t.element)


def lower_convert_swizzled(kl, op) -> None:
    """Store the source registers into the swizzled scratch buffer and load the destination's."""
    src_t, dst_t = op.operands[0].type, op.result.type
    enc = choose_swizzle(src_t, dst_t)
    elem_t = src_t.element
    eb = byte_size(elem_t)
    shape = tuple(src_t.shape)
    kl.need_shared(scratch_bytes(op))
    s_tl, d_tl = kl.layout(src_t), kl.layout(dst_t)
    limit = max(1, min(enc.vec, 16 // eb))
    vs = contiguous_run(s_tl, enc.order[0], limit)
    vl = contiguous_run(d_tl, enc.order[0], limit)
    src = kl.get(op.operands[0])
    seen = set()
    for g, c in zip(range(0, s_tl.num_regs, vs), kl.coords(src_t)[::vs], strict=True):
        if s_tl.regs[g] in seen:
            continue
        seen.add(s_tl.regs[g])
        off = swizzle_offset(kl, enc, shape, c)
        vector_store(kl, slot(kl, 0, off, elem_t), src[g:g + vs], elem_t)
    barrier(kl)
    out: list = [None] * d_tl.num_regs
    first: dict = {}
    for g, c in zip(range(0, d_tl.num_regs, vl), kl.coords(dst_t)[::vl], strict=True):
        if d_tl.regs[g] in first:
            f = first[d_tl.regs[g]]
            out[g:g + vl] = out[f:f + vl]
            continue
        first[d_tl.regs[g]] = g
        off = swizzle_offset(kl, enc, shape, c)
        out[g:g + vl] = vector_load(kl, slot(kl, 0, off, elem_t), elem_t, vl)
    kl.set(op.result, out)
    record_access(kl, op, f"ttg.convert_layout (st.shared, {vs * eb} B/lane)", enc,
                  src_t.encoding, shape, elem_t, vs * eb)
    record_access(kl, op, f"ttg.convert_layout (ld.shared, {vl * eb} B/lane)", enc,
                  dst_t.encoding, shape, elem_t, vl * eb)


def lower_convert(kl, op) -> None:
    """``ttg.convert_layout``: register permutation, or a round trip through shared memory."""
    src_t, dst_t = op.operands[0].type, op.result.type
    src = kl.get(op.operands[0])
    if not isinstance(src_t, TensorType):
        kl.set(op.result, src)
        return
    s_tl, d_tl = kl.layout(src_t), kl.layout(dst_t)
    try:
        m = register_map(s_tl, d_tl, lambda c: c)
        kl.set(op.result, [src[i] for i in m])
        return
    except UnsupportedError:  # data crosses threads: go through shared memory
        pass
    if eligible(src_t, dst_t):
        return lower_convert_swizzled(kl, op)
    elem_t = src_t.element
    numel = 1
    for s in src_t.shape:
        numel *= s
    kl.need_shared(scratch_bytes(op))
    seen = set()
    for r, c in enumerate(kl.coords(src_t)):
        if s_tl.regs[r] in seen:
            continue
        seen.add(s_tl.regs[r])
        store_value(kl, slot(kl, 0, linear_index(kl, c, src_t.shape), elem_t), src[r], elem_t)
    barrier(kl)
    out = []
    loaded = {}
    for r, c in enumerate(kl.coords(dst_t)):
        key = d_tl.regs[r]
        if key not in loaded:
            loaded[key] = load_value(kl, slot(kl, 0, linear_index(kl, c, dst_t.shape), elem_t),
                                     elem_t)
        out.append(loaded[key])
    kl.set(op.result, out)


__all__ = ["choose_swizzle", "eligible", "lower_convert", "lower_convert_swizzled"]
