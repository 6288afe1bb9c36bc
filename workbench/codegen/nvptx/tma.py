"""Hopper TMA copies and shared-memory barriers (the ``ttng`` ops of
:mod:`workbench.passes.tma_lowering`), as Triton 3.6 lowers them
(``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp`` and
``BarrierOpToLLVM.cpp``).

* A descriptor kernel parameter is the 128-byte ``CUtensorMap`` itself, passed by value:
  ``ptr byval([128 x i8]) align 64 "nvvm.grid_constant"``, which LLVM prints as
  ``.param .align 64 .b8 name[128]`` and addresses with ``cvta.param`` (the tensor map must
  be read in place, in the param space; PTX ISA 5.5 "Tensor map" and 9.7.9.25.5.1).
* ``ttng.init_barrier`` / ``barrier_expect`` / ``inval_barrier``: thread 0 runs
  ``mbarrier.init.shared::cta.b64 [bar], count``, ``mbarrier.arrive.expect_tx.shared.b64 _,
  [bar], bytes`` and ``mbarrier.inval.shared::cta.b64 [bar]`` (PTX ISA 9.7.13.15.9, .12, .10).
* ``ttng.wait_barrier``: every thread spins on ``mbarrier.try_wait.parity.shared.b64 p,
  [bar], phase`` (PTX ISA 9.7.13.15.16).
* ``ttng.async_tma_copy_global_to_local``: the tile is cut into TMA boxes
  (:func:`workbench.passes.tma_lowering.tma_block_shape`; box ``m`` starts at element
  ``(m % n0 * box0, m / n0 * box1)``, ``n0`` boxes along dim 0), and one elected thread of
  warp ``w`` issues box ``w`` (then ``w + num_warps`` ...) with ``cp.async.bulk.tensor.2d.
  shared::cluster.global.mbarrier::complete_tx::bytes [dst], [tensormap, {x, y}], [bar]``
  (coordinates innermost first; PTX ISA 9.7.9.25.5.1). The box lands at the element offset of
  its first element in the ``#ttg.nvmma_shared`` buffer, whose swizzle is the TMA swizzle
  mode of the tensor map.
* ``ttng.async_tma_copy_local_to_global``: the same boxes with ``cp.async.bulk.tensor.2d.
  global.shared::cta.bulk_group [tensormap, {x, y}], [src]``, then ``cp.async.bulk.
  commit_group``; ``ttng.async_tma_store_wait`` is ``cp.async.bulk.wait_group.read n``
  (PTX ISA 9.7.9.25.5.3/4).
* ``ttng.async_tma_reduce <kind>``: the store's boxes and group with ``cp.reduce.async.bulk.
  tensor.2d.global.shared::cta.<kind>.bulk_group [tensormap, {x, y}], [src]`` (PTX ISA
  9.7.9.25.5.2; the ``.tile`` load mode is the default, left out as Triton does; the element
  type, and with it signed or unsigned and float16/bfloat16 min/max, comes from the tensor
  map).
* ``ttng.fence_async_shared``: ``fence.proxy.async.shared::cta``.

Device-side descriptors (``tl.make_tensor_descriptor``), as Triton's ``TMAToLLVM.cpp``:

* ``ttg.global_scratch_alloc``: this program's slice of the launch's global scratch (a
  trailing kernel parameter, :func:`scratch_plan`): ``scratch + linear program id * size +
  offset``;
* ``ttng.tensormap_create``: warp 0 zeroes a 128-byte staging area in shared memory
  (``bar.warp.sync``), thread 0 writes every field with ``tensormap.replace.tile.<field>.
  shared::cta.b1024`` (PTX ISA 9.7.9.27), then warp 0 copies it to global memory with
  ``tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned``
  (PTX ISA 9.7.13.4.1); these need PTX ISA 8.3, the kernel is emitted as PTX 8.7 as Triton's
  (older versions need the strides shifted by 4, Triton's ptxas workaround);
* ``ttng.tensormap_fenceproxy_acquire``: warp 0 runs ``fence.proxy.tensormap::generic.
  acquire.gpu [map], 128`` (and Triton's ``cp.async.bulk`` commit/wait workaround), then
  ``bar.sync``;
* ``ttng.reinterpret_tensor_descriptor``: the map's generic address.
"""
from __future__ import annotations

from llvmlite import ir

from ...passes.tma_lowering import tma_block_shape
from .smem_access import barrier, fence_proxy_async, nvmma_offset, shared_address
from .types import GLOBAL_PTR, I8, I32, I64, byte_size

I1 = ir.IntType(1)
#: the LLVM type of a descriptor kernel parameter: a pointer to the 128-byte CUtensorMap
TMA_PARAM = ir.PointerType(ir.ArrayType(ir.IntType(8), 128))
_GRID_CONSTANT = '"nvvm.grid_constant"'


def mark_tensormap_param(arg) -> None:
    """Give a kernel argument of type :data:`TMA_PARAM` its attributes: ``byval([128 x i8])
    align 64 "nvvm.grid_constant"`` (llvmlite knows no string attributes, so the set of known
    names of this argument's attribute set is widened by that one)."""
    attrs = arg.attributes
    attrs._known = dict(type(attrs)._known, **{_GRID_CONSTANT: False})
    attrs.add("byval")
    attrs.add(_GRID_CONSTANT)
    attrs.align = 64


def _asm(kl, text: str, cons: str, args, ret=None):
    fty = ir.FunctionType(ret or ir.VoidType(), [a.type for a in args])
    return kl.b.call(ir.InlineAsm(fty, text, cons, side_effect=True), args)


def _thread0(kl):
    return kl.b.icmp_unsigned("==", kl.tid, I32(0))


def _elect(kl):
    """``elect.sync _|p, -1``: true in one lane of each warp (PTX ISA 9.7.13.11)."""
    ety = ir.LiteralStructType([I32, I1])
    fn = kl.intrinsic("llvm.nvvm.elect.sync", ety, [I32])
    return kl.b.extract_value(kl.b.call(fn, [I32(-1)]), 1)


def _addr(kl, v, byte_off=None):
    """i32 shared address of the buffer of memdesc value ``v`` (plus ``byte_off``)."""
    return shared_address(kl, kl.smem_offsets[id(v)], byte_off or I32(0))


def lower_init_barrier(kl, op) -> None:
    """``ttng.init_barrier``: thread 0 initialises the mbarrier."""
    count = int(op.attributes["count"])
    _asm(kl, f"@$0 mbarrier.init.shared::cta.b64 [$1], {count};", "b,r,~{memory}",
         [_thread0(kl), _addr(kl, op.operands[0])])


def lower_barrier_expect(kl, op) -> None:
    """``ttng.barrier_expect``: thread 0 arrives, expecting ``size`` bytes."""
    (pred,) = kl.get(op.operands[1])
    size = int(op.attributes["size"])
    _asm(kl, f"@$0 mbarrier.arrive.expect_tx.shared.b64 _, [$1], {size};", "b,r,~{memory}",
         [kl.b.and_(pred, _thread0(kl)), _addr(kl, op.operands[0])])


def lower_wait_barrier(kl, op) -> None:
    """``ttng.wait_barrier``: every thread waits for the phase to complete."""
    (phase,) = kl.get(op.operands[1])
    text = ("{\n\t.reg .pred complete;\n\twaitLoop:\n\t"
            "mbarrier.try_wait.parity.shared.b64 complete, [$0], $1;\n\t"
            "@!complete bra.uni waitLoop;\n}\n")
    _asm(kl, text, "r,r,~{memory}", [_addr(kl, op.operands[0]), phase])


def lower_memdesc_trans(kl, op) -> None:
    """``ttg.memdesc_trans``: a transposed view of the same bytes (an ``#ttg.nvmma_shared``
    buffer and its view with ``transposed`` flipped place every element alike), so the
    result's base is the source's."""
    kl.smem_offsets[id(op.result)] = kl.smem_offsets[id(op.operands[0])]
    kl.set(op.result, [])


def lower_inval_barrier(kl, op) -> None:
    """``ttng.inval_barrier``: thread 0 invalidates the mbarrier, as Triton does (no proxy
    fence after it: a persistent kernel invalidates its barriers once per tile, and a
    ``fence.proxy.async`` there is a ``MEMBAR.ALL.CTA`` each time)."""
    _asm(kl, "@$0 mbarrier.inval.shared::cta.b64 [$1];", "b,r,~{memory}",
         [_thread0(kl), _addr(kl, op.operands[0])])


def lower_fence(kl, op) -> None:
    """``ttng.fence_async_shared``."""
    if op.attributes.get("bCluster"):
        _asm(kl, "fence.proxy.async.shared::cluster;", "~{memory}", [])
    else:
        fence_proxy_async(kl)


def _boxes(mem_t) -> tuple[list, list]:
    """``(box, counts)``: the TMA box of the buffer and how many boxes tile each dim."""
    box = tma_block_shape(mem_t.encoding, mem_t.shape)
    return box, [int(s) // b for s, b in zip(mem_t.shape, box, strict=True)]


def _messages(kl, op, mem_v, coords, emit) -> None:
    """Call ``emit(pred, smem_address, [x, y])`` for each box of the buffer ``mem_v``: box
    ``w + c`` by an elected thread of warp ``w`` for ``c`` = 0, num_warps, ...
    (``pred`` already holds the election)."""
    b = kl.b
    mem_t = mem_v.type
    box, counts = _boxes(mem_t)
    total = counts[0] * counts[1]
    eb = byte_size(mem_t.element)
    elected = _elect(kl)
    for c in range(0, total, kl.num_warps):
        n = min(total - c, kl.num_warps)
        warp = kl.warp if n > 1 else I32(0)
        m = b.add(warp, I32(c)) if c else warp
        pred = b.and_(elected, b.icmp_unsigned("<", kl.tid, I32(32 * n)))
        # box_origin(m, counts, box) (counts are powers of two)
        i0 = b.and_(m, I32(counts[0] - 1))
        i1 = b.lshr(m, I32(counts[0].bit_length() - 1))
        off = [b.mul(i0, I32(box[0])), b.mul(i1, I32(box[1]))]
        elem = nvmma_offset(kl, mem_t.encoding, mem_t.shape, off)
        addr = _addr(kl, mem_v, b.mul(elem, I32(eb)))
        xy = [b.add(coords[1], off[1]), b.add(coords[0], off[0])]
        emit(pred, addr, xy)


def lower_tma_load(kl, op) -> None:
    """``ttng.async_tma_copy_global_to_local`` (module docstring)."""
    desc, c0, c1, dst, bar, pred_v = op.operands
    (tmap,) = kl.get(desc)
    coords = [kl.get(c0)[0], kl.get(c1)[0]]
    (pred,) = kl.get(pred_v)
    bar_addr = _addr(kl, bar)
    text = ("@$0 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
            "[$1], [$2, {$3, $4}], [$5];")

    def emit(p, addr, xy):
        _asm(kl, text, "b,r,l,r,r,r,~{memory}", [kl.b.and_(pred, p), addr, tmap, *xy,
                                                 bar_addr])
    _messages(kl, op, dst, coords, emit)


def lower_tma_store(kl, op) -> None:
    """``ttng.async_tma_copy_local_to_global`` and ``ttng.async_tma_reduce`` (module
    docstring): one instruction per box, then ``commit_group``."""
    desc, c0, c1, src = op.operands
    (tmap,) = kl.get(desc)
    coords = [kl.get(c0)[0], kl.get(c1)[0]]
    if op.name == "ttng.async_tma_reduce":
        text = (f"@$0 cp.reduce.async.bulk.tensor.2d.global.shared::cta."
                f"{op.attributes['kind']}.bulk_group [$1, {{$2, $3}}], [$4];")
    else:
        text = "@$0 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$1, {$2, $3}], [$4];"

    def emit(p, addr, xy):
        _asm(kl, text, "b,l,r,r,r,~{memory}", [p, tmap, *xy, addr])
    _messages(kl, op, src, coords, emit)
    _asm(kl, "cp.async.bulk.commit_group;", "~{memory}", [])


def lower_store_wait(kl, op) -> None:
    """``ttng.async_tma_store_wait``: the bulk groups but the newest ``pendings`` have read
    their shared memory."""
    n = int(op.attributes.get("pendings", 0))
    _asm(kl, f"cp.async.bulk.wait_group.read {n};", "~{memory}", [])


def scratch_plan(func_op) -> tuple[dict, int]:
    """``({id(op): byte offset}, bytes per program)`` of the ``ttg.global_scratch_alloc`` ops
    of ``func_op``, in order, each aligned to its ``alignment`` (Triton's
    ``global_scratch_size``, 0 without any)."""
    offsets, at, align = {}, 0, 1
    for op in func_op.walk():
        if op.name == "ttg.global_scratch_alloc":
            a = int(op.attributes["alignment"])
            at = -(-at // a) * a
            offsets[id(op)] = at
            at += int(op.attributes["nbytes"])
            align = max(align, a)
    return offsets, -(-at // align) * align if at else 0


def _sreg(kl, name: str):
    return kl.b.call(kl.intrinsic(f"llvm.nvvm.read.ptx.sreg.{name}", I32, []), [])


def lower_global_scratch_alloc(kl, op) -> None:
    """``ttg.global_scratch_alloc``: ``scratch + pid * size + offset`` (pid linearised x
    fastest, as Triton's launcher sizes the allocation)."""
    b = kl.b
    x, y, z = (_sreg(kl, f"ctaid.{a}") for a in "xyz")
    nx, ny = _sreg(kl, "nctaid.x"), _sreg(kl, "nctaid.y")
    pid = b.add(b.mul(b.add(b.mul(z, ny), y), nx), x)
    off = b.add(b.mul(b.zext(pid, I64), I64(kl.global_scratch_size)),
                I64(kl.global_scratch_offsets[id(op)]))
    kl.set(op.result, [b.gep(kl.global_scratch_arg, [off], source_etype=I8)])


def _replace(kl, pred, smem, field: str, value, ordinal=None) -> None:
    """``@pred tensormap.replace.tile.<field>.shared::cta.b1024.b32/b64 [smem], [ord,] v``."""
    if isinstance(value, int):
        args, ops, cons = [pred, smem], f"{value}", "b,l"
        width = "b32"
    else:
        width = "b64" if value.type.width == 64 else "b32"
        args, ops, cons = [pred, smem, value], "$2", "b,l," + ("l" if width == "b64" else "r")
    ordtxt = f"{ordinal}, " if ordinal is not None else ""
    _asm(kl, f"@$0 tensormap.replace.tile.{field}.shared::cta.b1024.{width} [$1], "
             f"{ordtxt}{ops};", cons + ",~{memory}", args)


def lower_tensormap_create(kl, op) -> None:
    """``ttng.tensormap_create`` (module docstring)."""
    b = kl.b
    kl.need_shared(128)
    rank = (len(op.operands) - 1) // 4  # map, base, then rank + rank + rank-1 + rank values
    vals = [kl.get(v)[0] for v in op.operands]
    gptr, base = vals[0], vals[1]
    box = vals[2:2 + rank]
    dims = vals[2 + rank:2 + 2 * rank]
    strides = vals[2 + 2 * rank:1 + 3 * rank]
    estr = vals[1 + 3 * rank:1 + 4 * rank]
    smem32 = shared_address(kl, kl.scratch_base, I32(0))
    smem = b.zext(smem32, I64)
    warp0 = b.icmp_unsigned("<", kl.tid, I32(32))
    _asm(kl, "@$0 st.shared.b32 [$1], 0;", "b,r,~{memory}",
         [warp0, b.add(smem32, b.mul(kl.tid, I32(4)))])
    _asm(kl, "bar.warp.sync -1;", "~{memory}", [])
    t0 = _thread0(kl)
    _replace(kl, t0, smem, "global_address", b.ptrtoint(base, I64))
    _replace(kl, t0, smem, "rank", rank - 1)
    for name, group in (("box_dim", box), ("global_dim", dims), ("global_stride", strides),
                        ("element_stride", estr)):
        for i, v in enumerate(group):
            _replace(kl, t0, smem, name, v, i)
    for name in ("elem_type", "interleave_layout", "swizzle_mode", "fill_mode"):
        field = "elemtype" if name == "elem_type" else name
        _replace(kl, t0, smem, field, int(op.attributes[name]))
    _asm(kl, "@$0 tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu"
             ".sync.aligned [$1], [$2], 128;", "b,l,l,~{memory}",
         [warp0, b.ptrtoint(gptr, I64), smem])


def lower_tensormap_acquire(kl, op) -> None:
    """``ttng.tensormap_fenceproxy_acquire`` (module docstring)."""
    b = kl.b
    (gptr,) = kl.get(op.operands[0])
    warp0 = b.icmp_unsigned("<", kl.tid, I32(32))
    _asm(kl, "@$0 fence.proxy.tensormap::generic.acquire.gpu [$1], 128;\n"
             "@$0 cp.async.bulk.commit_group;\n@$0 cp.async.bulk.wait_group.read 0;",
         "b,l,~{memory}", [warp0, b.ptrtoint(gptr, I64)])
    barrier(kl)


def lower_reinterpret(kl, op) -> None:
    """``ttng.reinterpret_tensor_descriptor``: the global map pointer, made generic."""
    (gptr,) = kl.get(op.operands[0])
    kl.set(op.result, [kl.b.addrspacecast(gptr, ir.PointerType())])


#: op name -> lowering (kl, op)
OPS = {
    "ttg.global_scratch_alloc": lower_global_scratch_alloc,
    "ttng.tensormap_create": lower_tensormap_create,
    "ttng.tensormap_fenceproxy_acquire": lower_tensormap_acquire,
    "ttng.reinterpret_tensor_descriptor": lower_reinterpret,
    "ttng.init_barrier": lower_init_barrier,
    "ttg.memdesc_trans": lower_memdesc_trans,
    "ttng.barrier_expect": lower_barrier_expect,
    "ttng.wait_barrier": lower_wait_barrier,
    "ttng.inval_barrier": lower_inval_barrier,
    "ttng.fence_async_shared": lower_fence,
    "ttng.async_tma_copy_global_to_local": lower_tma_load,
    "ttng.async_tma_copy_local_to_global": lower_tma_store,
    "ttng.async_tma_reduce": lower_tma_store,
    "ttng.async_tma_store_wait": lower_store_wait,
}

__all__ = ["GLOBAL_PTR", "OPS", "TMA_PARAM", "mark_tensormap_param", "scratch_plan"]
