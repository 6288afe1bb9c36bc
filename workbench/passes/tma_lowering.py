"""``triton-nvidia-tma-lowering``: tensor descriptor loads, stores and atomics -> TMA copies and
reductions on sm_90
(Triton 3.6's ``lib/Dialect/TritonNvidiaGPU/Transforms/TMALowering.cpp``, with the shared
encoding ``triton-nvidia-optimize-descriptor-encoding`` gives a descriptor).

Each descriptor (kernel argument or ``tt.make_tensor_descriptor``) gets a
``#ttg.nvmma_shared`` encoding in its block type (``!tt.tensordesc<tensor<32x64xf32,
#shared>>``): the encoding of the ``ttg.local_alloc`` its
loads feed when that is a non-transposed ``nvmma_shared`` (a wgmma operand), else Triton's
default for the block (:func:`descriptor_encoding`). Then

* ``tt.make_tensor_descriptor`` becomes ``ttg.global_scratch_alloc`` (128 bytes, 128-byte
  aligned, in this program's slice of the launch's global scratch), ``ttng.tensormap_create``
  (box, dims innermost first, byte strides, element type, swizzle and fill mode),
  ``ttng.tensormap_fenceproxy_acquire`` and ``ttng.reinterpret_tensor_descriptor``;
* ``tt.descriptor_load`` becomes a mutable ``ttg.local_alloc`` of the tile, a 1-element i64
  ``ttg.local_alloc`` for the barrier, ``ttng.init_barrier`` (1 arrival),
  ``ttng.barrier_expect`` (the tile's bytes), ``ttng.async_tma_copy_global_to_local``,
  ``ttng.wait_barrier`` (phase 0), ``ttng.inval_barrier`` and a ``ttg.local_load``; a
  ``ttg.local_alloc`` of the loaded tile in the same encoding reads the TMA buffer directly
  (the local_load/local_alloc pair folds away, as Triton's canonicalisation does);
* ``tt.descriptor_store`` becomes ``ttg.local_alloc`` of the value (looking through a
  ``ttg.convert_layout``), ``ttng.fence_async_shared``, ``ttng.async_tma_copy_local_to_global``
  and ``ttng.async_tma_store_wait {pendings = 0}``;
* ``tt.descriptor_reduce`` (``desc.atomic_add`` ... ``atomic_xor``) is lowered as the store,
  with ``ttng.async_tma_reduce <kind>`` in place of the copy (Triton's ``TMAReduceLowering``):
  the TMA unit reduces each element into global memory, atomically per element (relaxed),
  with the operation's type taken from the tensor map (so signed and unsigned integers differ
  by the map's element type, and float16/bfloat16 min/max exist).

:func:`tma_unsupported` says why a module cannot take this path (the backend then lowers its
descriptors to pointers): gathers and scatters through a descriptor, a descriptor carried by a
loop or an ``if``, ranks other than 2, an unswizzled block wider than a TMA box (256
elements) with more than one row, and a device-side descriptor whose base is not a kernel
argument known to be 16-byte aligned (``tt.divisibility = 16``; Triton does not check this
one). :func:`tma_only_reduce` finds the atomics the pointer lowering cannot do (16-bit float
min/max), which the backend then refuses.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..ir import types as irt
from ..ir.builder import Builder
from ..ir.core import Operation, Value, functions
from ..layouts.encodings import NVMMASharedLayout, SwizzledSharedLayout
from .manager import Pass

#: the TMA unit's largest box extent per dimension (CUDA driver API, cuTensorMapEncodeTiled)
BOX_MAX = 256
#: host ``CUtensorMapDataType`` of an element type name (CUDA driver API); Triton's device
#: enum (TMAUtilities.cpp) differs for f64/bf16, the host values are the ones encoded here
#: (signless and unsigned integers: U8/U16/U32/U64; signed 32/64-bit: S32/S64)
HOST_DTYPE = {"i8": 0, "i16": 1, "i32": 2, "i64": 4, "f16": 6, "f32": 7, "f64": 8, "bf16": 9,
              "f8E4M3FN": 0, "f8E5M2": 0}
_SIGNED_DTYPE = {"i32": 3, "i64": 5}
_BARRIER_ENC = SwizzledSharedLayout(1, 1, 1, (0,))


def descriptor_encoding(block: irt.TensorType) -> NVMMASharedLayout:
    """Triton's default shared encoding of a descriptor block (``NVMMASharedEncodingAttr``'s
    builder, row-major order): the largest of 128/64/32-byte swizzle that the contiguous
    dimension's bytes are a multiple of (and at least), none when the outer dims hold fewer
    than 8 rows or the block is 1-D."""
    bits = _bits(block.element)
    contig = int(block.shape[-1]) * bits // 8
    swz = next((s for s in (128, 64, 32) if contig >= s and contig % s == 0), 0)
    if len(block.shape) < 2 or prod(block.shape[:-1]) < 8:
        swz = 0
    return NVMMASharedLayout(swz, False, bits)


def tma_block_shape(enc: NVMMASharedLayout, shape) -> list:
    """The TMA box of a ``shape`` tile in ``enc`` (Triton's ``getTMABlockShape``): every dim at
    most 256, the contiguous one exactly the swizzle width when swizzled."""
    box = [min(int(s), BOX_MAX) for s in shape]
    if enc.swizzling_byte_width:
        box[-1] = enc.swizzling_byte_width * 8 // enc.element_bit_width
    return box


def box_origin(m: int, counts, box) -> tuple[int, int]:
    """The tile coordinate of the first element of TMA box ``m`` of a rank-2 buffer cut into
    ``counts`` boxes of ``box`` elements per dim: the low part of ``m`` runs along dim 0
    (Triton's ``getMsgToPackedOffsetLayout``)."""
    return m % counts[0] * box[0], m // counts[0] * box[1]


def swizzle_mode(enc: NVMMASharedLayout) -> int:
    """``CUtensorMapSwizzle`` of ``enc``: 0 none, 1 32B, 2 64B, 3 128B."""
    return {0: 0, 32: 1, 64: 2, 128: 3}[enc.swizzling_byte_width]


def tensormap_meta(t: irt.TensorDescType) -> dict:
    """What the host needs to encode the tensor map of a descriptor of type ``t`` (after this
    pass: its block carries the encoding), as Triton's ``tensordesc_meta``: ``swizzle``,
    ``elem_size`` (bytes), ``elem_type`` (host ``CUtensorMapDataType``), ``block_size`` (the
    box, outermost dim first)."""
    enc = t.block.encoding
    assert isinstance(enc, NVMMASharedLayout)
    name = str(t.block.element)
    code = _SIGNED_DTYPE.get(name, HOST_DTYPE.get(name)) if t.signedness == "s" \
        else HOST_DTYPE.get(name)
    return {"swizzle": swizzle_mode(enc), "elem_size": _bits(t.block.element) // 8,
            "elem_type": code, "block_size": tma_block_shape(enc, t.block.shape)}


def _bits(t) -> int:
    return max(int(getattr(t, "width", 8)), 8)


def _desc_args(func: Operation) -> list:
    return [a for a in func.regions[0].block.args if isinstance(a.type, irt.TensorDescType)]


def _desc_reason(a: Value) -> str | None:
    """Why the descriptor value ``a`` (a kernel argument or a ``tt.make_tensor_descriptor``
    result) cannot use TMA, or None."""
    t = a.type
    assert isinstance(t, irt.TensorDescType)
    if len(t.block.shape) != 2:
        return f"a descriptor of rank {len(t.block.shape)} (TMA is used for rank 2)"
    if _bits(t.block.element) not in (8, 16, 32, 64) or \
            str(t.block.element) not in HOST_DTYPE:
        return f"a descriptor of {t.block.element}"
    enc = descriptor_encoding(t.block)
    if not enc.swizzling_byte_width and int(t.block.shape[-1]) > BOX_MAX and \
            prod(t.block.shape[:-1]) > 1:  # one row: its boxes lie end to end, row-major
        return "an unswizzled block wider than one TMA box (256 elements)"
    for user, i in a.uses:
        if user.name not in _TMA_USES or i != 0:
            return f"a descriptor used by {user.name}"
    return None


#: the descriptor ops this pass lowers
_TMA_USES = ("tt.descriptor_load", "tt.descriptor_store", "tt.descriptor_reduce")
#: ``tt.descriptor_reduce`` kinds and element types only the TMA unit reduces (no 16-bit float
#: ``atom.min``/``atom.max`` exists; Triton allows them only with native TMA)
_TMA_ONLY = {("min", "f16"), ("max", "f16"), ("min", "bf16"), ("max", "bf16")}


def tma_only_reduce(module: Operation) -> Operation | None:
    """The first ``tt.descriptor_reduce`` of ``module`` that only TMA can perform (float16 or
    bfloat16 ``min``/``max``), or None."""
    for op in module.walk():
        if op.name == "tt.descriptor_reduce":
            t = op.operands[-1].type
            elem = str(t.element) if isinstance(t, irt.TensorType) else ""
            if (op.attributes.get("kind"), elem) in _TMA_ONLY:
                return op
    return None


def _base_reason(base: Value) -> str | None:
    """None when ``base`` is a kernel argument specialised as divisible by 16 (a tensor map
    needs a 16-byte aligned address), else why not."""
    block = base.owner
    func = block.parent.parent if getattr(block, "parent", None) is not None else None
    if base.defining_op is None and func is not None and func.name == "tt.func":
        attrs = (func.attributes.get("arg_attrs") or [])
        if base.index < len(attrs) and (attrs[base.index] or {}).get("tt.divisibility", 1) \
                % 16 == 0:
            return None
    return "a base pointer not known to be 16-byte aligned"


def _rank_reducing(load: Operation) -> bool:
    """A ``tt.descriptor_load`` whose result has fewer dims than the descriptor's block."""
    t, d = load.result.type, load.operands[0].type
    return isinstance(t, irt.TensorType) and isinstance(d, irt.TensorDescType) and \
        t.rank != d.block.rank


def tma_unsupported(module: Operation) -> str | None:
    """Why ``module`` (ttir) cannot lower its descriptors to TMA, or None when it can."""
    for op in module.walk():
        if op.name == "tt.make_tensor_descriptor":
            reason = _desc_reason(op.result) or _base_reason(op.operands[0])
            if reason is not None:
                return f"{reason} (tl.make_tensor_descriptor)"
        if op.name in ("tt.descriptor_gather", "tt.descriptor_scatter"):
            return f"{op.name} (TMA is used for load, store and atomics)"
        if op.name == "tt.descriptor_load" and _rank_reducing(op):
            return "a rank-reducing descriptor load (leading unit dims dropped by " \
                   "triton-combine)"
    for func in functions(module) if module.name == "builtin.module" else [module]:
        for a in _desc_args(func):
            reason = _desc_reason(a)
            if reason is not None:
                return reason
    return None


def wanted_encoding(a: Value, block: irt.TensorType) -> NVMMASharedLayout:
    """The encoding of the slots a pipelined TMA copy of ``a`` fills (:mod:`.pipeline_tma`),
    else of the first ``ttg.local_alloc`` a load of ``a`` feeds, when it is a
    non-transposed nvmma_shared of the block's shape (``findLoadEncodingFromUsers``)."""
    for user, _ in a.uses:  # the slots the pipeliner's TMA copies fill come first
        if user.name == "ttng.async_tma_copy_global_to_local":
            dst = user.operands[-3].type
            if isinstance(dst, irt.MemDescType) and isinstance(dst.encoding, NVMMASharedLayout):
                return dst.encoding
    for user, _ in a.uses:
        if user.name != "tt.descriptor_load":
            continue
        for use, _ in user.result.uses:
            t = use.results[0].type if use.results else None
            if use.name == "ttg.local_alloc" and isinstance(t, irt.MemDescType) and \
                    isinstance(t.encoding, NVMMASharedLayout) and not t.encoding.transposed \
                    and tuple(t.shape) == tuple(block.shape):
                return t.encoding
    return descriptor_encoding(block)


def _set_encodings(func: Operation) -> None:
    block = func.regions[0].block
    for a in _desc_args(func):
        t = a.type
        assert isinstance(t, irt.TensorDescType)
        enc = wanted_encoding(a, t.block)
        a.type = irt.TensorDescType(t.block.with_encoding(enc), t.signedness)
    ftype = func.attributes.get("function_type")
    if isinstance(ftype, irt.FunctionType):
        func.attributes["function_type"] = irt.FunctionType(
            tuple(v.type for v in block.args), ftype.results)


#: Triton's device-side TMA element types (``TMA_ELEMENT_TYPES`` of TMAUtilities.cpp), which
#: ``tensormap.replace.tile.elemtype`` takes (PTX ISA 9.7.9.28)
DEVICE_DTYPE = {"i8": 0, "i16": 1, "i32": 2, "i64": 4, "f16": 6, "f32": 7, "f64": 9, "bf16": 10,
                "f8E4M3FN": 0, "f8E5M2": 0}
#: bytes and alignment of a tensor map in global scratch (Triton's TMA_SIZE_BYTES / TMA_ALIGN)
TMA_SIZE_BYTES = 128
TMA_ALIGN = 128


def device_elem_type(t: irt.TensorDescType) -> int:
    """The device-side TMA element type code of descriptor type ``t`` (S32/S64 for signed
    32/64-bit integers)."""
    name = str(t.block.element)
    if t.signedness == "s" and name in ("i32", "i64"):
        return {"i32": 3, "i64": 5}[name]
    return DEVICE_DTYPE[name]


class _Lowering:
    """The rewrite of one function; ``true``/``zero``: the i1 and i32 constants at its top."""

    def __init__(self, func: Operation):
        entry = func.regions[0].block
        b = Builder(entry, 0)
        self.true = b.create("arith.constant", [], [irt.i1], {"value": True}).result
        self.zero = b.create("arith.constant", [], [irt.i32], {"value": 0}).result

    def make(self, op: Operation) -> None:
        """``tt.make_tensor_descriptor`` -> a tensor map built in this program's global
        scratch (``createTMADesc`` and ``TMACreateDescLowering`` of Triton)."""
        t = op.result.type
        assert isinstance(t, irt.TensorDescType)
        enc = wanted_encoding(op.result, t.block)
        desc_t = irt.TensorDescType(t.block.with_encoding(enc), t.signedness)
        rank = len(t.block.shape)
        shape = list(op.operands[1:1 + rank])
        strides = list(op.operands[1 + rank:1 + 2 * rank])
        name = op.result.name
        b = Builder(loc=op.loc)
        b.set_insertion_point_before(op)

        def const(v, ty):
            return b.create("arith.constant", [], [ty], {"value": v}).result
        scratch = b.create("ttg.global_scratch_alloc", [], [irt.PointerType(irt.i8)],
                           {"alignment": TMA_ALIGN, "nbytes": TMA_SIZE_BYTES},
                           result_name=name).result
        es = const(_bits(t.block.element) // 8, irt.i64)
        byte_strides = [b.create("arith.muli", [strides[k], es], [irt.i64],
                                 result_name=name).result for k in range(rank - 2, -1, -1)]
        box = [const(x, irt.i32) for x in reversed(tma_block_shape(enc, t.block.shape))]
        ones = [const(1, irt.i32)] * rank
        dims = list(reversed(shape))
        attrs = {"elem_type": device_elem_type(t),
                 "fill_mode": 1 if op.attributes.get("padding") == "nan" else 0,
                 "interleave_layout": 0, "swizzle_mode": swizzle_mode(enc),
                 "operandSegmentSizes": [1, 1, rank, rank, rank - 1, rank]}
        b.create("ttng.tensormap_create", [scratch, op.operands[0], *box, *dims,
                                           *byte_strides, *ones], [], attrs)
        b.create("ttng.tensormap_fenceproxy_acquire", [scratch], [])
        desc = b.create("ttng.reinterpret_tensor_descriptor", [scratch], [desc_t],
                        result_name=name).result
        op.result.replace_all_uses_with(desc)
        op.erase()

    def load(self, op: Operation) -> None:
        desc = op.operands[0]
        dt = desc.type
        assert isinstance(dt, irt.TensorDescType)
        res_t = op.result.type
        assert isinstance(res_t, irt.TensorType)
        enc = dt.block.encoding
        name = op.result.name
        b = Builder(loc=op.loc)
        b.set_insertion_point_before(op)
        mem_t = irt.MemDescType(tuple(res_t.shape), res_t.element, enc, True)
        buf = b.create("ttg.local_alloc", [], [mem_t], result_name=name).result
        bar_t = irt.MemDescType((1,), irt.i64, _BARRIER_ENC, True)
        bar = b.create("ttg.local_alloc", [], [bar_t], result_name=name).result
        b.create("ttng.init_barrier", [bar], [], {"count": 1})
        nbytes = prod(res_t.shape) * _bits(res_t.element) // 8
        b.create("ttng.barrier_expect", [bar, self.true], [], {"size": nbytes})
        b.create("ttng.async_tma_copy_global_to_local",
                 [desc, *op.operands[1:], buf, bar, self.true], [])
        b.create("ttng.wait_barrier", [bar, self.zero], [])
        b.create("ttng.inval_barrier", [bar], [])
        for user, _ in list(op.result.uses):
            ut = user.results[0].type if user.name == "ttg.local_alloc" else None
            if isinstance(ut, irt.MemDescType) and ut.encoding == enc and \
                    tuple(ut.shape) == tuple(mem_t.shape):
                user.result.replace_all_uses_with(buf)
                user.erase()
        for view, _ in buf.uses:  # a transposed view of the buffer is mutable too
            vt = view.result.type if view.name == "ttg.memdesc_trans" else None
            if isinstance(vt, irt.MemDescType):
                view.result.type = irt.MemDescType(vt.shape, vt.element, vt.encoding, True)
        if op.result.uses:
            ld = b.create("ttg.local_load", [buf], [res_t], result_name=name)
            op.result.replace_all_uses_with(ld.result)
        op.erase()

    def store(self, op: Operation) -> None:
        """``tt.descriptor_store`` -> TMA copy, ``tt.descriptor_reduce`` -> TMA reduction
        (``lowerTMAStore`` of Triton, shared by both)."""
        desc, src = op.operands[0], op.operands[-1]
        dt = desc.type
        assert isinstance(dt, irt.TensorDescType)
        cvt = src.defining_op
        if cvt is not None and cvt.name == "ttg.convert_layout" and len(src.uses) == 1:
            src = cvt.operands[0]
        else:
            cvt = None
        st = src.type
        assert isinstance(st, irt.TensorType)
        b = Builder(loc=op.loc)
        b.set_insertion_point_before(op)
        mem_t = irt.MemDescType(tuple(st.shape), st.element, dt.block.encoding, False)
        buf = b.create("ttg.local_alloc", [src], [mem_t]).result
        b.create("ttng.fence_async_shared", [], [], {"bCluster": False})
        if op.name == "tt.descriptor_reduce":
            b.create("ttng.async_tma_reduce", [desc, *op.operands[1:-1], buf], [],
                     {"kind": op.attributes["kind"]})
        else:
            b.create("ttng.async_tma_copy_local_to_global",
                     [desc, *op.operands[1:-1], buf], [])
        b.create("ttng.async_tma_store_wait", [], [], {"pendings": 0})
        op.erase()
        if cvt is not None and not cvt.result.uses:
            cvt.erase()


def lower_function(func: Operation) -> bool:
    """Lower the descriptor loads, stores and atomics of ``func`` (a ``tt.func`` of ttgir) in
    place; returns whether it had any."""
    ops = [op for op in func.walk() if op.name in _TMA_USES]
    makes = [op for op in func.walk() if op.name == "tt.make_tensor_descriptor"]
    if not ops and not makes and not _desc_args(func):
        return False
    _set_encodings(func)
    lw = _Lowering(func)
    for op in makes:
        lw.make(op)
    for op in ops:
        if op.name == "tt.descriptor_load":
            lw.load(op)
        else:
            lw.store(op)
    for c in (lw.true, lw.zero):
        if not c.uses and c.defining_op is not None:
            c.defining_op.erase()
    return True


@dataclass
class TMALowering(Pass):
    """The ``triton-nvidia-tma-lowering`` pass (no options); see the module docstring. Run on
    ttgir (layouts assigned) of a module :func:`tma_unsupported` accepts."""

    name = "triton-nvidia-tma-lowering"

    def run(self, module: Operation, ctx=None) -> None:
        for func in functions(module):
            lower_function(func)


__all__ = ["DEVICE_DTYPE", "TMALowering", "box_origin", "descriptor_encoding",
           "device_elem_type", "lower_function", "swizzle_mode",
           "tensormap_meta", "tma_block_shape", "tma_only_reduce", "tma_unsupported",
           "wanted_encoding"]
