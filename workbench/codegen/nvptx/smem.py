"""Shared-memory buffers: ``ttg.local_alloc`` (registers -> swizzled shared memory) and
``ttg.local_load`` (shared memory -> registers, with ``ldmatrix`` for MMA operands).

Every ``local_alloc`` of the kernel gets its own region of ``global_smem`` (offsets assigned
up front by :func:`plan`, 128-byte aligned); the scratch area of reductions and conversions
starts after them. Element ``(row, col)`` of a ``#ttg.swizzled_shared<{vec, perPhase,
maxPhase, order}>`` buffer (``col`` along ``order[0]``) is at element offset (reference 4.6)::

    row * ncols + (((col / vec) ^ ((row / perPhase) % maxPhase)) * vec + col % vec)

Stores are vectorised over the source layout's contiguous registers (up to 16 bytes,
``st.shared.v4.b32``). Loads into a ``#ttg.dot_op`` of an MMA parent use
``ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16`` (PTX ISA 9.7.9.15 ldmatrix) when every
8x8 matrix row is 16 contiguous, 16-byte aligned bytes; otherwise one ``ld.shared`` per
contiguous run. Barriers come from :class:`SharedSync`: a write waits for earlier reads and
a read for earlier writes, once per phase, conservatively at control-flow joins.

Each access is recorded with its bank-conflict degree (``kl.shared_accesses``; computed by
:func:`workbench.layouts.bank_conflicts` for ``st/ld.shared`` and by :mod:`.ldmatrix` for
``ldmatrix``).
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import TensorType
from ...layouts import bank_conflicts
from ...layouts.encodings import (
    DotOperandLayout,
    MmaLayout,
    NVMMASharedLayout,
    SwizzledSharedLayout,
)
from . import shared
from .memory import pack_words, unpack_words
from .types import I32, byte_size, llvm_type


class SharedSync:
    """Tracks pending shared-memory reads and writes to place ``bar.sync`` only where needed."""

    def __init__(self):
        self.reads = self.writes = True

    def before_write(self, kl):
        if self.reads or self.writes:
            shared.barrier(kl)
            self.reads = self.writes = False
        self.writes = True

    def before_read(self, kl):
        if self.writes:
            shared.barrier(kl)
            self.writes = False
        self.reads = True

    def unknown(self):
        self.reads = self.writes = True


def plan(func_op) -> tuple[dict, int]:
    """Byte offset of every ``ttg.local_alloc`` result (by id) and the bytes they take.

    Offsets set by ``allocate-shared-memory`` (:mod:`workbench.passes.allocate_shared`, the
    ``allocation.offset`` attribute, total in the module's ``ttg.shared``) are kept; without
    that pass buffers are laid out one after another, 128-byte aligned."""
    offsets, off = {}, 0
    module = func_op.parent_op() if func_op.parent is not None else None
    assigned = module is not None and "ttg.shared" in module.attributes
    for op in func_op.walk():
        if op.name == "ttg.local_alloc":
            t = op.result.type
            n = byte_size(t.element)
            for s in t.shape:
                n *= s
            if assigned and "allocation.offset" in op.attributes:
                start = int(op.attributes["allocation.offset"])
            else:
                a = 1024 if isinstance(t.encoding, NVMMASharedLayout) else 128
                start = (off + a - 1) // a * a
                op.attributes["allocation.offset"] = start
            offsets[id(op.result)] = start
            off = max(off, start + (n + 127) // 128 * 128)
    if assigned:
        off = max(off, int(module.attributes["ttg.shared"]))
    return offsets, off


def shared_order(enc) -> tuple:
    """``order`` of a rank-2 shared encoding (fastest dim first): ``#ttg.swizzled_shared``'s
    own; ``#ttg.nvmma_shared``: (0, 1) when ``transposed`` (dim 0 contiguous), else (1, 0)."""
    if isinstance(enc, NVMMASharedLayout):
        return (0, 1) if enc.transposed else (1, 0)
    return tuple(enc.order)


def nvmma_offset_py(enc, shape, coord) -> int:
    """Element offset of ``coord`` in a rank-2 ``#ttg.nvmma_shared`` buffer of ``shape``:
    with ``r``/``c`` the non-contiguous/contiguous dims, ``TC = swizzle bytes / element
    bytes`` columns per swizzle atom (8 rows x swizzle bytes; PTX ISA 9.7.15.5.1)::

        (col / TC) * R * TC + row * TC + (((col % TC) / vec) ^ ((row / perPhase) % maxPhase)) * vec
        + col % vec

    i.e. atoms stacked along the rows, then column blocks of ``TC`` (no swizzle: row-major).
    Matches :func:`workbench.layouts.convert.nvmma_shared_to_linear`."""
    c, r = shared_order(enc)
    row, col = coord[r], coord[c]
    if not enc.swizzling_byte_width:
        return row * shape[c] + col
    tc = enc.swizzling_byte_width * 8 // enc.element_bit_width
    cc = col % tc
    phase = (row // enc.per_phase) % enc.max_phase
    return (col // tc) * shape[r] * tc + row * tc + ((cc // enc.vec) ^ phase) * enc.vec + \
        cc % enc.vec


def nvmma_offset(kl, enc, shape, coords):
    """LLVM i32 form of :func:`nvmma_offset_py`."""
    b = kl.b
    c, r = shared_order(enc)
    row, col = coords[r], coords[c]
    if not enc.swizzling_byte_width:
        return b.add(b.mul(row, I32(shape[c])), col)
    tc = enc.swizzling_byte_width * 8 // enc.element_bit_width
    vec = enc.vec
    cc = b.urem(col, I32(tc))
    phase = b.urem(b.udiv(row, I32(enc.per_phase)), I32(enc.max_phase))
    hi = b.mul(b.xor(b.udiv(cc, I32(vec)), phase), I32(vec))
    inner = b.add(hi, b.urem(cc, I32(vec)))
    blk = b.mul(b.udiv(col, I32(tc)), I32(shape[r] * tc))
    return b.add(b.add(blk, b.mul(row, I32(tc))), inner)


def swizzle_offset_py(enc, shape, coord) -> int:
    """The element offset formula above on Python ints (tests compare it with the layout
    algebra's :func:`workbench.layouts.banks.shared_offsets`)."""
    if isinstance(enc, NVMMASharedLayout):
        return nvmma_offset_py(enc, shape, coord)
    c, r = enc.order[0], enc.order[1]
    row, col = coord[r], coord[c]
    phase = (row // enc.per_phase) % enc.max_phase
    return row * shape[c] + ((col // enc.vec) ^ phase) * enc.vec + col % enc.vec


def swizzle_offset(kl, enc, shape, coords):
    """LLVM i32 element offset of per-dim i32 ``coords`` in a swizzled buffer of ``shape``."""
    if len(shape) == 2 and isinstance(enc, NVMMASharedLayout):
        return nvmma_offset(kl, enc, shape, coords)
    if len(shape) != 2 or not isinstance(enc, SwizzledSharedLayout):
        raise UnsupportedError(f"shared buffers of rank {len(shape)} / {enc} are not supported")
    b = kl.b
    c, r = enc.order[0], enc.order[1]
    row, col = coords[r], coords[c]
    vec = enc.vec
    phase = b.urem(b.udiv(row, I32(enc.per_phase)), I32(enc.max_phase))
    hi = b.mul(b.xor(b.udiv(col, I32(vec)), phase), I32(vec))
    col2 = b.add(hi, b.urem(col, I32(vec)))
    return b.add(b.mul(row, I32(shape[c])), col2)


def contiguous_run(tl, dim: int, limit: int) -> int:
    """Largest power of two ``v <= limit`` such that registers ``g..g+v-1`` of every aligned
    group hold consecutive elements along ``dim`` and every other basis keeps groups aligned."""
    v = 1
    while v * 2 <= min(limit, tl.num_regs):
        basis = tl.regs[v]
        if basis != tuple(v if d == dim else 0 for d in range(tl.rank)):
            break
        v *= 2
    others = list(tl.lane) + list(tl.warp) + [tl.regs[1 << i] for i in range(
        tl.num_regs.bit_length() - 1) if (1 << i) >= v]
    while v > 1 and any(x[dim] % v for x in others):
        v //= 2
    return v


def _record(kl, op, what, enc, layout, shape, elem_t, vec_bytes):
    try:
        rep = bank_conflicts(enc, layout, shape, f"i{byte_size(elem_t) * 8}", vec_bytes)
        kl.shared_accesses.append({
            "op": what, "loc": op.loc, "layout": str(enc),
            "access_layout": str(layout), "vector_bytes": vec_bytes,
            "conflict_degree": float(rep.conflict_degree),
            "wavefronts": int(sum(rep.wavefronts))})
    except (ValueError, TypeError):  # shapes that are not powers of two: no report
        pass


def _ptr(kl, base_off, off_elems, elem_t):
    """Pointer to element ``off_elems`` of a buffer at byte ``base_off`` of ``global_smem``
    (an int, or an i32 value for a slot of a multi-buffer)."""
    if isinstance(base_off, int):
        return shared.slot(kl, base_off - kl.scratch_base, off_elems, elem_t)
    b = kl.b
    start = b.gep(shared.smem_base(kl), [base_off], source_etype=ir.IntType(8))
    return b.gep(start, [off_elems], source_etype=shared._mem_type(elem_t))


def _vector_store(kl, ptr, elems, elem_t):
    b = kl.b
    nbytes = byte_size(elem_t) * len(elems)
    if nbytes < 4:
        for i, e in enumerate(elems):
            shared.store_value(kl, b.gep(ptr, [I32(i)], source_etype=llvm_type(elem_t)) if i
                               else ptr, e, elem_t)
        return
    words = pack_words(b, elems, elem_t, 32 if byte_size(elem_t) < 8 else 64)
    vt = ir.VectorType(words[0].type, len(words))
    v = ir.Constant(vt, None)
    for i, w in enumerate(words):
        v = b.insert_element(v, w, I32(i))
    st = b.store(v if len(words) > 1 else words[0], ptr)
    st.align = nbytes


def _vector_load(kl, ptr, elem_t, count):
    b = kl.b
    nbytes = byte_size(elem_t) * count
    if nbytes < 4:
        lt = llvm_type(elem_t)
        return [shared.load_value(kl, b.gep(ptr, [I32(i)], source_etype=lt) if i else ptr,
                                  elem_t) for i in range(count)]
    wbits = 32 if byte_size(elem_t) < 8 else 64
    n = nbytes * 8 // wbits
    wt = ir.IntType(wbits)
    ld = b.load(ptr, typ=ir.VectorType(wt, n) if n > 1 else wt)
    ld.align = nbytes
    words = [b.extract_element(ld, I32(i)) for i in range(n)] if n > 1 else [ld]
    return unpack_words(b, words, elem_t, count)


def lower_local_alloc(kl, op) -> None:
    """``ttg.local_alloc %src``: store the registers into the buffer (skipping duplicates)."""
    kl.set(op.result, [])
    if not op.operands:
        return
    src_v = op.operands[0]
    src_t, dst_t = src_v.type, op.result.type
    enc = dst_t.encoding
    base = kl.smem_offsets[id(op.result)]
    tl = kl.layout(src_t)
    elem_t = src_t.element
    limit = max(1, min(enc.vec, 16 // byte_size(elem_t)))
    v = contiguous_run(tl, shared_order(enc)[0], limit)
    regs = kl.get(src_v)
    coords = kl.coords(src_t)
    kl.sync.before_write(kl)
    seen = set()
    for g in range(0, tl.num_regs, v):
        if tl.regs[g] in seen:
            continue
        seen.add(tl.regs[g])
        off = swizzle_offset(kl, enc, dst_t.shape, coords[g])
        _vector_store(kl, _ptr(kl, base, off, elem_t), regs[g:g + v], elem_t)
    if isinstance(enc, NVMMASharedLayout):
        # wgmma reads shared memory through the async proxy: order these generic-proxy
        # stores before it (PTX ISA 9.7.13.4.x membar/fence: fence.proxy.async); the barrier
        # before the wgmma makes them visible to the other threads.
        from .wgmma import fence_proxy_async
        fence_proxy_async(kl)
    _record(kl, op, f"ttg.local_alloc (st.shared, {v * byte_size(elem_t)} B/lane)", enc,
            src_t.encoding, tuple(src_t.shape), elem_t, v * byte_size(elem_t))


def lower_local_load(kl, op) -> None:
    """``ttg.local_load %buf``: registers of the result layout (``ldmatrix`` when it fits)."""
    src_v = op.operands[0]
    mem_t, dst_t = src_v.type, op.result.type
    enc = mem_t.encoding
    base = kl.smem_offsets.get(id(src_v))
    if base is None:
        raise UnsupportedError("ttg.local_load of a buffer not made by ttg.local_alloc", op.loc)
    elem_t = mem_t.element
    kl.sync.before_read(kl)
    lay = dst_t.encoding
    if isinstance(lay, DotOperandLayout) and isinstance(lay.parent, MmaLayout):
        from .ldmatrix import ldmatrix_load
        regs = ldmatrix_load(kl, op, enc, base, elem_t)
        if regs is not None:
            kl.set(op.result, regs)
            return
    tl = kl.layout(dst_t)
    limit = max(1, min(enc.vec, 16 // byte_size(elem_t)))
    v = contiguous_run(tl, shared_order(enc)[0], limit)
    coords = kl.coords(dst_t)
    out = [None] * tl.num_regs
    first = {}
    for g in range(0, tl.num_regs, v):
        if tl.regs[g] in first:
            src = first[tl.regs[g]]
            out[g:g + v] = out[src:src + v]
            continue
        first[tl.regs[g]] = g
        off = swizzle_offset(kl, enc, mem_t.shape, coords[g])
        out[g:g + v] = _vector_load(kl, _ptr(kl, base, off, elem_t), elem_t, v)
    _record(kl, op, f"ttg.local_load (ld.shared, {v * byte_size(elem_t)} B/lane)", enc, lay,
            tuple(mem_t.shape), elem_t, v * byte_size(elem_t))
    kl.set(op.result, out)


__all__ = ["SharedSync", "plan", "swizzle_offset", "swizzle_offset_py", "contiguous_run",
           "shared_order", "nvmma_offset", "nvmma_offset_py",
           "lower_local_alloc", "lower_local_load", "TensorType"]
