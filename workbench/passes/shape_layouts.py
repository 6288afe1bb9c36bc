"""Layouts of the shape ops ``tt.trans``, ``tt.join``, ``tt.split`` and ``tt.reshape``, inferred
from their operand's layout so that the op moves no data (every element stays in the thread,
lane and warp that holds it; only register names change).

Rules for ``#ttg.blocked`` layouts (others give None: the caller converts):

* **trans** with ``order`` (result dim ``i`` is operand dim ``order[i]``): sizePerThread,
  threadsPerWarp and warpsPerCTA are permuted the same way, and the layout's own ``order``
  is renamed through the inverse permutation.
* **join** appends a minor dim of 2 held by one thread: sizePerThread ``+ [2]``,
  threadsPerWarp and warpsPerCTA ``+ [1]``, order ``[rank] + order``.
* **split** is join's inverse; its operand must have that form (else it is converted first,
  to the join of the default layout of the result shape).
* **reshape**: with row-major orders, a blocked layout is a sequence of coordinate bits, from
  the minor dim's first to the major dim's last, each held by a register, a lane, a warp or a
  repeat; the reshaped tensor reads the same sequence dim by dim (minor first). The result is
  blocked when each of its dims takes registers, then lanes, then warps, then repeats.

Source: Triton 3.6 ``lib/Dialect/TritonGPU/IR/Dialect.cpp`` (``inferTransOpEncoding``,
``inferJoinOpEncoding``, ``inferSplitOpEncoding``, ``inferReshapeOpEncoding``) and
``TritonToTritonGPUPass.cpp`` (the split operand's layout). Triton falls back to linear
layouts where no blocked layout exists; we convert instead.
"""
from __future__ import annotations

from ..ir.core import Operation
from ..layouts import (
    BlockedLayout,
    LayoutError,
    LinearEncoding,
    LinearLayout,
    default_blocked,
    to_linear,
)
from ..layouts.encodings import MmaLayout

SHAPE_OPS = frozenset({"tt.trans", "tt.join", "tt.split", "tt.reshape"})
_KINDS = "rlwR"  # register, lane, warp, repeat: the order bits must come in within one dim


def _log2(n: int) -> int | None:
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


def permute(enc, perm) -> BlockedLayout | None:
    """``enc`` for a tensor whose dim ``i`` is dim ``perm[i]`` of ``enc``'s tensor."""
    if not isinstance(enc, BlockedLayout) or len(perm) != len(enc.order):
        return None
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return BlockedLayout(tuple(enc.size_per_thread[p] for p in perm),
                         tuple(enc.threads_per_warp[p] for p in perm),
                         tuple(enc.warps_per_cta[p] for p in perm),
                         tuple(inv[o] for o in enc.order))


def permute_linear(enc, perm, src_shape):
    """A distributed layout that is not blocked (``#mma``, a linear one) for a tensor whose dim
    ``i`` is dim ``perm[i]`` of ``enc``'s ``src_shape`` tensor: the ``#ttg.linear`` layout
    whose bases are ``enc``'s with their coordinates permuted (Triton's
    ``inferTransOpEncoding`` falls back to ``LinearEncodingAttr`` the same way)."""
    try:
        ll = to_linear(enc, tuple(src_shape))
    except (LayoutError, ValueError, TypeError, KeyError):
        return None
    rank = len(perm)
    bases = {name: [tuple(int(b[p]) for p in perm) for b in ll.in_dim_bases(name)]
             for name in ("register", "lane", "warp", "block") if name in ll.in_dims}
    sizes = {f"dim{i}": int(src_shape[perm[i]]) for i in range(rank)}
    try:
        return LinearEncoding(LinearLayout(bases, sizes))
    except LayoutError:
        return None


def join_layout(enc) -> BlockedLayout | None:
    """The result layout of ``tt.join`` of two operands in ``enc``."""
    if not isinstance(enc, BlockedLayout):
        return None
    rank = len(enc.order)
    return BlockedLayout(enc.size_per_thread + (2,), enc.threads_per_warp + (1,),
                         enc.warps_per_cta + (1,), (rank,) + enc.order)


def split_layout(enc) -> BlockedLayout | None:
    """The result layout of ``tt.split`` of an operand in ``enc``, or None when the last dim
    is not two registers of one thread, minor in ``order``."""
    if not isinstance(enc, BlockedLayout) or len(enc.order) < 2:
        return None
    last = len(enc.order) - 1
    if (enc.size_per_thread[-1], enc.threads_per_warp[-1], enc.warps_per_cta[-1]) != (2, 1, 1) \
            or enc.order[0] != last:
        return None
    return BlockedLayout(enc.size_per_thread[:-1], enc.threads_per_warp[:-1],
                         enc.warps_per_cta[:-1], enc.order[1:])


def split_operand_layout(result_shape, num_warps: int, tpw: int = 32) -> BlockedLayout:
    """The layout a ``tt.split`` operand is converted to when its own cannot be split: the
    join of the default layout of the result shape."""
    out = join_layout(default_blocked(tuple(result_shape), num_warps, tpw))
    assert out is not None
    return out


def _bit_sequence(enc, shape) -> list | None:
    """The kinds of the coordinate bits of a row-major blocked layout, minor dim first."""
    rank = len(shape)
    if not isinstance(enc, BlockedLayout) or enc.order != tuple(range(rank - 1, -1, -1)):
        return None
    seq = []
    for d in reversed(range(rank)):
        logs = [_log2(x) for x in (enc.size_per_thread[d], enc.threads_per_warp[d],
                                   enc.warps_per_cta[d], shape[d])]
        if any(v is None for v in logs):
            return None
        r, l, w, n = (v or 0 for v in logs)  # noqa: E741 - l: lane bits
        if n < r + l + w:
            return None  # the layout covers more than the dim (replicated elements)
        seq += ["r"] * r + ["l"] * l + ["w"] * w + ["R"] * (n - r - l - w)
    return seq


def reshape_layout(enc, src_shape, dst_shape) -> BlockedLayout | None:
    """The blocked layout of ``dst_shape`` holding every element where ``enc`` held it in
    ``src_shape`` (row-major re-linearisation), or None when there is none."""
    seq = _bit_sequence(enc, src_shape)
    if seq is None:
        return None
    rank = len(dst_shape)
    spt, tpw, wpc = [1] * rank, [1] * rank, [1] * rank
    pos = 0
    for d in reversed(range(rank)):
        n = _log2(dst_shape[d])
        if n is None:
            return None
        part = seq[pos:pos + n]
        pos += n
        if [_KINDS.index(k) for k in part] != sorted(_KINDS.index(k) for k in part):
            return None
        spt[d], tpw[d], wpc[d] = (1 << part.count(k) for k in "rlw")
    if pos != len(seq):
        return None
    return BlockedLayout(tuple(spt), tuple(tpw), tuple(wpc), tuple(range(rank - 1, -1, -1)))


def reshape_linear(enc, src_shape, dst_shape) -> LinearEncoding | None:
    """The ``#ttg.linear`` layout of ``dst_shape`` holding every element where the distributed
    layout ``enc`` held it in ``src_shape`` (row-major re-linearisation of each basis: with
    power-of-two extents a coordinate's flat index is the concatenation of its dims' bits, so
    the map stays linear over GF(2)); None when ``enc`` has no linear form. Triton 3.6's
    ``inferReshapeOpEncoding`` falls back to such a ``LinearEncodingAttr`` when no blocked
    layout fits."""
    try:
        ll = to_linear(enc, tuple(src_shape))
    except (LayoutError, ValueError, TypeError, KeyError):
        return None
    shifts, sh = [0] * len(src_shape), 0
    for d in reversed(range(len(src_shape))):
        shifts[d] = sh
        sh += (int(src_shape[d]) - 1).bit_length()

    def split(coord) -> tuple:
        flat = sum(int(c) << s for c, s in zip(coord, shifts, strict=True))
        out = []
        for n in reversed(dst_shape):
            out.append(flat % int(n))
            flat //= int(n)
        return tuple(reversed(out))
    bases: dict[str, list] = {name: [split(b) for b in ll.in_dim_bases(name)]
                              for name in ("register", "lane", "warp", "block")
                              if name in ll.in_dims}
    try:
        return LinearEncoding(LinearLayout(bases, {f"dim{i}": int(n)
                                                   for i, n in enumerate(dst_shape)}))
    except LayoutError:
        return None


def _reshape(enc, src_shape, dst_shape):
    """Blocked when a blocked layout keeps every element in place, else ``#ttg.linear``."""
    return reshape_layout(enc, src_shape, dst_shape) or \
        reshape_linear(enc, src_shape, dst_shape)


def _shape(v) -> tuple:
    return tuple(v.type.shape)


def infer_result(op: Operation, enc):
    """The result layout of shape op ``op`` whose (first) operand is in ``enc``; None when
    no layout keeps every element in place."""
    if op.name == "tt.trans":
        perm = [int(o) for o in op.attributes["order"]]
        if isinstance(enc, (MmaLayout, LinearEncoding)):
            return permute_linear(enc, perm, _shape(op.operands[0]))
        return permute(enc, perm)
    if op.name == "tt.join":
        return join_layout(enc)
    if op.name == "tt.split":
        return split_layout(enc)
    if op.name == "tt.reshape":
        return _reshape(enc, _shape(op.operands[0]), _shape(op.result))
    return None


def infer_operand(op: Operation, enc):
    """The layout shape op ``op``'s operands need for its result to be in ``enc``; None when
    there is none."""
    if op.name == "tt.trans":
        order = [int(o) for o in op.attributes["order"]]
        inv = [0] * len(order)
        for i, p in enumerate(order):
            inv[p] = i
        if isinstance(enc, (MmaLayout, LinearEncoding)):
            return permute_linear(enc, inv, _shape(op.result))
        return permute(enc, inv)
    if op.name == "tt.join":
        return split_layout(enc)
    if op.name == "tt.split":
        return join_layout(enc)
    if op.name == "tt.reshape":
        return _reshape(enc, _shape(op.result), _shape(op.operands[0]))
    return None
