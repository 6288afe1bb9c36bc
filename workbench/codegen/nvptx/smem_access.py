"""Shared-memory addressing: the ``global_smem`` buffer, barriers, swizzled element offsets and
vectorised loads and stores. Every lowering that touches shared memory builds on this module,
which imports none of them.

All shared memory of a kernel is one dynamic buffer ``global_smem`` (``.extern .shared .align
16 .b8 global_smem[]``, as Triton): the ``ttg.local_alloc`` buffers first (their offsets come
from :func:`workbench.codegen.nvptx.local_memory.plan`), then the scratch area that reductions,
scans and layout conversions reuse (``kl.scratch_base`` onwards).

Element ``(row, col)`` of a ``#ttg.swizzled_shared<{vec, perPhase, maxPhase, order}>`` buffer
(``col`` along ``order[0]``, ``ncols`` elements per row) is at element offset (Triton's
SwizzledSharedEncoding)::

    row * ncols + (((col / vec) ^ ((row / perPhase) % maxPhase)) * vec + col % vec)

and in a ``#ttg.nvmma_shared`` buffer at :func:`nvmma_offset_py` (the wgmma canonical layouts,
PTX ISA 9.7.15.5.1). Loads and stores are vectorised over a thread's contiguous registers (up
to 16 bytes, ``ld/st.shared.v4.b32``; PTX ISA 9.7.9.8 ld and 9.7.9.10 st, vector forms). Each
access can be recorded with its bank-conflict degree (:func:`record_access`, from
:func:`workbench.layouts.bank_conflicts`).
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import IntType, PointerType
from ...layouts.banks import conflict_summary
from ...layouts.encodings import NVMMASharedLayout, SwizzledSharedLayout
from .memory import pack_words, unpack_words
from .types import I8, I32, I64, SHARED_PTR, byte_size, llvm_type, memory_type


def smem_base(kl):
    """The ``global_smem`` global (``[0 x i8]`` in addrspace 3, align 16), declared once."""
    g = kl.module.globals.get("global_smem")
    if g is None:
        g = ir.GlobalVariable(kl.module, ir.ArrayType(I8, 0), "global_smem", addrspace=3)
        g.linkage = "external"
        g.align = 16
        g.type = SHARED_PTR  # an opaque pointer, so loads and stores of any type type-check
    return g


def barrier(kl) -> None:
    """``bar.sync 0`` (llvm.nvvm.barrier0; PTX ISA 9.7.13.1 bar): every thread of the CTA waits
    here. Barriers between ops come from ``tritongpu-insert-barriers``
    (:mod:`workbench.passes.insert_barriers`); ops call this only between their own shared
    stores and loads."""
    kl.b.call(kl.intrinsic("llvm.nvvm.barrier0", ir.VoidType(), []), [])


def fence_proxy_async(kl) -> None:
    """``fence.proxy.async.shared::cta`` (PTX ISA 9.7.13.4 membar/fence): order this thread's
    generic-proxy shared-memory accesses before later async-proxy ones (wgmma operand reads)."""
    fty = ir.FunctionType(ir.VoidType(), [])
    kl.b.call(ir.InlineAsm(fty, "fence.proxy.async.shared::cta;", "~{memory}",
                           side_effect=True), [])


def region_start(kl, base):
    """Pointer to byte ``base`` (int or i32) of ``global_smem``: the start of a buffer or of
    one slot of a multi-buffer."""
    return kl.b.gep(smem_base(kl), [I32(base) if isinstance(base, int) else base],
                    source_etype=I8)


def shared_address(kl, base, byte_off, start=None):
    """i32 shared-window address of ``global_smem + base + byte_off`` (``base``: int or i32
    bytes; ``byte_off``: i32 bytes; ``start``: :func:`region_start` of ``base`` if the caller
    has it).

    The address is formed as Triton forms it, the region's start (uniform across the CTA)
    first and the thread's offset second, two ``getelementptr``s rather than integer adds:
    LLVM's reassociation would otherwise group the loop-invariant thread offset with the
    constant and leave the slot offset of a pipelined buffer for the last add, and ptxas
    then computes the slot's address per thread instead of once in a uniform register."""
    b = kl.b
    start = region_start(kl, base) if start is None else start
    return b.ptrtoint(b.gep(start, [byte_off], source_etype=I8), I32)


def slot(kl, byte_offset: int, index, elem_t):
    """Pointer to element ``index`` (i32 LLVM value) of type ``elem_t`` (IR scalar type) in a
    shared region starting at ``byte_offset`` bytes after the scratch base."""
    b = kl.b
    byte_offset += getattr(kl, "scratch_base", 0)
    base = b.gep(smem_base(kl), [I32(byte_offset)], source_etype=I8) if byte_offset else \
        smem_base(kl)
    return b.gep(base, [index], source_etype=memory_type(elem_t))


def buffer_pointer(kl, base_off, off_elems, elem_t):
    """Pointer to element ``off_elems`` (i32) of a buffer at byte ``base_off`` of
    ``global_smem`` (an int, or an i32 value for a slot of a multi-buffer)."""
    if isinstance(base_off, int):
        return slot(kl, base_off - kl.scratch_base, off_elems, elem_t)
    return kl.b.gep(region_start(kl, base_off), [off_elems], source_etype=memory_type(elem_t))


def store_value(kl, ptr, value, elem_t) -> None:
    """Store one register to shared memory (i1 as a byte, pointers as i64)."""
    b = kl.b
    if isinstance(elem_t, IntType) and elem_t.width == 1:
        value = b.zext(value, I8)
    elif isinstance(elem_t, PointerType):
        value = b.ptrtoint(value, I64)
    b.store(value, ptr)


def load_value(kl, ptr, elem_t):
    """Load one register from shared memory (inverse of :func:`store_value`)."""
    b = kl.b
    v = b.load(ptr, typ=memory_type(elem_t))
    if isinstance(elem_t, IntType) and elem_t.width == 1:
        return b.icmp_unsigned("!=", v, ir.Constant(I8, 0))
    if isinstance(elem_t, PointerType):
        return b.inttoptr(v, llvm_type(elem_t))
    return v


def linear_index(kl, coords, shape):
    """Row-major index (i32) of per-dim i32 coordinates in ``shape``."""
    b = kl.b
    idx = None
    stride = 1
    for c, s in zip(reversed(coords), reversed(shape), strict=True):
        term = c if stride == 1 else b.mul(c, I32(stride))
        idx = term if idx is None else b.add(idx, term)
        stride *= s
    return idx if idx is not None else I32(0)


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
    """LLVM i32 form of :func:`nvmma_offset_py` for per-dim i32 ``coords``."""
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
    """Element offset of ``coord`` in a shared buffer of ``shape`` (rank 2; swizzled ones
    also rank 1, the element index, and rank 3 and more) on Python ints (the
    module docstring's formula; tests compare it with the layout algebra's
    :func:`workbench.layouts.banks.shared_offsets`)."""
    if isinstance(enc, NVMMASharedLayout):
        return nvmma_offset_py(enc, shape, coord)
    if len(shape) == 1:  # one row: no phase to swizzle by
        return coord[0]
    c, r = enc.order[0], enc.order[1]
    row, col = coord[r], coord[c]
    phase = (row // enc.per_phase) % enc.max_phase
    outer, size = 0, shape[r] * shape[c]
    for d in enc.order[2:]:  # further dims stack whole matrices, order[2] fastest
        outer += coord[d] * size
        size *= shape[d]
    return outer + row * shape[c] + ((col // enc.vec) ^ phase) * enc.vec + col % enc.vec


def swizzle_offset(kl, enc, shape, coords):
    """LLVM i32 element offset of per-dim i32 ``coords`` in a swizzled buffer of ``shape``.

    Raises UnsupportedError for buffers that are neither swizzled (any rank; rank 1 is the
    plain element index) nor rank-2 NVMMA shared."""
    if len(shape) == 2 and isinstance(enc, NVMMASharedLayout):
        return nvmma_offset(kl, enc, shape, coords)
    if not shape or not isinstance(enc, SwizzledSharedLayout):
        raise UnsupportedError(f"shared buffers of rank {len(shape)} / {enc} are not supported")
    if len(shape) == 1:  # one row (a pipelined 1-D load): no phase to swizzle by
        return coords[0]
    b = kl.b
    c, r = enc.order[0], enc.order[1]
    row, col = coords[r], coords[c]
    vec = enc.vec
    phase = b.urem(b.udiv(row, I32(enc.per_phase)), I32(enc.max_phase))
    hi = b.mul(b.xor(b.udiv(col, I32(vec)), phase), I32(vec))
    col2 = b.add(hi, b.urem(col, I32(vec)))
    off = b.add(b.mul(row, I32(shape[c])), col2)
    size = shape[r] * shape[c]
    for d in enc.order[2:]:  # a rank-3 buffer (batched dot operand): whole matrices stacked
        off = b.add(off, b.mul(coords[d], I32(size)))
        size *= shape[d]
    return off


def vector_limit(enc, elem_bytes: int) -> int:
    """Most elements one shared-memory access (or ``cp.async``) of a thread may move in a
    buffer of encoding ``enc``: 16 bytes, and within a swizzled buffer whose phase changes
    (``max_phase > 1``) the ``vec`` elements the XOR keeps together. Without a phase change
    (``max_phase == 1``, e.g. the ``vec = 1`` buffers of pipelined loads read in registers)
    a row is contiguous, so only the 16 bytes bound it (Triton 3.6 lowers shared accesses
    through linear layouts: the vector is the largest run contiguous in both the registers
    and shared memory)."""
    cap = max(1, 16 // elem_bytes)
    if isinstance(enc, SwizzledSharedLayout) and enc.max_phase == 1:
        return cap
    return max(1, min(enc.vec, cap))


def contiguous_run(tl, dim: int, limit: int) -> int:
    """Largest power of two ``v <= limit`` such that registers ``g..g+v-1`` of every aligned
    group of thread layout ``tl`` hold consecutive elements along ``dim`` and every other
    basis keeps groups aligned."""
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


def vector_store(kl, ptr, elems, elem_t) -> None:
    """Store the registers ``elems`` (IR scalar type ``elem_t``) at ``ptr`` as one vector of
    32-bit (64-bit for 8-byte types) words, aligned to its size; below 4 bytes one store per
    element."""
    b = kl.b
    nbytes = byte_size(elem_t) * len(elems)
    if nbytes < 4:
        for i, e in enumerate(elems):
            store_value(kl, b.gep(ptr, [I32(i)], source_etype=llvm_type(elem_t)) if i
                        else ptr, e, elem_t)
        return
    words = pack_words(b, elems, elem_t, 32 if byte_size(elem_t) < 8 else 64)
    vt = ir.VectorType(words[0].type, len(words))
    v = ir.Constant(vt, None)
    for i, w in enumerate(words):
        v = b.insert_element(v, w, I32(i))
    st = b.store(v if len(words) > 1 else words[0], ptr)
    st.align = nbytes


def vector_load(kl, ptr, elem_t, count: int) -> list:
    """``count`` registers of IR scalar type ``elem_t`` loaded from ``ptr`` as one vector
    (the inverse of :func:`vector_store`)."""
    b = kl.b
    nbytes = byte_size(elem_t) * count
    if nbytes < 4:
        lt = llvm_type(elem_t)
        return [load_value(kl, b.gep(ptr, [I32(i)], source_etype=lt) if i else ptr, elem_t)
                for i in range(count)]
    wbits = 32 if byte_size(elem_t) < 8 else 64
    n = nbytes * 8 // wbits
    wt = ir.IntType(wbits)
    ld = b.load(ptr, typ=ir.VectorType(wt, n) if n > 1 else wt)
    ld.align = nbytes
    words = [b.extract_element(ld, I32(i)) for i in range(n)] if n > 1 else [ld]
    return unpack_words(b, words, elem_t, count)


def record_access(kl, op, what: str, enc, layout, shape, elem_t, vec_bytes: int) -> None:
    """Append one entry to ``kl.shared_accesses``: ``what`` (a label), the op's location, the
    shared encoding ``enc``, the register ``layout`` accessing it, ``vec_bytes`` per lane and
    the bank-conflict degree and wavefronts of :func:`workbench.layouts.bank_conflicts`
    (through its cached summary, :func:`workbench.layouts.banks.conflict_summary`).
    Shapes the analysis cannot take (not powers of two) are not recorded."""
    try:
        degree, wavefronts = conflict_summary(enc, layout, shape,
                                              f"i{byte_size(elem_t) * 8}", vec_bytes)
        kl.shared_accesses.append({
            "op": what, "loc": op.loc, "layout": str(enc),
            "access_layout": str(layout), "vector_bytes": vec_bytes,
            "conflict_degree": degree, "wavefronts": wavefronts})
    except (ValueError, TypeError):  # shapes that are not powers of two: no report
        pass


def _coords_text(vs) -> str:
    return "[" + ", ".join("[" + ", ".join(str(int(c)) for c in v) + "]" for v in vs) + "]"


def matrix_rows_layout(row_coords, lane_coords, warp_coords, instr_coords, x: int):
    """The addressing of an ``ldmatrix``/``stmatrix`` access as a ``#ttg.linear`` layout, so
    that :func:`workbench.layouts.bank_conflicts` with 16 bytes per lane sees the rows the
    lanes really address (PTX ISA 9.7.9.16/17: lane ``t`` gives row ``t % 8`` of matrix
    ``t // 8``; a phase of 8 lanes is one matrix). All arguments are tensor coordinates:
    registers: ``row_coords`` (the elements 1, 2, 4, ... of a 16-byte row), then one bit per
    instruction-selecting basis (``instr_coords``); lanes: the 5 row-address bits
    (``lane_coords``, zeros where the instruction takes no address); warps: ``warp_coords``.
    With fewer than 4 matrices per instruction (``x``), the lanes past them take the next
    instructions' rows (so each 8-lane phase is still one matrix and the wavefronts are the
    instructions'); only when there are no more instructions do they repeat lane
    ``t % (8 x)``'s row, as the PTX lanes do. Returns the parsed encoding."""
    from ...layouts.parse import parse
    instr = [list(c) for c in instr_coords]
    lanes = []
    for i, c in enumerate(lane_coords):
        if i >= 3 + (x.bit_length() - 1) and instr:
            c = instr.pop(0)
        lanes.append(list(c))
    regs = [list(c) for c in row_coords] + instr
    return parse(f"#ttg.linear<{{register = {_coords_text(regs)}, lane = {_coords_text(lanes)}, "
                 f"warp = {_coords_text(warp_coords)}, block = []}}>")


def matrix_access_layout(coord_of, rank: int, row_elems: int, x: int, lane_imgs, warp_imgs,
                         instr_imgs):
    """:func:`matrix_rows_layout` from element offsets in the buffer: ``coord_of`` maps an
    offset to its tensor coordinate (``rank`` ints); ``row_elems`` elements per 16-byte row;
    ``lane_imgs`` (5), ``warp_imgs``, ``instr_imgs``: offsets of the row-address bits."""
    def c(v: int) -> list:
        return list(coord_of(v)) if v else [0] * rank
    rows = [c(1 << k) for k in range(row_elems.bit_length() - 1)]
    return matrix_rows_layout(rows, [c(v) for v in lane_imgs], [c(v) for v in warp_imgs],
                              [c(v) for v in instr_imgs], x)


__all__ = [
    "barrier", "buffer_pointer", "contiguous_run", "fence_proxy_async", "vector_limit",
    "matrix_access_layout", "matrix_rows_layout",
    "linear_index", "load_value", "nvmma_offset", "nvmma_offset_py", "record_access",
    "shared_address", "shared_order", "slot", "smem_base", "store_value", "swizzle_offset",
    "swizzle_offset_py", "vector_load", "vector_store",
]
