"""``tt.reduce`` in the CPU lowering.

The combine region (block args ``acc..., x...``, terminator ``tt.reduce.return``) is inlined
(:func:`inline_combine`). Two shapes of code:

- **Reducing the last axis** (rows of a tile, ``tl.sum(x, axis=-1)``, softmax's max and sum):
  ``W`` partial accumulators per operand (``W`` the largest power of two dividing the axis
  extent, at most 32), lane ``j`` combining elements ``j, j + W, j + 2W, ...`` of the row in
  order, then a pairwise tree over the lanes (``lane[j] = combine(lane[j], lane[j + h])`` for
  ``h = W/2, W/4, ..., 1``). The loops over the lanes have no loop-carried dependence, so
  LLVM vectorises them (no fast-math reassociation is needed: the order is fixed here).
  That order is a tree, like Triton's (which combines within a thread, then across lanes by
  butterfly shuffles) but not the same tree, so float sums may differ from the
  interpreter's sequential order and from the GPU in the last bits (tests compare with a
  relative tolerance); integer, min/max and argmin/argmax results are exact. Extents that
  are not even keep the sequential order.
- **Reducing another axis**: the result buffer is initialised with the first slice along the
  axis and updated slice by slice (``out[i, j] = combine(out[i, j], x[i, k, j])``), so the
  innermost loop runs over the contiguous later axes and vectorises. Elements combine in
  index order.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.core import Operation
from .llvmtypes import I64, value_type
from .tiles import loop_nest

MAX_LANES = 32


def inline_combine(lw, block, values: list) -> list:
    """Lower the ops of a combine ``block`` on ``values`` (one per block argument) at the
    builder's position; returns the LLVM values of its terminator's operands."""
    for arg, v in zip(block.args, values, strict=True):
        lw.env[arg] = v
    saved = lw.b.debug_metadata
    for op in block.ops[:-1]:
        lw.set_loc(op)
        lw.lower_op(op)
    lw.b.debug_metadata = saved
    return [lw.env[v] for v in block.terminator.operands]


def lanes_for(n: int) -> int:
    """Number of partial accumulators for a row of ``n`` elements (see the module doc)."""
    w = 1
    while w < MAX_LANES and n % (2 * w) == 0:
        w *= 2
    return w


def lower_reduce(lw, op: Operation) -> None:
    """``tt.reduce {axis}`` with N operands -> N results (see the module docstring)."""
    srcs = [lw.tile(v) for v in op.operands]
    axis = int(op.attributes["axis"])
    if axis == len(srcs[0].shape) - 1:
        results = _reduce_last(lw, op, srcs)
    else:
        results = _reduce_outer(lw, op, srcs, axis)
    for r, v in zip(op.results, results, strict=True):
        lw.env[r] = v


def _reduce_last(lw, op, srcs) -> list:
    b = lw.b
    block = op.regions[0].block
    shape = srcs[0].shape
    n = shape[-1]
    out_shape = shape[:-1]
    w = lanes_for(n)
    vts = [value_type(s.elem) for s in srcs]
    lanes = [_lanes_alloca(lw, vt, w) for vt in vts]
    outs = [lw.alloc(out_shape, s.elem) for s in srcs] if out_shape else None

    def lane(k, j):
        return b.gep(lanes[k], [j], source_etype=vts[k])

    def load(k, j):
        return b.load(lane(k, j), typ=vts[k])

    def row(oidx):
        def init(jidx):
            e = lw.elems()
            for k, s in enumerate(srcs):
                b.store(e.get(s, oidx + jidx), lane(k, jidx[0]))
        loop_nest(b, (w,), init)

        def step(cidx):
            base = b.mul(cidx[0], ir.Constant(I64, w))

            def one(jidx):
                j = jidx[0]
                e = lw.elems()
                col = b.add(base, j)
                cur = [load(k, j) for k in range(len(srcs))]
                xs = [e.get(s, oidx + (col,)) for s in srcs]
                for k, v in enumerate(inline_combine(lw, block, cur + xs)):
                    b.store(v, lane(k, j))
            loop_nest(b, (w,), one)
        loop_nest(b, (n // w,), step, starts=(1,))
        h = w // 2
        while h >= 1:
            def fold(jidx, h=h):
                j = jidx[0]
                hj = b.add(j, ir.Constant(I64, h))
                cur = [load(k, j) for k in range(len(srcs))]
                xs = [load(k, hj) for k in range(len(srcs))]
                for k, v in enumerate(inline_combine(lw, block, cur + xs)):
                    b.store(v, lane(k, j))
            loop_nest(b, (h,), fold)
            h //= 2
        if outs:
            e = lw.elems()
            zero = ir.Constant(I64, 0)
            for k, o in enumerate(outs):
                e.store(o, oidx, load(k, zero))
    loop_nest(b, out_shape, row)
    if outs:
        return outs
    zero = ir.Constant(I64, 0)
    return [load(k, zero) for k in range(len(srcs))]


def _lanes_alloca(lw, vt, w):
    """``alloca vt, w`` in the entry block (SROA turns the lanes into registers)."""
    eb = ir.IRBuilder(lw.entry)
    if lw.entry.instructions:
        eb.position_before(lw.entry.instructions[0])
    return eb.alloca(vt, size=ir.Constant(I64, w))


def _reduce_outer(lw, op, srcs, axis) -> list:
    b = lw.b
    block = op.regions[0].block
    shape = srcs[0].shape
    rank = len(shape)
    out_shape = shape[:axis] + shape[axis + 1:]
    outs = [lw.alloc(out_shape, s.elem) for s in srcs]

    def drop(idx):
        return idx[:axis] + idx[axis + 1:]

    def init(idx):
        e = lw.elems()
        for s, o in zip(srcs, outs, strict=True):
            e.store(o, drop(idx), e.get(s, idx))
    loop_nest(b, shape[:axis] + (1,) + shape[axis + 1:], init)

    def update(idx):
        e = lw.elems()
        cur = [e.get(o, drop(idx)) for o in outs]
        xs = [e.get(s, idx) for s in srcs]
        for o, v in zip(outs, inline_combine(lw, block, cur + xs), strict=True):
            e.store(o, drop(idx), v)
    starts = tuple(1 if d == axis else 0 for d in range(rank))
    loop_nest(b, shape, update, starts=starts)
    return outs
