"""Triton's ``ttg`` (TritonGPU) dialect ops of ttgir (``TritonGPUOps.td`` of Triton 3.6):
layout conversion, shared memory (``!ttg.memdesc``) and ``cp.async`` copies.

The asynchronous-copy ops hand on ``!ttg.async.token`` values as Triton's do: a copy gives a
token, ``async_commit_group tokens %t`` joins the copies' tokens into the group's, ``async_wait
%g0, %g1 {num}`` takes the tokens of the groups it waits for and gives the token that the
``local_load`` of the landed data names (``ttg.local_load %buf token %w``). Tokens order the
ops (a pass that moved a load above its wait would break the chain); they hold no data."""
from __future__ import annotations

from ..types import AsyncTokenType, IntType, TensorType, async_token
from . import tt_checks as chk
from .spec import REQUIRED, Attr, fail, op
from .tt import CACHE_ATTR, EVICT_ATTR


def _token(types, attrs) -> list:
    return [async_token]


def _tokens_only(op, ctx=None) -> None:
    """Every operand of a commit group or a wait is a ``!ttg.async.token``."""
    for v in op.operands:
        if not isinstance(v.type, AsyncTokenType):
            fail(op, f"takes !ttg.async.token operands, got {v.type}")


def _local_load(op, ctx=None) -> None:
    if len(op.operands) > 1 and not isinstance(op.operands[1].type, AsyncTokenType):
        fail(op, f"token must be a !ttg.async.token, got {op.operands[1].type}")


def _async_copy(op, ctx=None) -> None:
    """The mask is an i1 tensor of the pointers' shape (Triton's ``getI1SameShape``)."""
    if len(op.operands) < 3:
        return
    src, mask = op.operands[0].type, op.operands[2].type
    if not (isinstance(mask, TensorType) and isinstance(src, TensorType) and
            mask.element == IntType(1) and tuple(mask.shape) == tuple(src.shape)):
        fail(op, f"mask must be an i1 tensor of the source's shape, got {mask}")


SPECS = [
    op("ttg.convert_layout", ["src"], traits=("pure",),
       format="$src attr-dict `:` type($src) `->` type($result)", verify=chk.convert_layout,
       doc="change a tile's layout (registers, shuffles or shared memory)"),
    op("ttg.local_alloc", ["src?"], effects=("alloc:shared",),
       attributes=[Attr("allocation.offset", "i32", None)],
       format="($src^)? attr-dict `:` functional-type(operands, results)",
       doc="allocate shared memory, initialised from src when given (writing only the new "
           "buffer, so its one effect is the allocation)"),
    op("ttg.local_load", ["src", "token?"], effects=("read:shared",),
       format="$src (`token` $token^)? attr-dict `:` qualified(type($src)) `->` "
              "type($result)",
       verify=_local_load,
       doc="shared memory -> registers (token: the async_wait after which the data is there)"),
    op("ttg.local_store", ["value", "dst"], results=(), effects=("write:shared",),
       format="$value `,` $dst attr-dict `:` type($value) `->` qualified(type($dst))",
       doc="registers -> shared memory"),
    op("ttg.local_dealloc", ["src"], results=(), effects=("free:shared",),
       format="$src attr-dict `:` qualified(type($src))", doc="free shared memory"),
    op("ttg.memdesc_index", ["src", "index"], traits=("pure",),
       format="$src `[` $index `]` attr-dict `:` qualified(type($src)) `->` "
              "qualified(type($result))",
       doc="one buffer of a multi-buffered shared allocation"),
    op("ttg.memdesc_trans", ["src"], traits=("pure",),
       attributes=[Attr("order", "i32_array", REQUIRED)],
       format="$src attr-dict `:` qualified(type($src)) `->` qualified(type($result))",
       doc="the same shared bytes viewed with permuted dims (no data moves)"),
    op("ttg.async_copy_global_to_local", ["src", "dst", "mask?", "other?"], results=("token",),
       attributes=[CACHE_ATTR, EVICT_ATTR,
                   Attr("isVolatile", "bool", False, elide=(None, False)),
                   Attr("contiguity", "i32", 1, elide=(None, 1))],
       effects=("read:global", "write:shared"), infer=_token, verify=_async_copy,
       format="$src `,` $dst (`mask` $mask^)? (`other` $other^)? "
              "(`cacheModifier` `=` $cache^)? (`evictionPolicy` `=` $evict^)? attr-dict `:` "
              "type($src) `->` type($dst)",
       doc="cp.async global -> shared (PTX ISA 9.7.9.25); a lane whose mask is false writes "
           "zeros (other, when given, must be zero); contiguity: elements per vector copy"),
    op("ttg.async_commit_group", ["*inputTokens"], results=("asyncToken",),
       effects=("write:shared",), format="(`tokens` $inputTokens^)? attr-dict", infer=_token,
       verify=_tokens_only,
       doc="cp.async.commit_group: the copies since the last commit form one group"),
    op("ttg.async_wait", ["*asyncToken"], results=("retToken",),
       effects=("read:shared", "write:shared"), infer=_token, verify=_tokens_only,
       attributes=[Attr("num", "i32", 0, elide=())], format="($asyncToken^)? attr-dict",
       doc="cp.async.wait_group num: the copies older than the newest num groups have "
           "landed in shared memory (a synchronisation: never removed or merged)"),
    op("ttg.global_scratch_alloc", effects=("alloc:global",),
       attributes=[Attr("alignment", "i32", REQUIRED), Attr("nbytes", "i32", REQUIRED)],
       format="attr-dict `:` qualified(type($result))",
       doc="nbytes of this program's global scratch (the launch's allocator gives every "
           "program its own slice), aligned to alignment"),
]
