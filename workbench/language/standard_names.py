"""Smaller public names of Triton 3.6's ``triton.language`` (``core.py`` and
``standard.py``): ``add``/``sub``/``mul`` as functions, ``reduce_or``, ``softmax``,
``str_to_ty`` and ``TRITON_MAX_TENSOR_NUMEL``; each built from the workbench's own
operations, so every backend runs them."""
from __future__ import annotations

from . import dtypes as dt
from .builtins import exp
from .core import LanguageError, builtin, tensor
from .mathops import fdiv
from .reductions import max as _max
from .reductions import reduce_tiles
from .reductions import sum as _sum
from .semantic import MAX_NUMEL, unwrap

#: the largest number of elements a tile may hold (``triton.language.TRITON_MAX_TENSOR_NUMEL``)
TRITON_MAX_TENSOR_NUMEL = MAX_NUMEL


@builtin
def add(x, y, sanitize_overflow=True, _semantic=None):
    """``x + y`` with the usual promotion and broadcasting (pointer + int too).
    ``sanitize_overflow`` is accepted; integer overflow wraps as with ``+``."""
    return _semantic.add(unwrap(x), unwrap(y))


@builtin
def sub(x, y, sanitize_overflow=True, _semantic=None):
    """``x - y`` (see :func:`add`)."""
    return _semantic.sub(unwrap(x), unwrap(y))


@builtin
def mul(x, y, sanitize_overflow=True, _semantic=None):
    """``x * y`` (see :func:`add`)."""
    return _semantic.mul(unwrap(x), unwrap(y))


@builtin
def reduce_or(input, axis, keep_dims=False, _semantic=None):  # noqa: A002
    """Bitwise or of the elements along ``axis`` (``tt.reduce`` of ``arith.ori``); integer
    tiles only (LanguageError otherwise)."""
    x = unwrap(input)
    if not isinstance(x, tensor) or not x.dtype.is_int():
        raise LanguageError(f"reduce_or only supported for integers, got {x!r}")
    return reduce_tiles(x, axis, lambda s, a, b: s.bitwise("or", a, b), _semantic,
                        unwrap(keep_dims))


@builtin
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False, _semantic=None):
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (default 0), as Triton's
    ``standard.softmax``: ``fdiv`` with ``ieee_rounding``; float tiles."""
    sem = _semantic
    d = 0 if unwrap(dim) is None else unwrap(dim)
    z = sem.sub(unwrap(x), _max(x, d, keep_dims=keep_dims, _semantic=sem))
    num = exp(z, _semantic=sem)
    den = _sum(num, d, keep_dims=keep_dims, _semantic=sem)
    return fdiv(num, den, ieee_rounding, _semantic=sem)


def str_to_ty(name: str, c=None) -> dt.dtype:
    """The dtype of a Triton signature string (``"fp32"``, ``"i32"``, ``"*fp16"``,
    ``"*kfp32"`` for a const pointer). Raises ValueError for an unknown name."""
    return dt.from_short_name(name)
