"""Triton's ``ttng`` (TritonNvidiaGPU) dialect ops of Hopper ttgir
(``TritonNvidiaGPUOps.td`` of Triton 3.6): warp-group MMA (``wgmma``)."""
from __future__ import annotations

from .spec import Attr, op, same_as_operands
from .tt import INPUT_PRECISIONS

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
]
