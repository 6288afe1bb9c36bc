"""Which dots of a block are connected: Triton 3.6's tests for the MMA warp layout
(``AccelerateMatmul.cpp``: ``warpsPerTileV2`` takes MLIR's ``getSlice`` of the dot,
``warpsPerTileV3`` its forward slice) and whether a dot's result feeds another dot's A."""
from __future__ import annotations

from ..ir.core import Operation
from ..layouts.encodings import MmaLayout
from .values import block_of, shaped_type

#: the dot ops of ttir and ttgir
DOT_OPS = ("tt.dot", "ttng.warp_group_dot")


def feeds_dot(v, depth=3) -> bool:
    """True when value ``v`` is the A operand of a dot, directly or through up to ``depth``
    conversions, casts or a ``ttg.local_alloc``."""
    for user, i in v.uses:
        if user.name in DOT_OPS and i == 0:
            return True
        if depth and user.results and user.name in ("ttg.convert_layout", "arith.truncf",
                                                    "arith.extf", "tt.fp_to_fp",
                                                    "ttg.local_alloc"):
            if feeds_dot(user.result, depth - 1):
                return True
    return False


def _slice_ops(dot: Operation, forward: bool) -> set:
    """Ops of ``dot``'s block reachable from it through def-use edges (forward: users;
    backward: producers), both restricted to the block (``multiRootGetSlice`` with Triton's
    same-region filter)."""
    block, seen, work = dot.parent, set(), [dot]
    while work:
        op = work.pop()
        nxt = ([u for r in op.results for u, _ in r.uses] if forward else
               [v.defining_op for v in op.operands if v.defining_op is not None])
        for o in nxt:
            top: Operation | None = o
            while top is not None and top.parent is not block:  # nested op: its top-level op
                top = top.parent_op() if top.parent is not None else None
            if top is not None and id(top) not in seen:
                seen.add(id(top))
                work.append(top)
    return {i for i in seen}


def feeds_later_dot(dot: Operation) -> bool:
    """True when another dot is in ``dot``'s forward slice (attention's ``Q @ K^T`` feeding
    ``P @ V``): the MMA v3 rule for putting all warps along M (``warpsPerTileV3`` in Triton
    3.6 ``AccelerateMatmul.cpp`` looks forward only; MMA v2 looks both ways, :func:`is_chained`)."""
    others = {id(o) for o in block_of(dot).ops if o.name in DOT_OPS and o is not dot}
    return bool(others & _slice_ops(dot, True)) or feeds_dot(dot.result)


def connected_ops(dot: Operation) -> dict:
    """MLIR's ``getSlice`` of ``dot`` as Triton 3.6's ``warpsPerTileV2`` calls it: backward
    and forward slices, repeated from every op reached until nothing is added (so two dots
    yielding from one loop body are connected through the ``scf.yield``), keeping only ops of
    ``dot``'s block that are not ``tt.trans`` (its filter). Backward steps also read the
    operands of ops nested in a reached op; forward steps follow result users. Returns
    ``{id: op}``."""
    block = dot.parent
    seen: dict = {id(dot): dot}
    work = [dot]
    while work:
        op = work.pop()
        near = [v.defining_op for o in op.walk() for v in o.operands]
        near += [u for r in op.results for u, _ in r.uses]
        for n in near:
            if n is not None and n.parent is block and n.name != "tt.trans" and \
                    id(n) not in seen:
                seen[id(n)] = n
                work.append(n)
    return seen


def is_chained(dot: Operation) -> bool:
    """True when another dot of the same block is in :func:`connected_ops` of ``dot``
    (attention's ``Q @ K^T`` and ``P @ V``; two accumulations yielded by one loop)."""
    others = {id(o) for o in block_of(dot).ops if o.name in DOT_OPS and o is not dot}
    return bool(others & set(connected_ops(dot))) or feeds_dot(dot.result)


def connected_mma_warps(dot: Operation):
    """``warpsPerCTA`` of a dot of the same rank in :func:`connected_ops` of ``dot`` that
    already has an ``#mma`` v2 result (Triton's ``warpsPerTileV2`` reuses it), or None."""
    rank = len(shaped_type(dot.result).shape)
    for o in connected_ops(dot).values():
        if o is dot or o.name not in DOT_OPS:
            continue
        enc = shaped_type(o.result).encoding
        if isinstance(enc, MmaLayout) and enc.version_major == 2 and \
                len(shaped_type(o.result).shape) == rank:
            return tuple(enc.warps_per_cta)
    return None


__all__ = ["DOT_OPS", "connected_mma_warps", "connected_ops", "feeds_dot", "feeds_later_dot",
           "is_chained"]
