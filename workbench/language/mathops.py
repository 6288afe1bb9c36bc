"""Math builtins beyond the elementwise basics (Triton's ``language/math.py``): ``umulhi``,
``div_rn``, ``fdiv``, ``sqrt_rn``, ``clamp``, and ``to_tensor``."""
from __future__ import annotations

from . import dtypes as dt
from .builtins import PropagateNan, minmax_operands, propagates_nan
from .core import LanguageError, builtin
from .semantic import unwrap


@builtin
def umulhi(x, y, _semantic=None):
    """The high 32 (64) bits of the 64 (128)-bit unsigned product of ``x`` and ``y``
    (``tt.mulhiui``); int32/uint32/int64/uint64 after the binary promotion rules."""
    sem = _semantic
    x, y = sem.binary_checked(unwrap(x), unwrap(y))
    if not x.dtype.is_int() or x.dtype.primitive_bitwidth not in (32, 64):
        raise LanguageError(f"umulhi needs 32- or 64-bit integers, got {x.dtype}")
    return sem._op("tt.mulhiui", [x, y], x.dtype, x.shape)


def _fp32_pair(x, y, sem, what):
    x, y = sem.binary_checked(unwrap(x), unwrap(y), div_or_mod=True)
    if x.dtype != dt.float32:
        raise LanguageError(f"Expected dtype ['fp32'] but got {x.dtype} in {what}",
                            "cast first, e.g. x.to(tl.float32)")
    return x, y


@builtin
def div_rn(x, y, _semantic=None):
    """x / y rounded to nearest even (IEEE, ``tt.precise_divf``); fp32 only."""
    x, y = _fp32_pair(x, y, _semantic, "div_rn")
    return _semantic._op("tt.precise_divf", [x, y], x.dtype, x.shape)


@builtin
def fdiv(x, y, ieee_rounding=False, _semantic=None):
    """Floating point x / y: ``arith.divf`` (approximate ``div.full.f32`` on NVIDIA), or the
    IEEE division with ``ieee_rounding=True``. Raises for integer operands."""
    sem = _semantic
    x, y = unwrap(x), unwrap(y)
    for v in (x, y):
        t = sem.to_tensor(v) if not isinstance(v, (int, float)) else None
        if t is not None and not t.dtype.is_floating():
            raise LanguageError(f"fdiv needs floating point operands, got {t.dtype}",
                                "cast with .to(tl.float32), or use // for integers")
    if unwrap(ieee_rounding):
        x, y = sem.binary_checked(x, y, div_or_mod=True)
        if x.dtype == dt.float32:
            return sem._op("tt.precise_divf", [x, y], x.dtype, x.shape)
    return sem.truediv(x, y)


@builtin
def sqrt_rn(x, _semantic=None):
    """IEEE square root (``tt.precise_sqrt``); fp32 only."""
    x = _semantic.to_tensor(unwrap(x))
    if x.dtype != dt.float32:
        raise LanguageError(f"Expected dtype ['fp32'] but got {x.dtype} in sqrt_rn")
    return _semantic._op("tt.precise_sqrt", [x], x.dtype, x.shape)


@builtin
def clamp(x, min, max, propagate_nan=PropagateNan.NONE, _semantic=None):  # noqa: A002
    """``min(max(x, min), max)`` elementwise (``tt.clampf`` for floats; undefined when
    min > max). NaN in ``x`` is ignored unless ``propagate_nan=PropagateNan.ALL``. Python
    numbers first become tensors and bf16 becomes fp32, as in :func:`minimum`; then min/max
    are promoted together, then with ``x`` (Triton's ``language/semantic.py``). Integer tiles
    raise LanguageError with Triton's words (``tl.minimum``/``tl.maximum`` clamp them)."""
    sem = _semantic
    x, lo, hi = minmax_operands(sem, x, min, max)
    lo, hi = sem.binary_checked(lo, hi)
    x, lo = sem.binary_checked(x, lo)
    x, hi = sem.binary_checked(x, hi)
    x, lo = sem.binary_checked(x, lo)
    if not x.dtype.is_floating():
        raise LanguageError(f"Unexpected dtype {x.dtype.name}. "
                            "Only floating point clamp is supported",
                            "use tl.minimum(tl.maximum(x, lo), hi) for integers")
    prop = "all" if propagates_nan(propagate_nan) else "none"
    return sem._op("tt.clampf", [x, lo, hi], x.dtype, x.shape, {"propagateNan": prop})


@builtin
def to_tensor(x, _semantic=None):
    """``x`` as a tensor: Python ints become int32 (uint32, int64, uint64 when larger),
    floats fp32 (fp64 when out of range), bools int1 (Triton's ``language/semantic.py``)."""
    return _semantic.to_tensor(unwrap(x))


@builtin
def swizzle2d(i, j, size_i, size_j, size_g, _semantic=None):
    """Renumber a row-major ``size_i x size_j`` grid so that groups of ``size_g`` rows are
    walked column by column (Triton's ``tl.swizzle2d``, ``language/standard.py``; the
    grouped ordering of the matmul tutorial). Returns ``(new_i, new_j)``; integer scalars or
    tiles. The last group holds the rows left over (``min(size_i - first_row, size_g)``)."""
    s = _semantic
    i, j, size_i, size_j, size_g = (unwrap(v) for v in (i, j, size_i, size_j, size_g))
    linear = s.add(s.mul(i, size_j), j)           # position in row-major order
    per_group = s.mul(size_g, size_j)             # cells in one group of rows
    first_row = s.mul(s.floordiv(linear, per_group), size_g)
    rows_here = s.minmax("min", s.sub(size_i, first_row), size_g)
    within = s.mod(linear, per_group)             # position inside the group, column-major
    return s.add(first_row, s.mod(within, rows_here)), s.floordiv(within, rows_here)
