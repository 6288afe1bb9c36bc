"""Triton's ``ttng`` (TritonNvidiaGPU) dialect ops of Hopper ttgir
(``TritonNvidiaGPUOps.td`` of Triton 3.6): warp-group MMA (``wgmma``), and the TMA copies of
tensor descriptors with the shared-memory barriers (``mbarrier``) that track them.

A TMA load is ``init_barrier`` (arrival count 1), ``barrier_expect`` (the bytes the copy
will bring), ``async_tma_copy_global_to_local`` (the copy, completing bytes on the barrier),
``wait_barrier`` (phase 0 done: every byte landed) and ``inval_barrier``; a TMA store is
``fence_async_shared`` (the generic-proxy writes of the tile before the async proxy reads it),
``async_tma_copy_local_to_global`` and ``async_tma_store_wait`` (the bulk group has read its
shared memory); a TMA reduction (``tt.descriptor_reduce``) is the store's sequence with
``async_tma_reduce``. The destination of a load is an operand (Triton calls it ``$result``)."""
from __future__ import annotations

from .spec import REQUIRED, Attr, op, same_as_operands
from .tt import DESCRIPTOR_REDUCE_KINDS, INPUT_PRECISIONS

_BAR = "qualified(type($alloc))"

SPECS = [
    op("ttng.warp_group_dot", ["a", "b", "c"], results=("d",),
       effects=("read:shared",),
       attributes=[Attr("inputPrecision", "enum_i32", "tf32", elide=("ieee",), fill="ieee",
                        choices=INPUT_PRECISIONS),
                   Attr("maxNumImpreciseAcc", "i32", 0, elide=(None, 0)),
                   Attr("isAsync", "bool", False, elide=(None, False))],
       format="$a `,` $b `,` $c attr-dict `:` qualified(type($a)) `*` qualified(type($b)) `->` "
              "type($d)",
       doc="Hopper wgmma: a (M x K) and b (K x N) memdescs in nvmma_shared, c the MMA v3 "
           "accumulator; isAsync: leaves the group in flight (PTX ISA 9.7.15)"),
    op("ttng.warp_group_dot_wait", ["*inputs"], results=("*results",),
       effects=("read:shared", "write:shared"),
       attributes=[Attr("pendings", "i32", 0, elide=())],
       format="$inputs attr-dict `:` qualified(type($inputs))", infer=same_as_operands,
       doc="wgmma.wait_group pendings; returns its inputs (the accumulators) once the older "
           "groups have finished"),
    op("ttng.init_barrier", ["alloc"], results=(), effects=("write:shared",),
       attributes=[Attr("count", "i32", REQUIRED)],
       format="$alloc `,` $count attr-dict `:` " + _BAR,
       doc="mbarrier.init with count expected arrivals (PTX ISA 9.7.13.15.9)"),
    op("ttng.barrier_expect", ["alloc", "pred"], results=(), effects=("write:shared",),
       attributes=[Attr("size", "i32", REQUIRED)],
       format="$alloc `,` $size attr-dict `,` $pred `:` " + _BAR,
       doc="mbarrier.arrive.expect_tx: one arrival that also expects size bytes"),
    op("ttng.wait_barrier", ["alloc", "phase"], results=(),
       effects=("read:shared", "write:shared"),
       format="$alloc `,` $phase attr-dict `:` " + _BAR,
       doc="spin on mbarrier.try_wait.parity until the phase completes"),
    op("ttng.inval_barrier", ["alloc"], results=(), effects=("write:shared",),
       format="$alloc attr-dict `:` " + _BAR, doc="mbarrier.inval"),
    op("ttng.fence_async_shared", results=(), effects=("write:shared",),
       attributes=[Attr("bCluster", "bool", False, elide=())], format="attr-dict",
       doc="fence.proxy.async: generic-proxy shared accesses before async-proxy ones"),
    op("ttng.async_tma_copy_global_to_local", ["desc", "*coord", "result", "barrier", "pred"],
       results=(), effects=("read:global", "write:shared"),
       format="$desc `[` $coord `]` $result `,` $barrier `,` $pred attr-dict `:` "
              "qualified(type($desc)) `,` qualified(type($barrier)) `->` "
              "qualified(type($result))",
       doc="cp.async.bulk.tensor global -> shared, completing bytes on barrier "
           "(PTX ISA 9.7.9.25.5.1)"),
    op("ttng.async_tma_copy_local_to_global", ["desc", "*coord", "src"], results=(),
       effects=("read:shared", "write:global"),
       format="$desc `[` $coord `]` $src attr-dict `:` qualified(type($desc)) `,` "
              "qualified(type($src))",
       doc="cp.async.bulk.tensor shared -> global in a bulk async group"),
    op("ttng.async_tma_reduce", ["desc", "*coord", "src"], results=(),
       attributes=[Attr("kind", "enum", REQUIRED, choices=DESCRIPTOR_REDUCE_KINDS)],
       effects=("read:shared", "read:global", "write:global"),
       format="$kind `,` $desc `[` $coord `]` $src attr-dict `:` qualified(type($desc)) `,` "
              "qualified(type($src))",
       doc="cp.reduce.async.bulk.tensor shared -> global: each element of the box reduced "
           "into memory (relaxed, atomic per element) in a bulk async group "
           "(PTX ISA 9.7.9.25.5.2)"),
    op("ttng.async_tma_store_wait", results=(), effects=("read:shared", "write:shared"),
       attributes=[Attr("pendings", "i32", 0, elide=())], format="attr-dict",
       doc="cp.async.bulk.wait_group.read pendings: older bulk stores have read their "
           "shared memory"),
    op("ttng.tensormap_create", ["desc_ptr", "global_address", "*box_dim", "*global_dim",
                                 "*global_stride", "*element_stride"], results=(),
       effects=("write:global", "write:shared"),
       attributes=[Attr("elem_type", "i32", REQUIRED), Attr("fill_mode", "i32", REQUIRED),
                   Attr("interleave_layout", "i32", REQUIRED),
                   Attr("swizzle_mode", "i32", REQUIRED),
                   Attr("operandSegmentSizes", "i32_array", None)],
       format="$desc_ptr `,` $global_address `,` `[` $box_dim `]` `,` `[` $global_dim `]` `,` "
              "`[` $global_stride `]` `,` `[` $element_stride `]` attr-dict `:` "
              "functional-type(operands, results)",
       doc="build a TMA tensor map at desc_ptr (global, 128 bytes) with tensormap.replace "
           "(dims innermost first, strides in bytes)"),
    op("ttng.tensormap_fenceproxy_acquire", ["desc_ptr"], results=(),
       effects=("read:global", "write:global"),
       format="$desc_ptr attr-dict `:` qualified(type($desc_ptr))",
       doc="fence.proxy.tensormap::generic.acquire: the new tensor map is visible to TMA"),
    op("ttng.reinterpret_tensor_descriptor", ["rawDesc"], traits=("pure",),
       format="$rawDesc attr-dict `:` qualified(type($rawDesc)) `to` qualified(type($result))",
       doc="a global tensor map pointer seen as a tensor descriptor"),
]
