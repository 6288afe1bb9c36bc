"""Tiles in the CPU lowering: lazy element expressions, scratch buffers and loop nests.

A tile value of the kernel (``tensor<16x64xf32>``) is one of:

- :class:`Splat` - every element is one SSA scalar (``tt.splat``, tensor ``arith.constant``);
- :class:`Buffer` - elements stored in the per-worker scratch arena, element ``idx`` at
  ``ptr + sum(idx[d] * strides[d])`` (strides in elements; 0 for broadcast dims, so
  ``tt.broadcast``/``tt.expand_dims``/``tt.trans`` of a buffer are views, no copy);
- :class:`Lazy` - an expression evaluated per element inside the consumer's loop (``make_range``,
  elementwise ops, index ops over lazy tiles). Chains of elementwise ops therefore fuse into the
  loop of the store or reduction that consumes them.

``Elems`` evaluates elements at an index (a tuple of i64 LLVM values, one per dim) inside one
loop body, memoising each (tile, index) pair so shared sub-expressions are computed once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llvmlite import ir

from ...ir.types import Type
from .llvmtypes import I64, from_storage, storage_type, to_storage


class Tile:
    """Base class: ``shape`` (tuple of ints) and IR element type ``elem``."""

    shape: tuple
    elem: Type


@dataclass(eq=False)
class Splat(Tile):
    shape: tuple
    elem: Type
    value: object  # LLVM value


@dataclass(eq=False)
class Buffer(Tile):
    shape: tuple
    elem: Type
    ptr: object  # LLVM pointer to storage elements
    strides: tuple

    def contiguous(self) -> bool:
        return self.strides == contiguous_strides(self.shape)


@dataclass(eq=False)
class Lazy(Tile):
    """``kind``: "range" (start + idx[0]), "elementwise" (op applied to operands at the same
    index), "broadcast", "expand", "trans", "reshape", "load" (a deferred ``tt.load``:
    operands ``[ptr, mask or None, other or None]``, ``param`` its reader). ``op`` is the IR
    op (for elementwise: its name, attributes and location), ``operands`` are Tiles."""

    shape: tuple
    elem: Type
    kind: str
    operands: list = field(default_factory=list)
    op: object = None
    param: object = None


def contiguous_strides(shape) -> tuple:
    """Row-major strides (in elements) of ``shape``."""
    out, s = [], 1
    for n in reversed(shape):
        out.append(s)
        s *= n
    return tuple(reversed(out))


def numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


ZERO = ir.Constant(I64, 0)


class Elems:
    """Evaluates tile elements at an index inside one loop body.

    ``emit_op(op, args, arg_types)`` is the callback lowering one element of an elementwise
    IR op (it sets the op's debug location)."""

    def __init__(self, b: ir.IRBuilder, emit_op, lowering=None):
        self.b = b
        self.emit_op = emit_op
        self.lowering = lowering
        self.memo: dict = {}
        #: ``id(tile) -> Buffer``: tiles read from a buffer instead (a deferred load copied)
        self.subst: dict = {}
        #: ``(Run, idx, start_idx, r)`` of the enclosing run loop (a store's), or None
        self.run_ctx: tuple | None = None

    def get(self, tile: Tile, idx: tuple):
        """The LLVM value of ``tile`` at ``idx`` (tuple of i64 values, len == rank)."""
        if self.subst:
            tile = self.subst.get(id(tile), tile)
        if isinstance(tile, Splat):
            return tile.value
        key = (id(tile), tuple(id(i) for i in idx))
        hit = self.memo.get(key)
        if hit is not None:
            return hit[1]
        v = self._compute(tile, idx)
        self.memo[key] = (tile, v)  # keep tile alive so id() stays unique
        return v

    def _compute(self, tile: Tile, idx: tuple):
        b = self.b
        if isinstance(tile, Buffer):
            st = storage_type(tile.elem)
            return from_storage(b, b.load(self.address(tile, idx), typ=st), tile.elem)
        assert isinstance(tile, Lazy), tile
        kind = tile.kind
        if kind == "load":  # a deferred load (see load_fusion), read here
            reader: Any = tile.param
            return reader.element(self.lowering, self, tile, idx)
        if kind == "range":
            start = ir.Constant(ir.IntType(32), tile.param)
            return b.add(b.trunc(idx[0], ir.IntType(32)), start)
        if kind == "elementwise":
            args = [self.get(t, idx) for t in tile.operands]
            return self.emit_op(tile.op, args)
        src = tile.operands[0]
        if kind == "broadcast":
            sidx = tuple(ZERO if s == 1 and n != 1 else i
                         for i, s, n in zip(idx, src.shape, tile.shape, strict=True))
            return self.get(src, sidx)
        if kind == "expand":
            axis = tile.param
            assert isinstance(axis, int), axis
            return self.get(src, idx[:axis] + idx[axis + 1:])
        if kind == "trans":
            order = tile.param
            assert isinstance(order, tuple), order
            perm: list = [None] * len(order)
            for i, o in enumerate(order):
                perm[o] = idx[i]
            return self.get(src, tuple(perm))
        if kind == "reshape":
            return self.get(src, delinearize(b, linearize(b, idx, tile.shape), src.shape))
        raise AssertionError(kind)

    def address(self, buf: Buffer, idx: tuple):
        """Pointer to element ``idx`` of a buffer."""
        b = self.b
        off = None
        for i, s in zip(idx, buf.strides, strict=True):
            if s == 0 or (isinstance(i, ir.Constant) and i.constant == 0):
                continue
            term = i if s == 1 else b.mul(i, ir.Constant(I64, s))
            off = term if off is None else b.add(off, term)
        if off is None:
            return buf.ptr
        return b.gep(buf.ptr, [off], source_etype=storage_type(buf.elem))

    def store(self, buf: Buffer, idx: tuple, value):
        self.b.store(to_storage(self.b, value, buf.elem), self.address(buf, idx))


def linearize(b: ir.IRBuilder, idx: tuple, shape: tuple):
    """Row-major linear index (i64) of ``idx`` in ``shape``."""
    lin = ZERO
    for i, n in zip(idx, shape, strict=True):
        lin = b.add(b.mul(lin, ir.Constant(I64, n)), i)
    return lin


def delinearize(b: ir.IRBuilder, lin, shape: tuple) -> tuple:
    """Inverse of :func:`linearize` (``udiv``/``urem`` by constant extents)."""
    out = []
    for n in reversed(shape):
        out.append(b.urem(lin, ir.Constant(I64, n)) if n != 1 else ZERO)
        lin = b.udiv(lin, ir.Constant(I64, n))
    return tuple(reversed(out))


def loop_nest(b: ir.IRBuilder, shape: tuple, body, starts=None) -> None:
    """Emit nested counted loops over ``shape`` (outermost dim first) and call
    ``body(idx)`` in the innermost block with ``idx`` a tuple of i64 values. ``starts``
    optionally gives the first index per dim (default 0). Dims of extent 1 get no loop. The
    builder ends positioned after the nest."""
    starts = starts or (0,) * len(shape)
    _nest(b, tuple(shape), tuple(starts), (), body)


def _nest(b, shape, starts, idx, body):
    if not shape:
        body(idx)
        return
    n, s0 = shape[0], starts[0]
    if n - s0 <= 0:
        return
    if n - s0 == 1:
        _nest(b, shape[1:], starts[1:], idx + (ir.Constant(I64, s0),), body)
        return
    fn = b.function
    pre = b.block
    head = fn.append_basic_block("loop")
    exit_ = fn.append_basic_block("loop.end")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64, name="i")
    i.add_incoming(ir.Constant(I64, s0), pre)
    _nest(b, shape[1:], starts[1:], idx + (i,), body)
    nxt = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, ir.Constant(I64, n)), head, exit_)
    b.position_at_end(exit_)
