"""Tile ops on batched numpy arrays: reductions and scans with a combine function, ``tt.dot``.

Every interpreter value carries a leading *program* axis (size 1, or the number of programs
run together), so IR axis ``a`` is numpy axis ``a + 1`` here.
"""
from __future__ import annotations

import numpy as np

from ...ir.types import FloatType, IntType, Type
from .dtypes import float_value, from_float, np_dtype, truncate_tf32


def _take(x: np.ndarray, axis: int, start: int, stop: int) -> np.ndarray:
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(start, stop)
    return x[tuple(idx)]


def tree_reduce(xs: list, axis: int, combine) -> list:
    """Reduce arrays ``xs`` (same shape) along numpy ``axis`` with ``combine(accs, others) ->
    list``, vectorised: halves are combined pairwise (log2(n) combine calls), as a GPU's
    butterfly does. Returns the arrays with ``axis`` removed."""
    xs = list(np.broadcast_arrays(*xs))
    n = xs[0].shape[axis]
    if n == 0:
        raise ValueError("reduction over an empty axis")
    while n > 1:
        h = n // 2
        a = [_take(x, axis, 0, h) for x in xs]
        b = [_take(x, axis, h, 2 * h) for x in xs]
        r = [np.asarray(v) for v in combine(a, b)]
        r = [np.broadcast_to(v, a[0].shape) for v in r]
        if n % 2:
            r = [np.concatenate([v, _take(x, axis, 2 * h, n)], axis=axis)
                 for v, x in zip(r, xs, strict=False)]
        xs, n = r, h + n % 2
    return [np.squeeze(x, axis=axis) for x in xs]


def hillis_steele_scan(xs: list, axis: int, combine, reverse: bool = False) -> list:
    """Inclusive scan of ``xs`` along numpy ``axis`` with ``combine(earlier, later)``, in
    log2(n) vectorised steps (Hillis and Steele, 1986). ``reverse`` scans from the end."""
    xs = [np.ascontiguousarray(x) for x in np.broadcast_arrays(*xs)]
    if reverse:
        xs = [np.flip(x, axis=axis) for x in xs]
    n = xs[0].shape[axis]
    d = 1
    while d < n:
        prev = [_take(x, axis, 0, n - d) for x in xs]
        cur = [_take(x, axis, d, n) for x in xs]
        new = [np.broadcast_to(np.asarray(v), prev[0].shape) for v in combine(prev, cur)]
        xs = [np.concatenate([_take(x, axis, 0, d), v.astype(x.dtype, copy=False)], axis=axis)
              for x, v in zip(xs, new, strict=False)]
        d *= 2
    if reverse:
        xs = [np.flip(x, axis=axis) for x in xs]
    return xs


def dot(a: np.ndarray, b: np.ndarray, c: np.ndarray, ta: Type, tb: Type, tc: Type,
        precision: str | None) -> np.ndarray:
    """``c + a @ b`` on batched tiles ``a`` (P, M, K), ``b`` (P, K, N), ``c`` (P, M, N).

    - fp16/bf16 inputs: exact products, accumulation in fp32, then rounded to ``c``'s type.
    - fp32 inputs with ``precision`` "tf32" (Triton's default on NVIDIA GPUs): both inputs are
      first truncated to TF32 (10 mantissa bits, the low 13 bits cleared), as tensor cores
      read raw fp32 registers, so results match the GPU's; "ieee" (and "tf32x3", "bf16x3",
      "bf16x6", which GPUs use to approach fp32 accuracy) keeps full fp32
      inputs; accumulation in fp32.
    - fp64: all in fp64. int8/uint8: exact int32 accumulation (wraps at 32 bits).
    """
    sa = ta.scalar
    if isinstance(sa, IntType):
        acc = np.matmul(a.astype(np.int64), b.astype(np.int64))
        return (c.astype(np.int64) + acc).astype(np_dtype(tc))
    fa, fb = float_value(a, ta), float_value(b, tb)
    if isinstance(sa, FloatType) and sa.name == "f64":
        return (c + np.matmul(fa, fb)).astype(np_dtype(tc))
    fa, fb = fa.astype(np.float32), fb.astype(np.float32)
    if isinstance(sa, FloatType) and sa.name == "f32" and (precision in (None, "tf32")):
        fa, fb = truncate_tf32(fa), truncate_tf32(fb)
    acc = float_value(c, tc).astype(np.float32) + np.matmul(fa, fb)
    return from_float(acc, tc)
