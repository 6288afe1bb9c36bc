"""``tl.standard``: the functions Triton 3.6 writes in ``triton/language/standard.py``
(reductions, scans, ``sort``/``topk``, ``flip``, ``softmax``...), gathered under Triton's
module name so ``tl.standard.max`` and ``from triton.language.standard import ...`` find
them; plus :func:`bitonic_merge`, the last stage of the bitonic sort on its own."""
from __future__ import annotations

from .advanced import argmax, argmin, cumprod, cumsum, xor_sum
from .builtins import cdiv, sigmoid, zeros, zeros_like
from .core import LanguageError, builtin
from .mathops import swizzle2d
from .reductions import max, min, sum
from .semantic import unwrap
from .shapes import _compare_swap, _flip_dim, _log2, _t, flip, interleave, ravel, sort, topk
from .standard_names import reduce_or, softmax

__all__ = ["argmax", "argmin", "bitonic_merge", "cdiv", "cumprod", "cumsum", "flip",
           "interleave", "max", "min", "ravel", "reduce_or", "sigmoid", "softmax", "sort",
           "sort_impl", "sum", "swizzle2d", "topk", "xor_sum", "zeros", "zeros_like"]


@builtin
def bitonic_merge(x, dim=None, descending=0, _semantic=None):
    """Merge each bitonic sequence along the last dim of ``x`` (its size a power of two) into
    sorted order, ascending, or descending when ``descending`` is true: the last stage of a
    bitonic sort, ``log2(n)`` rounds of compare-and-swap with partners ``n/2, n/4, ... 1``
    apart (Triton 3.6's ``bitonic_merge``, ``standard.py``). The input is not checked: rows
    that are not bitonic come out merged but not sorted. Only the last dim is supported
    (LanguageError otherwise, Triton's words)."""
    sem = _semantic
    x = _t(x, sem)
    if not x.shape:
        raise LanguageError("bitonic_merge needs a tile")
    d = _flip_dim(unwrap(dim), len(x.shape))
    if d != len(x.shape) - 1:
        raise LanguageError("only minor dimension is currently supported",
                            "merge along the last dim (tl.trans the tile first)")
    n = _log2(x.shape[-1])
    desc = bool(unwrap(descending))
    for i in range(n):
        x = _compare_swap(x, None, i, n, sem, desc)
    return x


@builtin
def sort_impl(x, k=None, dim=None, descending=0, _semantic=None):
    """Triton's ``sort_impl``: :func:`sort` when ``k`` is None, else the ``k`` largest
    (``descending``) elements of each row, as :func:`topk`. Ascending top-k is not
    provided (Triton's tests do not use it): LanguageError."""
    k = unwrap(k)
    if k is None:
        return sort(x, dim=dim, descending=descending, _semantic=_semantic)
    if not bool(unwrap(descending)):
        raise LanguageError("sort_impl with k and ascending order is not supported",
                            "use tl.topk (descending) or sort the whole row")
    return topk(x, k, dim=dim, _semantic=_semantic)

