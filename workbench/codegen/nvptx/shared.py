"""Shared memory: the scratch buffer, barriers, and ``ttg.convert_layout``.

All ops that exchange data through shared memory use one dynamic buffer ``global_smem``
(``.extern .shared .align 16 .b8 global_smem[]``, as Triton) from offset 0; its size is the
maximum any op needs and becomes the kernel's ``shared`` metadata (dynamic shared memory at
launch). Each use is ``bar.sync 0; st.shared ...; bar.sync 0; ld.shared ...``: the first barrier
keeps the previous user's reads from racing with the new writes.

``ttg.convert_layout`` (reference 5.5): when both layouts give every thread the same
coordinates it is a register permutation; 2-D numeric tiles go through a swizzled buffer
(:mod:`.convert_smem`); otherwise each thread stores its registers at their row-major index in
shared memory and loads the registers of the destination layout.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import IntType, PointerType, TensorType
from .threads import register_map
from .types import I8, I32, I64, SHARED_PTR, byte_size, llvm_type


def smem_base(kl):
    """The ``global_smem`` global (``[0 x i8]`` in addrspace 3, align 16)."""
    g = kl.module.globals.get("global_smem")
    if g is None:
        g = ir.GlobalVariable(kl.module, ir.ArrayType(I8, 0), "global_smem", addrspace=3)
        g.linkage = "external"
        g.align = 16
        g.type = SHARED_PTR  # an opaque pointer, so loads and stores of any type type-check
    return g


def barrier(kl) -> None:
    """``bar.sync 0`` (llvm.nvvm.barrier0): every thread of the CTA waits here."""
    kl.b.call(kl.intrinsic("llvm.nvvm.barrier0", ir.VoidType(), []), [])
    sync = getattr(kl, "sync", None)
    if sync is not None:
        sync.reads = sync.writes = False


def slot(kl, byte_offset: int, index, elem_t):
    """Pointer to element ``index`` (i32 LLVM value) of type ``elem_t`` (IR scalar type) in a
    shared region starting at ``byte_offset`` bytes after the scratch base (the scratch area
follows the ``ttg.local_alloc`` buffers, :mod:`.smem`)."""
    b = kl.b
    byte_offset += getattr(kl, "scratch_base", 0)
    base = b.gep(smem_base(kl), [I32(byte_offset)], source_etype=I8) if byte_offset else \
        smem_base(kl)
    return b.gep(base, [index], source_etype=_mem_type(elem_t))


def _mem_type(t):
    if isinstance(t, IntType) and t.width == 1:
        return I8
    if isinstance(t, PointerType):
        return I64
    return llvm_type(t)


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
    v = b.load(ptr, typ=_mem_type(elem_t))
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
    for c, s in zip(reversed(coords), reversed(shape)):
        term = c if stride == 1 else b.mul(c, I32(stride))
        idx = term if idx is None else b.add(idx, term)
        stride *= s
    return idx if idx is not None else I32(0)


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
    from .convert_smem import eligible, lower_convert_swizzled
    if eligible(src_t, dst_t):
        return lower_convert_swizzled(kl, op)
    elem_t = src_t.element
    numel = 1
    for s in src_t.shape:
        numel *= s
    kl.need_shared(numel * byte_size(elem_t))
    barrier(kl)
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
