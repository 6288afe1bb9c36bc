"""Triton's ``ttg`` (TritonGPU) dialect ops of ttgir (``TritonGPUOps.td`` of Triton 3.6):
layout conversion, shared memory (``!ttg.memdesc``) and ``cp.async`` copies.

Where our IR differs from Triton's, the format says so: ``ttg.async_copy_global_to_local``
carries a scalar ``pred`` (Triton folds the pipeliner's predicate into ``mask``) and the async
ops return no ``!ttg.async.token``, so their texts have no tokens."""
from __future__ import annotations

from . import tt_checks as chk
from .spec import REQUIRED, Attr, op

SPECS = [
    op("ttg.convert_layout", ["src"], traits=("pure",),
       format="$src attr-dict `:` type($src) `->` type($result)", verify=chk.convert_layout,
       doc="change a tile's layout (registers, shuffles or shared memory)"),
    op("ttg.local_alloc", ["src?"], effects=("alloc:shared",),
       attributes=[Attr("allocation.offset", "i32", None)],
       format="($src^)? attr-dict `:` functional-type(operands, results)",
       doc="allocate shared memory, initialised from src when given (writing only the new "
           "buffer, so its one effect is the allocation)"),
    op("ttg.local_load", ["src"], effects=("read:shared",),
       format="$src attr-dict `:` qualified(type($src)) `->` type($result)",
       doc="shared memory -> registers"),
    op("ttg.local_store", ["value", "dst"], results=(), effects=("write:shared",),
       format="$value `,` $dst attr-dict `:` type($value) `->` qualified(type($dst))",
       doc="registers -> shared memory"),
    op("ttg.local_dealloc", ["src"], results=(), effects=("free:shared",),
       format="$src attr-dict `:` qualified(type($src))", doc="free shared memory"),
    op("ttg.memdesc_index", ["src", "index"], traits=("pure",),
       format="$src `[` $index `]` attr-dict `:` qualified(type($src)) `->` "
              "qualified(type($result))",
       doc="one buffer of a multi-buffered shared allocation"),
    op("ttg.async_copy_global_to_local", ["src", "dst", "pred", "mask?"], results=(),
       effects=("read:global", "write:shared"),
       format="$src `,` $dst (`mask` $mask^)? `pred` $pred attr-dict `:` type($src) `->` "
              "type($dst)",
       doc="cp.async global -> shared (PTX ISA 9.7.9.25), for lanes where mask and pred"),
    op("ttg.async_commit_group", results=(), effects=("write:shared",), format="attr-dict",
       doc="cp.async.commit_group"),
    op("ttg.async_wait", results=(), effects=("read:shared", "write:shared"),
       attributes=[Attr("num", "i32", 0, elide=())], format="attr-dict",
       doc="cp.async.wait_group num: the copies older than the newest num groups have "
           "landed in shared memory (a synchronisation: never removed or merged)"),
    op("ttg.global_scratch_alloc", effects=("alloc:global",),
       attributes=[Attr("alignment", "i32", REQUIRED), Attr("nbytes", "i32", REQUIRED)],
       format="attr-dict `:` qualified(type($result))",
       doc="nbytes of this program's global scratch (the launch's allocator gives every "
           "program its own slice), aligned to alignment"),
]
