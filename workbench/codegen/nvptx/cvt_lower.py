"""A layout conversion through shared memory, Triton 3.6's way: the buffer of
:func:`.cvt_swizzle.plan_conversion`, moved one round (``reps``) at a time.

For one thread, a register's tensor element ``x`` (a flat index, see :mod:`.cvt_swizzle`) sits
at shared index ``M(x)``, ``M`` the inverse of the plan's bijection; the low ``tile_bits`` bits
are the element offset in the scratch buffer and the high bits the round. ``M`` is linear, so
``M(x) = M(register part) XOR M(lane part) XOR M(warp part)``: the register part is a constant,
the lane/warp part one i32 per thread. Register-part bits that no lane or warp can touch are
added (they become the immediate offset of ``st/ld.shared``); the others are XOR-ed in
(``lowerLdSt`` of ``lib/Conversion/TritonGPUToLLVM/Utility.cpp`` does the same). Registers
whose offsets are 1, 2, 4, ... elements apart form one vector of up to 16 bytes
(``largestVectorisation``). Each round stores, waits (``bar.sync``, or ``bar.warp.sync`` when
no data crosses warps: ``isCvtWarpSync``), loads, and waits again before the next round's
stores.

:func:`address_map` gives the per-(warp, lane, register) element offsets and rounds as numpy
arrays, so tests check the emitted addressing against the layouts without a GPU.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from .cvt_ldmatrix import emit as emit_ldmatrix
from .cvt_ldmatrix import matrix_load
from .cvt_stmatrix import matrix_store, store_round
from .cvt_swizzle import (
    Flat,
    SmemPlan,
    deposit,
    flat_of,
    plan_conversion,
    plan_ldst,
    preimage,
    xor_image,
)
from .smem_access import barrier, slot, vector_load, vector_store
from .types import I32, byte_size


@dataclass(frozen=True)
class Side:
    """One side (store or load) of the conversion for one layout: ``vec`` elements per
    access and their register bases (``vec_regs``, kept-register indices), the other register
    bases (``rest``), per kept register basis its shared image, per lane/warp bit its image."""

    flat: Flat
    kept: tuple
    vec: int
    vec_regs: tuple
    rest: tuple
    reg_img: tuple
    lane_img: tuple
    warp_img: tuple


def _inverse(plan: SmemPlan, dim: int) -> list:
    """Per tensor bit ``k``, the shared index of flat element ``1 << k``."""
    cols = plan.columns
    flat = Flat(tuple(cols), (), (), dim)
    out = []
    for k in range(dim):
        pre = preimage(flat, 1 << k)
        assert pre is not None, "the plan is not a bijection"
        out.append(pre[0])
    return out


def _image(inv: list, x: int) -> int:
    y = 0
    k = 0
    while x:
        if x & 1:
            y ^= inv[k]
        x >>= 1
        k += 1
    return y


def side(tl, plan: SmemPlan, eb: int) -> Side:
    """The :class:`Side` of thread layout ``tl`` for ``plan`` with ``eb``-byte elements."""
    flat, kept = flat_of(tl)
    inv = _inverse(plan, flat.dim)
    reg_img = tuple(_image(inv, r) for r in flat.reg)
    lane_img = tuple(_image(inv, v) for v in flat.lane)
    warp_img = tuple(_image(inv, v) for v in flat.warp)
    tile = (1 << plan.tile_bits) - 1
    assert all(v <= tile for v in lane_img + warp_img), "rounds must be registers"
    vec_regs: list = []
    while (2 << len(vec_regs)) * eb <= 16:  # the next vector still fits 16 bytes
        want = 1 << len(vec_regs)
        k = next((i for i, v in enumerate(reg_img) if v == want), None)
        if k is None:
            break
        vec_regs.append(k)
    # a vector must start aligned: no other basis may touch its low offset bits
    while vec_regs:
        low = (1 << len(vec_regs)) - 1
        others = [v for i, v in enumerate(reg_img) if i not in vec_regs] + \
            list(lane_img) + list(warp_img)
        if not any(v & low for v in others):
            break
        vec_regs.pop()
    rest = tuple(i for i in range(len(reg_img)) if i not in vec_regs)
    return Side(flat, kept, 1 << len(vec_regs), tuple(vec_regs), rest, reg_img, lane_img,
                warp_img)


def _reg_index(s: Side, bits: int) -> int:
    """Original register index of the kept-register combination ``bits``."""
    r = 0
    for i, k in enumerate(s.kept):
        if bits >> i & 1:
            r |= 1 << k
    return r


def accesses(s: Side, plan: SmemPlan) -> list:
    """Per access: (round, constant shared offset, [original register per vector element])."""
    out = []
    for m in range(1 << len(s.rest)):
        bits = deposit(m, s.rest)
        img = xor_image(bits, s.reg_img)
        elems = [_reg_index(s, bits | deposit(e, s.vec_regs)) for e in range(s.vec)]
        out.append((img >> plan.tile_bits, img & ((1 << plan.tile_bits) - 1), elems))
    return out


def address_map(tl, plan: SmemPlan, eb: int, num_warps: int) -> tuple:
    """(offsets, rounds): int arrays [num_warps, 32, registers] of every register's element
    offset in the buffer and its round, from the same formulas the lowering emits (the
    lane/warp part XOR-ed, the free register bits added). Broadcast registers read the offset
    of the register they copy."""
    s = side(tl, plan, eb)
    mask = 0
    for v in s.lane_img + s.warp_img:
        mask |= v
    offs = np.zeros((num_warps, 32, tl.num_regs), np.int64)
    rnds = np.zeros_like(offs)
    for w in range(num_warps):
        for ln in range(32):
            lw = 0
            for i, v in enumerate(s.lane_img):
                lw ^= v if ln >> i & 1 else 0
            for i, v in enumerate(s.warp_img):
                lw ^= v if w >> i & 1 else 0
            for rnd, off, elems in accesses(s, plan):
                base = (lw ^ (off & mask)) + (off & ~mask)
                for e, r in enumerate(elems):
                    offs[w, ln, r] = base + e
                    rnds[w, ln, r] = rnd
    _copy_broadcast(tl, offs, rnds)
    return offs, rnds


def _copy_broadcast(tl, offs, rnds) -> None:
    kept_mask = 0
    for i in range(tl.num_regs.bit_length() - 1):
        if any(tl.regs[1 << i]):
            kept_mask |= 1 << i
    for r in range(tl.num_regs):
        offs[..., r] = offs[..., r & kept_mask]
        rnds[..., r] = rnds[..., r & kept_mask]


def warp_sync(src: Flat, dst: Flat) -> bool:
    """``isCvtWarpSync``: no element changes warp and no warp is a broadcast copy, so a warp
    barrier is enough."""
    if any(w == 0 for w in src.warp + dst.warp) or len(src.warp) != len(dst.warp):
        return False
    for i, w in enumerate(dst.warp):
        if preimage(src, w) != (0, 0, 1 << i):
            return False
    for x in dst.reg + dst.lane:
        pre = preimage(src, x)
        if pre is None or pre[2]:
            return False
    return True


def _thread_offset(kl, s: Side):
    """i32: XOR of the lane and warp images for this thread's ids."""
    b = kl.b
    acc = I32(0)
    for ident, imgs in ((kl.lane, s.lane_img), (kl.warp_uniform, s.warp_img)):
        for i, v in enumerate(imgs):
            if v:
                bit = b.and_(b.lshr(ident, I32(i)), I32(1))
                acc = b.xor(acc, b.mul(bit, I32(v)))
    return acc


def _sync(kl, warp_only: bool) -> None:
    if warp_only:  # PTX ISA 9.7.13.2 bar.warp.sync (also orders memory)
        kl.b.call(kl.intrinsic("llvm.nvvm.bar.warp.sync", ir.VoidType(), [I32]), [I32(-1)])
    else:
        barrier(kl)


def _emit(kl, s: Side, plan: SmemPlan, rnd: int, elem_t, vals=None):
    b = kl.b
    mask = 0
    for v in s.lane_img + s.warp_img:
        mask |= v
    lw = _thread_offset(kl, s)
    xors: dict = {}
    out: dict = {}
    for r, off, elems in accesses(s, plan):
        if r != rnd:
            continue
        x = off & mask
        if x not in xors:
            xors[x] = b.xor(lw, I32(x)) if x else lw
        idx = xors[x] if not off & ~mask else b.add(xors[x], I32(off & ~mask))
        ptr = slot(kl, 0, idx, elem_t)
        if vals is not None:
            vector_store(kl, ptr, [vals[e] for e in elems], elem_t)
        else:
            for e, v in zip(elems, vector_load(kl, ptr, elem_t, s.vec), strict=True):
                out[e] = v
    return out


def plan_for(src_t, dst_t, arch: int) -> SmemPlan:
    """The plan of converting tensor type ``src_t`` to ``dst_t`` on sm_``arch``."""
    from .threads import thread_layout
    fs, _ = flat_of(thread_layout(src_t))
    fd, _ = flat_of(thread_layout(dst_t))
    return plan_conversion(fs, fd, byte_size(src_t.element) * 8, arch)


def emitted_plan(plan: SmemPlan, src_t, dst_t) -> SmemPlan:
    """The plan the lowering emits: Triton's ``plan`` (which may pair ``stmatrix`` /
    ``ldmatrix``) when both its instructions fit the layouts, as they do by Triton's
    construction; otherwise (a side the matrix instructions here do not cover) the plain-access
    plan (``optimalSwizzlingLdSt``) when its round fits the same scratch and it needs no more
    instructions, since plain ``st/ld.shared`` on a buffer shaped for the matrix instructions
    may lose their vectors."""
    if plan.instr == (0, 0):
        return plan
    from .threads import thread_layout
    eb = byte_size(src_t.element)
    store_ok = plan.instr[0] == 0 or \
        matrix_store(side(thread_layout(src_t), plan, eb), plan, eb * 8) is not None
    load_ok = plan.instr[1] == 0 or matrix_load(side(thread_layout(dst_t), plan, eb),
                                                plan.instr[1] == 2, eb * 8,
                                                plan.tile_bits) is not None
    if store_ok and load_ok:
        return plan
    fs, _ = flat_of(thread_layout(src_t))
    fd, _ = flat_of(thread_layout(dst_t))
    alt = plan_ldst(fs, fd, byte_size(src_t.element) * 8)
    if alt.tile_bits > plan.tile_bits:
        return plan

    def instructions(p: SmemPlan) -> int:  # st + ld instructions per thread
        return sum(1 << len(side(thread_layout(t), p, eb).rest) for t in (src_t, dst_t))
    return alt if instructions(alt) <= instructions(plan) else plan


def lower_planned(kl, op, plan: SmemPlan) -> tuple:
    """Emit the conversion of ``op`` through the planned buffer; returns the (store, load)
    :class:`Side` s (for the access report)."""
    src_t, dst_t = op.operands[0].type, op.result.type
    elem_t = src_t.element
    eb = byte_size(elem_t)
    s_tl, d_tl = kl.layout(src_t), kl.layout(dst_t)
    st, ld = side(s_tl, plan, eb), side(d_tl, plan, eb)
    warp_only = warp_sync(st.flat, ld.flat)
    mst = matrix_store(st, plan, eb * 8) if plan.instr[0] in (1, 2) else None
    mat = None
    if plan.instr[1] in (1, 2):
        mat = matrix_load(ld, plan.instr[1] == 2, eb * 8, plan.tile_bits)
    src = kl.get(op.operands[0])
    got: dict = {}
    for rnd in range(1 << len(plan.reps)):
        if rnd:
            _sync(kl, warp_only)
        if mst is not None:
            store_round(kl, mst, plan, rnd, elem_t, eb, src)
        else:
            _emit(kl, st, plan, rnd, elem_t, src)
        _sync(kl, warp_only)
        if mat is not None:
            got.update(emit_ldmatrix(kl, mat, rnd, plan.tile_bits, elem_t, eb))
        else:
            got.update(_emit(kl, ld, plan, rnd, elem_t))
    kept_mask = 0
    for i in range(d_tl.num_regs.bit_length() - 1):
        if any(d_tl.regs[1 << i]):
            kept_mask |= 1 << i
    kl.set(op.result, [got[r & kept_mask] for r in range(d_tl.num_regs)])
    return (mst if mst is not None else st), (mat if mat is not None else ld)


__all__ = ["Side", "accesses", "address_map", "emitted_plan", "lower_planned", "plan_for", "side",
           "warp_sync"]
