"""Lesson 3: reductions (a row sum, a softmax, a layer norm), one program per row, the row in
one tile of BLOCK = next_power_of_2(N) elements, masked.

The slow row sum walks its row one element at a time (scalar loads). The slow softmax and
layer norm are right but walk their row in chunks of 64, once per pass (three passes), reading
it from memory three times where one read into registers is enough: on a memory-bound kernel,
bytes moved are time (the check counts the bytes each kernel issues, re-reads included; a
chunk's start is also a run-time value not known to be a multiple of 4, so each thread moves 4
bytes per access where the one-tile solution moves 16). Reading the same whole-row tile three
times would not be slow: the compiler merges identical loads.
"""
from __future__ import annotations

import numpy as np

from ... import language as tl
from ...runtime.jit import jit
from ..exercise import Case, Exercise

SIZES = ((7, 100), (16, 256), (123, 781), (512, 1024))


@jit
def row_sum(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@jit
def row_sum_scalar(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = 0.0
    for j in range(N):
        acc += tl.load(x_ptr + row * stride + j)
    tl.store(out_ptr + row, acc)


@jit
def softmax(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@jit
def softmax_three_passes(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, 64)
    m = -float("inf")
    for start in range(0, N, 64):
        x = tl.load(x_ptr + row * stride + start + cols, mask=start + cols < N,
                    other=-float("inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
    s = 0.0
    for start in range(0, N, 64):
        x = tl.load(x_ptr + row * stride + start + cols, mask=start + cols < N,
                    other=-float("inf"))
        s += tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, N, 64):
        mask = start + cols < N
        x = tl.load(x_ptr + row * stride + start + cols, mask=mask, other=-float("inf"))
        tl.store(out_ptr + row * stride + start + cols, tl.exp(x - m) / s, mask=mask)


@jit
def layer_norm(x_ptr, w_ptr, b_ptr, out_ptr, N, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / N
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * stride + cols, d * rstd * w + b, mask=mask)


@jit
def layer_norm_two_passes(x_ptr, w_ptr, b_ptr, out_ptr, N, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, 64)
    acc = 0.0
    for start in range(0, N, 64):
        acc += tl.sum(tl.load(x_ptr + row * stride + start + cols, mask=start + cols < N,
                              other=0.0), axis=0)
    mean = acc / N
    sq = 0.0
    for start in range(0, N, 64):
        mask = start + cols < N
        d = tl.where(mask, tl.load(x_ptr + row * stride + start + cols, mask=mask) - mean, 0.0)
        sq += tl.sum(d * d, axis=0)
    rstd = 1.0 / tl.sqrt(sq / N + eps)
    for start in range(0, N, 64):
        mask = start + cols < N
        x = tl.load(x_ptr + row * stride + start + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + start + cols, mask=mask)
        b = tl.load(b_ptr + start + cols, mask=mask)
        tl.store(out_ptr + row * stride + start + cols, (x - mean) * rstd * w + b, mask=mask)


def _pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _label(m: int, n: int) -> str:
    block = _pow2(n)
    return f"{m} rows of N={n}" + (f" (BLOCK={block}: {block - n} lanes masked)"
                                   if block != n else "")


def _row_of(n: int):
    """Flat index of an (M, N) output -> the program (its row)."""
    def program(i: int) -> tuple:
        return (i // n,)
    return program


def _rows(rng, size):
    m, n = size
    return m, n, rng.standard_normal((m, n), dtype=np.float32)


def _make_row_sum(rng, size) -> Case:
    m, n, x = _rows(rng, size)
    out = np.full(m, np.nan, np.float32)
    return Case(_label(m, n), (x, out, n, n), {"BLOCK": _pow2(n)}, (m,),
                {1: x.sum(axis=1, dtype=np.float64).astype(np.float32)}, rtol=1e-4,
                atol=1e-4, program_of=lambda i: (i,))


def _make_softmax(rng, size) -> Case:
    m, n, x = _rows(rng, size)
    out = np.full((m, n), np.nan, np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return Case(_label(m, n), (x, out, n, n), {"BLOCK": _pow2(n)}, (m,),
                {1: e / e.sum(axis=1, keepdims=True)}, rtol=1e-4, atol=1e-6,
                program_of=_row_of(n))


def _make_layer_norm(rng, size) -> Case:
    m, n, x = _rows(rng, size)
    w = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    eps = 1e-5
    out = np.full((m, n), np.nan, np.float32)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    want = ((x - mean) / np.sqrt(var + eps) * w + b).astype(np.float32)
    return Case(_label(m, n), (x, w, b, out, n, n, eps), {"BLOCK": _pow2(n)}, (m,),
                {3: want}, rtol=1e-3, atol=1e-4, program_of=_row_of(n))


ROW = ("row = tl.program_id(0)\ncols = tl.arange(0, BLOCK)\nmask = cols < N\n")
REREAD = "it reads the same data more than once"

EXERCISES = (
    Exercise(
        name="row_sum", lesson=3, title="Row sum",
        task="out[i] = sum_j x[i, j] for an M x N x (row stride `stride`), one program per "
             "row, BLOCK = next_power_of_2(N) >= N.",
        params=("x_ptr", "out_ptr", "N", "stride", "BLOCK"),
        stub='''@wb.jit
def row_sum(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    # TODO: load the row as one masked tile (what should masked lanes read?), sum it
    pass
''',
        solution=row_sum, slow=row_sum_scalar, slow_advice="4-byte accesses where 16 are",
        make=_make_row_sum, sizes=SIZES,
        hints=("One tile holds the whole row; `tl.sum(x, axis=0)` reduces it to a scalar.",
               "Lanes past N are masked; a masked load returns `other` there, and a sum needs "
               "them to be 0.0 (`other=0.0`).",
               ROW + "x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)\n"
               "tl.store(out_ptr + row, tl.sum(x, axis=0))")),
    Exercise(
        name="softmax", lesson=3, title="Softmax of each row",
        task="out[i, :] = exp(x[i, :] - max) / sum(exp(x[i, :] - max)), one program per row.",
        params=("x_ptr", "out_ptr", "N", "stride", "BLOCK"),
        stub='''@wb.jit
def softmax(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    # TODO: load the row once, subtract its max, exponentiate, divide by the sum, store
    pass
''',
        solution=softmax, slow=softmax_three_passes, slow_advice=REREAD,
        make=_make_softmax, sizes=SIZES,
        hints=("Read the row once; everything else happens in registers.",
               "Masked lanes must not win the max nor add to the sum: load them as -inf "
               "(`other=-float('inf')`), then exp(-inf) = 0.",
               ROW + "x = tl.load(x_ptr + row * stride + cols, mask=mask, "
               "other=-float('inf'))\ne = tl.exp(x - tl.max(x, axis=0))\n"
               "tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)")),
    Exercise(
        name="layer_norm", lesson=3, title="Layer norm of each row",
        task="out[i, :] = (x[i, :] - mean) / sqrt(var + eps) * w + b, mean and (biased) "
             "variance over the row's N elements, one program per row.",
        params=("x_ptr", "w_ptr", "b_ptr", "out_ptr", "N", "stride", "eps", "BLOCK"),
        stub='''@wb.jit
def layer_norm(x_ptr, w_ptr, b_ptr, out_ptr, N, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    # TODO: mean, variance (masked lanes must not count), normalise, scale by w, shift by b
    pass
''',
        solution=layer_norm, slow=layer_norm_two_passes, slow_advice=REREAD,
        make=_make_layer_norm, sizes=SIZES,
        hints=("Two reductions over the same row: the mean, then the mean of squared "
               "deviations.",
               "Divide by N, not BLOCK; the deviations of masked lanes must be zeroed "
               "(`tl.where(mask, x - mean, 0.0)`) before squaring.",
               ROW + "x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)\n"
               "mean = tl.sum(x, axis=0) / N\nd = tl.where(mask, x - mean, 0.0)\n"
               "rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)")),
)
