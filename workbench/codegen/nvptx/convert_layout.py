"""``ttg.convert_layout``: a register permutation, or a round trip through shared memory.

When both layouts give every thread the same coordinates the conversion is a register
permutation (:func:`.threads.register_map`). Otherwise data crosses threads and each thread
stores its registers and loads the registers of the destination layout, as Triton 3.6 does:

* tensors of power-of-two shape with numeric elements go through the buffer Triton's
  ``optimalSwizzling`` chooses (:mod:`.cvt_swizzle`): vectorised ``st/ld.shared`` (up to 16
  bytes), bank conflicts avoided by XOR-ed segments, and moved in rounds when some register
  bases are registers in both layouts, so the scratch holds one round (``reps``) of the tile
  (:mod:`.cvt_lower`). The two accesses are listed in ``kl.shared_accesses`` with their
  conflict degree from :func:`workbench.layouts.bank_conflicts`;
* anything else (i1, pointers) is stored at its row-major index in the scratch area and
  loaded back.
"""
from __future__ import annotations

import functools

from ...errors import UnsupportedError
from ...ir.types import FloatType, IntType, TensorType
from ...layouts import LinearLayout
from .cvt_ldmatrix import access_layout as ldmatrix_access_layout
from .cvt_lower import emitted_plan, lower_planned, plan_for
from .cvt_stmatrix import CvtStore
from .cvt_swizzle import xor_image
from .smem_access import (
    barrier,
    linear_index,
    load_value,
    matrix_access_layout,
    record_access,
    slot,
    store_value,
)
from .threads import register_map, thread_layout
from .types import byte_size


def _pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


def eligible(src_t, dst_t) -> bool:
    """Power-of-two shape, int (not i1) or float elements (the planned conversions)."""
    e = src_t.element
    ok_t = isinstance(e, FloatType) or (isinstance(e, IntType) and e.width >= 8)
    return ok_t and len(src_t.shape) >= 1 and all(_pow2(s) for s in src_t.shape)


def _arch(op) -> int:
    """SM version from the enclosing module's ``ttg.target`` (``"cuda:90"``); 80 without."""
    o = op
    while o is not None:
        t = getattr(o, "attributes", {}).get("ttg.target")
        if t is not None:
            text = str(getattr(t, "value", t)).strip('"')
            if text.startswith("cuda:"):
                return int(text[5:])
        o = o.parent_op()
    return 80


def _crosses_threads(src_t, dst_t) -> bool:
    try:
        register_map(thread_layout(src_t), thread_layout(dst_t), lambda c: c)
        return False
    except UnsupportedError:
        return True


def scratch_bytes(op) -> int:
    """Bytes of shared scratch ``ttg.convert_layout`` ``op`` needs: 0 for a register
    permutation (or a scalar); for the planned conversions (:func:`eligible`) one round of
    Triton's buffer (``numel / 2**len(reps)`` elements, ``getNumScratchElemsSwizzledCvt`` of
    ``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/Allocation.cpp``); else the whole tile."""
    src_t, dst_t = op.operands[0].type, op.result.type
    if not isinstance(src_t, TensorType):
        return 0
    return _scratch_for(src_t, dst_t, _arch(op))


@functools.lru_cache(maxsize=4096)
def _scratch_for(src_t, dst_t, arch: int) -> int:
    """:func:`scratch_bytes` of a conversion from tensor type ``src_t`` to ``dst_t`` (frozen,
    hashable) on sm_``arch``; cached, as the allocation and barrier passes and the lowering
    ask for every conversion several times."""
    if not _crosses_threads(src_t, dst_t):
        return 0
    numel = 1
    for s in src_t.shape:
        numel *= s
    if eligible(src_t, dst_t):
        plan = plan_for(src_t, dst_t, arch)
        numel >>= len(plan.reps)
    return numel * byte_size(src_t.element)


def _plan_layout(plan, shape):
    """The buffer as a LinearLayout ``offset -> dims`` (rounds as the high offset bits), for
    the bank-conflict report."""
    bases = []
    for v in plan.columns:
        c = []
        for s in shape:
            c.append(v % s)
            v //= s
        bases.append(c)
    return LinearLayout({"offset": bases}, {f"dim{i}": s for i, s in enumerate(shape)})


def _offset_coords(plan, shape):
    """Element offset in the planned buffer (rounds as the high bits) -> tensor coordinate."""
    def coord_of(o: int) -> list:
        v = xor_image(o, plan.columns)
        out = []
        for s in shape:
            out.append(v % s)
            v //= s
        return out
    return coord_of


def _matrix_record(plan, shape, access):
    """(label, addressing layout) of a ``stmatrix`` store (:class:`.cvt_stmatrix.CvtStore`)
    or an ``ldmatrix`` load (:class:`.cvt_ldmatrix.MatrixLoad`) of the planned buffer."""
    coord_of = _offset_coords(plan, shape)
    if isinstance(access, CvtStore):
        m = access.m
        lay = matrix_access_layout(coord_of, len(shape), m.row_elems, m.x, m.addr_imgs,
                                   m.warp_imgs, m.instr_imgs + access.round_imgs)
        return f"stmatrix.x{m.x}{'.trans' if m.trans else ''}", lay
    return ldmatrix_access_layout(access, coord_of, len(shape))


def lower_convert_swizzled(kl, op) -> None:
    """Store the source registers into Triton's conversion buffer and load the destination's,
    one round at a time (:mod:`.cvt_lower`). Both accesses are recorded with the addresses
    the lanes use: ``st/ld.shared`` by the register layouts, ``stmatrix``/``ldmatrix`` by their
    row addresses (:func:`.smem_access.matrix_access_layout`)."""
    src_t, dst_t = op.operands[0].type, op.result.type
    plan = emitted_plan(plan_for(src_t, dst_t, kl.arch), src_t, dst_t)
    kl.need_shared(scratch_bytes(op))
    st, ld = lower_planned(kl, op, plan)
    eb = byte_size(src_t.element)
    shape = tuple(src_t.shape)
    ll = _plan_layout(plan, shape)
    for kind, access, t in (("st.shared", st, src_t), ("ld.shared", ld, dst_t)):
        if isinstance(access, CvtStore) or hasattr(access, "mat_regs"):
            what, lay = _matrix_record(plan, shape, access)
            record_access(kl, op, f"ttg.convert_layout ({what}, 16 B/lane)", ll, lay, shape,
                          src_t.element, 16)
        else:
            vb = access.vec * eb
            record_access(kl, op, f"ttg.convert_layout ({kind}, {vb} B/lane)", ll,
                          t.encoding, shape, src_t.element, vb)


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


__all__ = ["eligible", "lower_convert", "lower_convert_swizzled", "scratch_bytes"]
