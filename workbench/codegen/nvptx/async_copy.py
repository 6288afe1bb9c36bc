"""Multi-buffered shared memory and asynchronous copies (``tritongpu-pipeline``'s ops).

* ``ttg.memdesc_index %buf, %i``: slot ``i`` of a ``S x ...`` buffer, at byte offset
  ``base + i * slot_bytes`` (an i32 computed at run time;
  :func:`.smem_access.buffer_pointer` accepts it as a base).
* ``ttg.async_copy_global_to_local %ptrs, %dst[ mask %mask]``: each thread copies its
  registers' elements, in groups of ``v`` contiguous elements (the pointer layout's run, the
  axis analysis' contiguity/alignment as for ``tt.load`` and the swizzle's ``vec``), with
  ``cp.async.cg.shared.global [dst], [src], 16, src_size;`` (16-byte groups; ``.ca`` for
  4 and 8 bytes) where ``src_size`` is 0 for a false mask (the 16 bytes are zero-filled; PTX
  ISA 9.7.9.25.3 ``cp.async``). Groups narrower than 4 bytes fall back to a predicated
  ``ld.global`` + ``st.shared`` (synchronous: still ordered by the following wait and
  barrier).
* ``ttg.async_commit_group`` / ``ttg.async_wait {num}``: ``cp.async.commit_group`` and
  ``cp.async.wait_group num`` (PTX ISA 9.7.9.25.4/5).
* Their ``!ttg.async.token`` results (and the token operands of ``async_wait`` and
  ``local_load``) only order the ops: they lower to no register.

Barriers around the copies come from ``tritongpu-insert-barriers``: a copy waits for earlier
reads of its bytes, a read after ``async_wait`` for the copies that landed. Every inline asm
clobbers memory so LLVM keeps shared loads and stores on their side of it.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from .memory import vector_width
from .smem_access import (
    contiguous_run,
    record_access,
    region_start,
    shared_address,
    shared_order,
    swizzle_offset,
    swizzle_offset_py,
    vector_limit,
)
from .types import I32, I64, byte_size


def _asm(kl, text: str, cons: str, args, ret=None):
    fty = ir.FunctionType(ret or ir.VoidType(), [a.type for a in args])
    return kl.b.call(ir.InlineAsm(fty, text, cons, side_effect=True), args)


def thread_parts(tl) -> np.ndarray:
    """The thread part of ``tl``'s coordinates (:meth:`ThreadLayout.thread_part`) of every
    (warp, lane) at once: an int64 array ``[warps * lanes, rank]``, row ``warp * lanes +
    lane``."""
    nl, nw = len(tl.lane), len(tl.warp)
    tid = np.arange(1 << (nl + nw), dtype=np.int64)
    parts = np.zeros((tid.size, tl.rank), dtype=np.int64)
    for i, vec in enumerate(tuple(tl.lane) + tuple(tl.warp)):
        bit = (tid >> i) & 1
        parts ^= bit[:, None] * np.asarray(vec, dtype=np.int64)[None, :]
    return parts


def constant_strides(tl, groups, offset) -> dict:
    """For each register group ``g`` of thread layout ``tl`` (its first register), ``(anchor,
    delta)``: the shared element offset of ``g`` equals that of group ``anchor`` plus the
    constant ``delta`` in every thread (``anchor == g``, ``delta == 0``: ``g`` is computed
    from the thread's coordinates). ``offset`` maps a coordinate tuple to its element offset;
    it is called with one int64 numpy array per dim (that coordinate in every thread) and
    must work elementwise (the formulas of :mod:`.smem_access` do). Checked exhaustively over
    every lane and warp bit combination, so a swizzle that varies with the register bits
    gives more anchors, never a wrong address.

    This is the form Triton's shared-memory lowering gives: one base per thread and constant
    register offsets (``[%r + 1024]``), which ptxas folds into the copies' immediates instead
    of keeping one address register per copy live across the loop."""
    parts = thread_parts(tl)

    def offsets(g):
        coord = np.asarray(tl.regs[g], dtype=np.int64)[None, :] ^ parts
        return np.asarray(offset(tuple(coord[:, d] for d in range(tl.rank))), dtype=np.int64)

    plan: dict = {}
    anchors: list = []  # (group, its offsets in every thread)
    for g in groups:
        offs = offsets(g)
        for a, aoffs in anchors:
            diff = offs - aoffs
            if (diff == diff[0]).all():
                plan[g] = (a, int(diff[0]))
                break
        else:
            anchors.append((g, offs))
            plan[g] = (g, 0)
    return plan


def swizzle_strides(tl, groups: tuple, enc, shape: tuple) -> dict:
    """:func:`constant_strides` of the copies of ``tl``'s register ``groups`` into a shared
    buffer of encoding ``enc`` and ``shape`` (:func:`.smem_access.swizzle_offset_py`), cached
    per (layout, groups, encoding, shape): the copies of one pipelined loop share a few
    layouts. Returns a new dict."""
    key = (tl, tuple(groups), enc, tuple(shape))
    try:
        hit = _STRIDES.get(key)
    except TypeError:  # an unhashable encoding: not cached
        return constant_strides(tl, groups, lambda c: swizzle_offset_py(enc, shape, c))
    if hit is None:
        hit = constant_strides(tl, groups, lambda c: swizzle_offset_py(enc, shape, c))
        if len(_STRIDES) >= 1024:
            _STRIDES.clear()
        _STRIDES[key] = hit
    return dict(hit)


#: (thread layout, groups, encoding, shape) -> constant_strides plan
_STRIDES: dict = {}


def lower_memdesc_index(kl, op) -> None:
    """Slot ``i`` of a multi-buffer: an i32 byte offset recorded as the result's base."""
    src, idx = op.operands
    base = kl.smem_offsets[id(src)]
    t = op.result.type
    n = byte_size(t.element)
    for s in t.shape:
        n *= s
    (i,) = kl.get(idx)
    b = kl.b
    base = I32(base) if isinstance(base, int) else base
    kl.smem_offsets[id(op.result)] = b.add(base, b.mul(i, I32(n)))
    kl.set(op.result, [])


def lower_async_copy(kl, op) -> None:
    """``ttg.async_copy_global_to_local`` (module docstring)."""
    src_v, dst_v = op.operands[:2]
    mask_v = op.operands[2] if len(op.operands) > 2 else None
    src_t, dst_t = src_v.type, dst_v.type
    enc = dst_t.encoding
    elem_t = dst_t.element
    eb = byte_size(elem_t)
    base = kl.smem_offsets[id(dst_v)]
    tl = kl.layout(src_t)
    vmem, dim = vector_width(kl, src_v, mask_v)
    order = shared_order(enc)
    vsh = contiguous_run(tl, order[0], vector_limit(enc, eb))
    v = min(vmem, vsh) if dim == order[0] else 1
    ptrs = kl.get(src_v)
    masks = kl.get(mask_v) if mask_v is not None else None
    coords = kl.coords(src_t)
    b = kl.b
    nbytes = v * eb
    groups, seen = [], set()
    for g in range(0, tl.num_regs, v):
        if tl.regs[g] not in seen:
            seen.add(tl.regs[g])
            groups.append(g)
    plan = swizzle_strides(tl, tuple(groups), enc, tuple(dst_t.shape))
    offs: dict = {}
    start = region_start(kl, base)
    for g in groups:
        anchor, delta = plan[g]
        if anchor == g:
            off = b.mul(swizzle_offset(kl, enc, dst_t.shape, coords[g]), I32(eb))
        else:  # the anchor's offset plus a constant: one immediate offset in SASS
            off = b.add(offs[anchor], I32(delta * eb))
        offs[g] = off
        dst = shared_address(kl, base, off, start)
        src = b.ptrtoint(ptrs[g], I64)
        if nbytes >= 4:
            size = I32(nbytes) if masks is None else b.select(masks[g], I32(nbytes), I32(0))
            kind = "cg" if nbytes == 16 else "ca"
            _asm(kl, f"cp.async.{kind}.shared.global [$0], [$1], {nbytes}, $2;",
                 "r,l,r,~{memory}", [dst, src, size])
        else:
            _sync_copy(kl, dst, src, masks[g] if masks is not None else None, elem_t, v)
    kl.set(op.result, [])
    record_access(kl, op, f"ttg.async_copy_global_to_local (cp.async, {nbytes} B/lane)", enc,
                  src_t.encoding, tuple(src_t.shape), elem_t, nbytes)


def _sync_copy(kl, dst, src, mask, elem_t, v):
    """Fallback for groups below 4 bytes: element by element, predicated, zero when masked."""
    b = kl.b
    eb = byte_size(elem_t)
    bits = eb * 8
    wt = ir.IntType(bits)
    sfx = {8: "b16", 16: "b16", 32: "b32", 64: "b64"}[max(bits, 16)]
    rt = ir.IntType(max(bits, 16))
    cond = ir.Constant(ir.IntType(1), 1) if mask is None else mask
    for e in range(v):
        s = b.add(src, I64(e * eb))
        val = _asm(kl, f"mov.{sfx} $0, 0;\n@$2 ld.global.{'u8' if bits == 8 else sfx} $0, [$1];",
                   f"={'h' if rt.width == 16 else ('r' if rt.width == 32 else 'l')},l,b,"
                   "~{memory}",
                   [s, cond], rt)
        if rt.width != bits:
            val = b.trunc(val, wt)
        d = b.add(dst, I32(e * eb))
        st = "st.shared.u8" if bits == 8 else f"st.shared.{sfx}"
        cons = "r,h" if bits <= 16 else ("r,r" if bits == 32 else "r,l")
        arg = b.zext(val, ir.IntType(16)) if bits == 8 else val
        _asm(kl, f"{st} [$0], $1;", cons + ",~{memory}", [d, arg])


def lower_commit(kl, op) -> None:
    """``cp.async.commit_group``, through LLVM's ``llvm.nvvm.cp.async.commit.group`` as in
    Triton's LLVM IR (an intrinsic with memory effects, so no shared access moves across)."""
    kl.b.call(kl.intrinsic("llvm.nvvm.cp.async.commit.group", ir.VoidType(), []), [])
    kl.set(op.result, [])


def lower_wait(kl, op) -> None:
    """``cp.async.wait_group num``. No proxy fence follows, also when wgmma reads the landed
    buffers, as in Triton 3.6 (its fence insertion fences only shared-memory *stores* from
    registers before a wgmma) and CUTLASS's cp.async + GMMA main loops: on sm_90 a
    ``fence.proxy.async`` here compiles to ``MEMBAR.ALL.CTA``, which also waits for the
    copies still in flight for later stages and so undoes the pipelining.
    The wait is LLVM's ``llvm.nvvm.cp.async.wait.group(i32 num)``, as in Triton's LLVM IR
    (so the PTX has LLVM's spelling, a tab before ``num``, which Triton's tests look for)."""
    wait = kl.intrinsic("llvm.nvvm.cp.async.wait.group", ir.VoidType(), [I32])
    kl.b.call(wait, [I32(int(op.attributes.get("num", 0)))])
    kl.set(op.result, [])


__all__ = ["constant_strides", "swizzle_strides", "thread_parts", "lower_memdesc_index",
           "lower_async_copy", "lower_commit", "lower_wait"]
