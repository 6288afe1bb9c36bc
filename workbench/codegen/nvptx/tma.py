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
  [bar], bytes`` and ``mbarrier.inval.shared::cta.b64 [bar]`` (PTX ISA 9.7.13.15.9, .12, .10);
  unlike Triton, a ``fence.proxy.async.shared::cta`` follows the inval (see
  :func:`lower_inval_barrier`).
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
* ``ttng.fence_async_shared``: ``fence.proxy.async.shared::cta``.
"""
from __future__ import annotations

from llvmlite import ir

from ...passes.tma_lowering import tma_block_shape
from .smem_access import fence_proxy_async, nvmma_offset, shared_address
from .types import I32, byte_size

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


def lower_inval_barrier(kl, op) -> None:
    """``ttng.inval_barrier``: thread 0 invalidates the mbarrier, then a proxy fence: the
    allocator may give the barrier's 8 bytes to a later TMA destination, which the async
    proxy writes (a generic-proxy write, then async-proxy writes of the same bytes)."""
    _asm(kl, "@$0 mbarrier.inval.shared::cta.b64 [$1];", "b,r,~{memory}",
         [_thread0(kl), _addr(kl, op.operands[0])])
    fence_proxy_async(kl)


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
    """``ttng.async_tma_copy_local_to_global`` (module docstring)."""
    desc, c0, c1, src = op.operands
    (tmap,) = kl.get(desc)
    coords = [kl.get(c0)[0], kl.get(c1)[0]]
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


#: op name -> lowering (kl, op)
OPS = {
    "ttng.init_barrier": lower_init_barrier,
    "ttng.barrier_expect": lower_barrier_expect,
    "ttng.wait_barrier": lower_wait_barrier,
    "ttng.inval_barrier": lower_inval_barrier,
    "ttng.fence_async_shared": lower_fence,
    "ttng.async_tma_copy_global_to_local": lower_tma_load,
    "ttng.async_tma_copy_local_to_global": lower_tma_store,
    "ttng.async_tma_store_wait": lower_store_wait,
}

__all__ = ["OPS", "TMA_PARAM", "mark_tensormap_param"]
