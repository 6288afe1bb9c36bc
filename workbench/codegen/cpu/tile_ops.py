"""Scans, joins/splits/concatenation and histograms in the CPU lowering.

- ``tt.scan {axis, reverse}``: inclusive scan; the combine region (block args ``acc..., x...``,
  terminator ``tt.scan.return``) is inlined. Elements combine sequentially in scan order:
  ``out[0] = x[0]``, ``out[i] = combine(out[i - 1], x[i])`` (from the end when ``reverse``).
  The scanned axis is the loop just outside the later (contiguous) axes, so scanning any axis
  but the last vectorises over the rows. For integer ops the result equals the interpreter's
  (which scans in log2(n) tree steps); float rounding may differ in the last bit, as it does
  between GPUs and sequential numpy.
- ``tt.join``: a new minor dim of size 2 (``out[..., 0] = lhs``, ``out[..., 1] = rhs``), written
  into one buffer; ``tt.split`` of a buffer is two strided views (no copy).
- ``tt.unsplat``: the element of a one-element tile (evaluated at index 0, no loop).
- ``tt.cat``: ``lhs`` then ``rhs`` along dim 0 (Triton may reorder; we keep the order).
- ``tt.histogram [src, mask?]``: ``out[v] += 1`` for each active ``v`` of the 1-D ``src`` with
  ``0 <= v < nbins`` (other values are ignored, as in the interpreter).
- ``tt.gather {axis}``: ``out[idx] = src[idx with idx[axis] = indices[idx]]``; indices are
  checked first (an index outside ``[0, src.shape[axis])`` stops the program with an error
  naming it, as the interpreter does, instead of reading outside the tile).
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.core import Operation
from .control import _inline_combine
from .debug_ops import check_all
from .irtypes import tensor_of
from .llvmtypes import I64, const, storage_type
from .tiles import ZERO, Buffer, Splat, loop_nest


def lower_unsplat(lw, op: Operation) -> None:
    """``tt.unsplat`` (see the module docstring)."""
    src = lw.tile(op.operands[0])
    if isinstance(src, Splat):
        lw.env[op.result] = src.value
        return
    lw.env[op.result] = lw.elems().get(src, (ZERO,) * len(src.shape))


def lower_scan(lw, op: Operation) -> None:
    """``tt.scan`` (see the module docstring)."""
    b = lw.b
    srcs = [lw.tile(v) for v in op.operands]
    axis = int(op.attributes["axis"])
    reverse = bool(op.attributes.get("reverse", False))
    shape = srcs[0].shape
    n = shape[axis]
    block = op.regions[0].block
    outs = [lw.alloc(shape, s.elem) for s in srcs]
    last = ir.Constant(I64, n - 1)

    def at(idx, k):
        return idx[:axis] + (k,) + idx[axis + 1:]

    def init(idx):
        e = lw.elems()
        k = last if reverse else ir.Constant(I64, 0)
        for s, o in zip(srcs, outs, strict=True):
            e.store(o, at(idx, k), e.get(s, at(idx, k)))
    loop_nest(b, shape[:axis] + (1,) + shape[axis + 1:], init)

    def step(idx):
        e = lw.elems()
        t = idx[axis]
        k = b.sub(last, t) if reverse else t
        prev = b.add(k, ir.Constant(I64, 1)) if reverse else b.sub(k, ir.Constant(I64, 1))
        accs = [e.get(o, at(idx, prev)) for o in outs]
        xs = [e.get(s, at(idx, k)) for s in srcs]
        for o, v in zip(outs, _inline_combine(lw, block, accs + xs), strict=True):
            e.store(o, at(idx, k), v)
    starts = tuple(1 if d == axis else 0 for d in range(len(shape)))
    loop_nest(b, shape, step, starts=starts)
    for r, o in zip(op.results, outs, strict=True):
        lw.env[r] = o


def lower_join(lw, op: Operation) -> None:
    b = lw.b
    t = tensor_of(op.result.type)
    shape = tuple(t.shape)
    lhs, rhs = (lw.tile(v, shape[:-1]) for v in op.operands)
    out = lw.alloc(shape, t.element)

    def body(idx):
        e = lw.elems()
        for k, src in enumerate((lhs, rhs)):
            e.store(out, idx + (ir.Constant(I64, k),), e.get(src, idx))
    loop_nest(b, shape[:-1], body)
    lw.env[op.result] = out


def lower_split(lw, op: Operation) -> None:
    src = lw.tile(op.operands[0])
    if not isinstance(src, Buffer):
        src = lw.materialize(src)
    b = lw.b
    shape, strides = src.shape[:-1], src.strides[:-1]
    step = src.strides[-1]
    for k, r in enumerate(op.results):
        ptr = src.ptr if k == 0 or step == 0 else b.gep(
            src.ptr, [ir.Constant(I64, step * k)], source_etype=storage_type(src.elem))
        lw.env[r] = Buffer(shape, src.elem, ptr, strides)


def lower_cat(lw, op: Operation) -> None:
    b = lw.b
    t = tensor_of(op.result.type)
    lhs, rhs = (lw.tile(v) for v in op.operands)
    out = lw.alloc(tuple(t.shape), t.element)
    n0 = lhs.shape[0]

    def copy(src, offset):
        def body(idx):
            e = lw.elems()
            dst = (b.add(idx[0], ir.Constant(I64, offset)),) + idx[1:] if offset else idx
            e.store(out, dst, e.get(src, idx))
        loop_nest(b, src.shape, body)
    copy(lhs, 0)
    copy(rhs, n0)
    lw.env[op.result] = out


def lower_histogram(lw, op: Operation) -> None:
    b = lw.b
    t = tensor_of(op.result.type)
    nbins = t.shape[0]
    src = lw.tile(op.operands[0])
    mask = lw.tile(op.operands[1], src.shape) if len(op.operands) > 1 else None
    out = lw.alloc((nbins,), t.element)
    zero = const(t.element, 0)
    one = const(t.element, 1)

    def clear(idx):
        lw.elems().store(out, idx, zero)
    loop_nest(b, (nbins,), clear)

    def count(idx):
        e = lw.elems()
        v = e.get(src, idx)
        v64 = b.sext(v, I64) if v.type.width < 64 else v
        ok = b.icmp_unsigned("<", v64, ir.Constant(I64, nbins))  # negative -> huge
        if mask is not None:
            ok = b.and_(ok, e.get(mask, idx))
        yes = lw.fn.append_basic_block("hist.on")
        join = lw.fn.append_basic_block("hist.join")
        b.cbranch(ok, yes, join)
        b.position_at_end(yes)
        e2 = lw.elems()
        e2.store(out, (v64,), b.add(e2.get(out, (v64,)), one))
        b.branch(join)
        b.position_at_end(join)
    loop_nest(b, src.shape, count)
    lw.env[op.result] = out


def lower_gather(lw, op: Operation) -> None:
    b = lw.b
    src, ind = (lw.tile(v) for v in op.operands)
    axis = int(op.attributes["axis"])
    t = tensor_of(op.result.type)
    shape = tuple(t.shape)
    n = src.shape[axis]
    index = len(lw.mem_ops)
    lw.mem_ops.append(("gather", op.loc, n))

    def where(e, idx):
        v = e.get(ind, idx)
        return b.sext(v, I64) if v.type.width < 64 else v

    check_all(lw, shape, lambda e, idx: b.icmp_unsigned(">=", where(e, idx),
                                                        ir.Constant(I64, n)), index)
    out = lw.alloc(shape, t.element)

    def body(idx):
        e = lw.elems()
        sidx = idx[:axis] + (where(e, idx),) + idx[axis + 1:]
        e.store(out, idx, e.get(src, sidx))
    loop_nest(b, shape, body)
    lw.env[op.result] = out
