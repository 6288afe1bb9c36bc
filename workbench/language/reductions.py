"""Reductions: ``tl.sum``, ``tl.max``, ``tl.min`` over one axis or all (reference §1.8).

Each builds one ``tt.reduce`` whose combine region takes (acc, x) scalars and ends in
``tt.reduce.return``. Accumulation dtypes follow Triton 3.6: ``sum`` keeps float dtypes and
accumulates ints narrower than 32 bits in int32/uint32; ``max``/``min`` upcast floats narrower
than 32 bits to fp32 and ints to int32.
"""
from __future__ import annotations

from . import dtypes as dt
from .core import LanguageError, builtin, tensor
from .semantic import ir_type, unwrap


def reduce_tiles(x: tensor, axis, combine, sem, keep_dims=False) -> tensor:
    """Reduce ``x`` along ``axis`` (None: all axes) with ``combine(sem, a, b) -> tensor`` on
    scalars. Returns a scalar for a 1-D input (or ``axis=None``), else a tile without ``axis``
    (kept as size 1 with ``keep_dims``)."""
    if not x.shape:
        raise LanguageError("cannot reduce a scalar", "reductions take a tile")
    axis = unwrap(axis)
    keep_dims = bool(unwrap(keep_dims))
    rank = len(x.shape)
    if axis is None:
        if rank > 1:
            x = sem._op("tt.reshape", [x], x.dtype, (x.numel,), {"allow_reorder": True})
        out = reduce_tiles(x, 0, combine, sem)
        if keep_dims:
            for i in range(rank):
                out = sem.expand_dims(out, i)
        return out
    if isinstance(axis, tensor) or not isinstance(axis, int) or isinstance(axis, bool):
        raise LanguageError(f"reduction axis must be a compile-time int, got {axis!r}")
    if not -rank <= axis < rank:
        raise LanguageError(f"reduction axis {axis} is out of range for a tile of rank {rank}")
    axis %= rank
    shape = x.shape[:axis] + x.shape[axis + 1:]
    b = sem.builder
    op = b.create("tt.reduce", [x.handle], [ir_type(x.dtype, shape)], {"axis": axis}, regions=1)
    el = x.dtype.to_ir()
    block = op.regions[0].add_block([el, el])
    for arg in block.args:
        arg.name = getattr(b.loc, "name", None)
    with b.at_end_of(block):
        r = combine(sem, sem.wrap(block.args[0], x.dtype), sem.wrap(block.args[1], x.dtype))
        b.create("tt.reduce.return", [r.handle], [])
    out = sem.wrap(op.result, x.dtype, shape)
    if keep_dims:
        out = sem.expand_dims(out, axis)
    return out


def _add(sem, a, b):
    return sem.add(a, b)


def _max(sem, a, b):
    return sem.minmax("max", a, b)


def _min(sem, a, b):
    return sem.minmax("min", a, b)


def _input(x, sem, what):
    x = unwrap(x)
    if not isinstance(x, tensor):
        raise LanguageError(f"tl.{what} needs a tile, got {x!r}")
    return x


@builtin
def sum(input, axis=None, keep_dims=False, dtype=None, _semantic=None):  # noqa: A001
    """Sum along ``axis`` (``None``: all). Floats keep their dtype; ints narrower than 32 bits
    accumulate in int32 (uint32 when unsigned); ``dtype=`` overrides."""
    x = _input(input, _semantic, "sum")
    dtype = unwrap(dtype)
    if dtype is None and x.dtype.is_int() and x.dtype.int_bitwidth < 32:
        dtype = dt.int32 if x.dtype.is_int_signed() else dt.uint32
    if dtype is not None:
        x = _semantic.cast(x, dtype)
    return reduce_tiles(x, axis, _add, _semantic, keep_dims)


def _minmax_input(input, sem, what, return_indices):
    x = _input(input, sem, what)
    if unwrap(return_indices):
        raise LanguageError(f"tl.{what}(..., return_indices=True) is not supported yet",
                            f"use tl.arg{what} when it lands")
    if x.dtype.primitive_bitwidth < 32:
        x = sem.cast(x, dt.float32 if x.dtype.is_floating() else dt.int32)
    return x


@builtin
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True,  # noqa: A001
        keep_dims=False, _semantic=None):
    """Maximum along ``axis`` (NaN-ignoring ``maxnumf`` for floats); floats narrower than 32
    bits are upcast to fp32, ints to int32 (reference §1.8)."""
    x = _minmax_input(input, _semantic, "max", return_indices)
    return reduce_tiles(x, axis, _max, _semantic, keep_dims)


@builtin
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True,  # noqa: A001
        keep_dims=False, _semantic=None):
    """Minimum along ``axis``; same dtype rules as :func:`max`."""
    x = _minmax_input(input, _semantic, "min", return_indices)
    return reduce_tiles(x, axis, _min, _semantic, keep_dims)
