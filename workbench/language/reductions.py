"""Reductions: ``tl.sum``, ``tl.max``, ``tl.min`` over one axis or all (Triton's
``language/standard.py``).

Each builds one ``tt.reduce`` whose combine region takes (acc, x) scalars and ends in
``tt.reduce.return``. Accumulation dtypes follow Triton 3.6: ``sum`` keeps float dtypes and
accumulates ints narrower than 32 bits in int32/uint32; ``max``/``min`` upcast floats narrower
than 32 bits to fp32 and ints to int32.
"""
from __future__ import annotations

from . import dtypes as dt
from .core import LanguageError, builtin, tensor
from .semantic import ir_type, unwrap


def _region_op(name, xs, axis, combine, sem, attrs, out_shape):
    """Build ``tt.reduce``/``tt.scan`` over tiles ``xs`` with the scalar ``combine``."""
    b = sem.builder
    op = b.create(name, [x.handle for x in xs], [ir_type(x.dtype, out_shape) for x in xs],
                  {"axis": axis, **attrs}, regions=1)
    els = [x.dtype.to_ir() for x in xs]
    block = op.regions[0].add_block(els + els)
    for arg in block.args:
        arg.name = getattr(b.loc, "name", None)
    with b.at_end_of(block):
        n = len(xs)
        accs = [sem.wrap(a, x.dtype) for a, x in zip(block.args[:n], xs, strict=False)]
        news = [sem.wrap(a, x.dtype) for a, x in zip(block.args[n:], xs, strict=False)]
        r = combine(sem, *accs, *news)
        r = list(r) if isinstance(r, (tuple, list)) else [r]
        if len(r) != n:
            raise LanguageError(f"the combine function returned {len(r)} values, expected {n}")
        r = [sem.cast(v, x.dtype) for v, x in zip(r, xs, strict=False)]
        b.create(name + ".return", [v.handle for v in r], [])
    return [sem.wrap(res, x.dtype, out_shape) for res, x in zip(op.results, xs, strict=False)]


def _check_axis(axis, rank):
    if isinstance(axis, tensor):
        raise LanguageError(
            f"reduction axis must be a compile-time int, got a tensor ({axis!r}): tl.min, "
            "tl.max and tl.sum reduce one tile along an axis; for the elementwise minimum or "
            "maximum of two tiles use tl.minimum / tl.maximum")
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise LanguageError(f"reduction axis must be a compile-time int, got {axis!r}")
    if not -rank <= axis < rank:
        raise LanguageError(f"axis {axis} is out of range for a tile of rank {rank}")
    return axis % rank


def reduce_tiles(x, axis, combine, sem, keep_dims=False):
    """Reduce ``x`` (a tile or a tuple of same-shape tiles) along ``axis`` (None: all axes)
    with ``combine(sem, *accs, *xs) -> tensor | tuple`` on scalars. Returns a scalar for a
    1-D input (or ``axis=None``), else a tile without ``axis`` (kept as size 1 with
    ``keep_dims``); a tuple for a tuple input."""
    multi = isinstance(x, (tuple, list))
    xs = list(x) if multi else [x]
    if not xs or any(not isinstance(t, tensor) or not t.shape for t in xs):
        raise LanguageError("reductions take tiles, not scalars")
    if any(t.shape != xs[0].shape for t in xs):
        raise LanguageError("all tiles of a multi-operand reduction must have one shape")
    axis = unwrap(axis)
    keep_dims = bool(unwrap(keep_dims))
    rank = len(xs[0].shape)
    if axis is None:
        if rank > 1:
            xs = [sem._op("tt.reshape", [t], t.dtype, (t.numel,), {"allow_reorder": True})
                  for t in xs]
        outs = reduce_tiles(xs, 0, combine, sem)
        if keep_dims:
            for i in range(rank):
                outs = [sem.expand_dims(o, i) for o in outs]
        return tuple(outs) if multi else outs[0]
    axis = _check_axis(axis, rank)
    shape = xs[0].shape[:axis] + xs[0].shape[axis + 1:]
    outs = _region_op("tt.reduce", xs, axis, combine, sem, {}, shape)
    if keep_dims:
        outs = [sem.expand_dims(o, axis) for o in outs]
    return tuple(outs) if multi else outs[0]


def scan_tiles(x, axis, combine, sem, reverse=False):
    """Inclusive scan of ``x`` (a tile or tuple of tiles) along ``axis`` (``tt.scan``)."""
    multi = isinstance(x, (tuple, list))
    xs = list(x) if multi else [x]
    if any(not isinstance(t, tensor) or not t.shape for t in xs):
        raise LanguageError("scans take tiles, not scalars")
    if any(t.shape != xs[0].shape for t in xs):
        raise LanguageError("all tiles of a multi-operand scan must have one shape")
    axis = _check_axis(unwrap(axis), len(xs[0].shape))
    outs = _region_op("tt.scan", xs, axis, combine, sem, {"reverse": bool(unwrap(reverse))},
                      xs[0].shape)
    return tuple(outs) if multi else outs[0]


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


def _arg_combine(which, tie_break_left):
    """Triton's ``_argmax_combine``/``_argmin_combine`` (``language/standard.py``): keep
    (v1, i1) when v1 is strictly better, or on a tie when ``tie_break_left`` and i1 < i2."""
    def combine(sem, v1, i1, v2, i2):
        tie = None  # computed first, as Triton's combine function does
        if tie_break_left:
            tie = sem.logical("and", sem.compare("eq", v1, v2), sem.compare("lt", i1, i2))
        better = sem.compare("gt" if which == "max" else "lt", v1, v2)
        if tie is not None:
            better = sem.logical("or", better, tie)
        return sem.where(better, v1, v2), sem.where(better, i1, i2)
    return combine


def reduce_with_indices(input, axis, which, tie_break_left, keep_dims, sem):
    """(value, int32 index) of the maximum (``which="max"``) or minimum along ``axis``, as
    Triton's ``_reduce_with_indices``: one ``tt.reduce`` of the tile and an index tile
    (``tt.make_range`` broadcast along the other axes). bf16 is compared in fp32, other
    dtypes as they are. Ties go to the smallest index when ``tie_break_left``, else to
    whichever the reduction tree meets last. Raises LanguageError without an axis."""
    x = _input(input, sem, which)
    if x.dtype == dt.bfloat16:
        x = sem.cast(x, dt.float32)
    axis = unwrap(axis)
    if axis is None:
        raise LanguageError(f"tl.{which} with return_indices=True needs an axis",
                            "pass axis=0 (a 1-D tile) or the axis to reduce")
    rank = len(x.shape)
    ax = _check_axis(axis, rank)
    idx = sem._op("tt.make_range", [], dt.int32, (x.shape[ax],),
                  {"start": 0, "end": x.shape[ax]})
    for d in range(rank):
        if d != ax:
            idx = sem.expand_dims(idx, d)
    idx = sem.broadcast_to_shape(idx, x.shape)
    combine = _arg_combine(which, bool(unwrap(tie_break_left)))
    return reduce_tiles((x, idx), ax, combine, sem, keep_dims)


def _minmax_input(input, sem, what):
    x = _input(input, sem, what)
    if x.dtype.primitive_bitwidth < 32:
        x = sem.cast(x, dt.float32 if x.dtype.is_floating() else dt.int32)
    return x


@builtin
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True,  # noqa: A001
        keep_dims=False, _semantic=None):
    """Maximum along ``axis`` (NaN-ignoring ``maxnumf`` for floats); floats narrower than 32
    bits are upcast to fp32, ints to int32 (Triton's ``language/standard.py``). With
    ``return_indices=True``: a (value, int32 index) pair, see :func:`reduce_with_indices`
    (only bf16 is upcast there, as in Triton)."""
    if unwrap(return_indices):
        return reduce_with_indices(input, axis, "max", return_indices_tie_break_left,
                                   keep_dims, _semantic)
    x = _minmax_input(input, _semantic, "max")
    return reduce_tiles(x, axis, _max, _semantic, keep_dims)


@builtin
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True,  # noqa: A001
        keep_dims=False, _semantic=None):
    """Minimum along ``axis``; same dtype rules and ``return_indices`` as :func:`max`."""
    if unwrap(return_indices):
        return reduce_with_indices(input, axis, "min", return_indices_tie_break_left,
                                   keep_dims, _semantic)
    x = _minmax_input(input, _semantic, "min")
    return reduce_tiles(x, axis, _min, _semantic, keep_dims)
