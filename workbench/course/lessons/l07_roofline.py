"""Lesson 7, autotuning and the roofline: kernels that must be right for every configuration
an autotuner may try (the cases sweep block sizes and warps, as ``@autotune`` would), judged
on the H200's roofline from the FLOPs and bytes counted in their IR.

Slow solutions: a row statistic that reads every row twice (a memory-bound kernel pays for
every byte it re-reads); a matmul whose configurations all multiply with scalar FMAs (the
tensor-core roof is out of reach); a polynomial evaluated term by term, whose extra
multiplications push it past the ridge, where the compute roof binds it (Horner's rule keeps
it memory-bound, where the arithmetic is free).
"""
from __future__ import annotations

import numpy as np

from ... import language as tl
from ...runtime.jit import jit
from ..exercise import Case, Exercise

D = 16


@jit
def mean_var(x_ptr, mean_ptr, var_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    s = tl.zeros((BLOCK,), tl.float32)
    s2 = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        s += x
        s2 += x * x
    mean = tl.sum(s, axis=0) / N
    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, tl.sum(s2, axis=0) / N - mean * mean)


@jit
def mean_var_two_pass(x_ptr, mean_ptr, var_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        s += tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    mean = tl.sum(s, axis=0) / N
    d2 = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        d = tl.where(cols < N, x - mean, 0.0)
        d2 += d * d
    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, tl.sum(d2, axis=0) / N)


@jit
def matmul_tuned(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@jit
def matmul_tuned_fma(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.sum(a[:, :, None].to(tl.float32) * b[None, :, :].to(tl.float32), axis=1)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@jit
def horner(x_ptr, c_ptr, out_ptr, n, D: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for k in tl.static_range(D):
        acc = acc * x + tl.load(c_ptr + (D - 1 - k))
    tl.store(out_ptr + offs, acc, mask=mask)


@jit
def horner_by_terms(x_ptr, c_ptr, out_ptr, n, D: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for k in range(D):
        power = tl.full((BLOCK,), 1.0, tl.float32)
        for _ in range(k):
            power = power * x
        acc += tl.load(c_ptr + k) * power
    tl.store(out_ptr + offs, acc, mask=mask)


def _make_mean_var(rng, size) -> Case:
    m, n, block, warps = size
    x = (rng.standard_normal((m, n)) + 0.5).astype(np.float32)
    mean, var = np.full(m, np.nan, np.float32), np.full(m, np.nan, np.float32)
    x64 = x.astype(np.float64)
    tail = f", the last chunk holds {n % block} of {block}" if n % block else ""
    return Case(f"{m} rows of N={n} with BLOCK={block}, num_warps={warps}{tail}",
                (x, mean, var, n), {"BLOCK": block, "num_warps": warps}, (m,),
                {1: x64.mean(1).astype(np.float32), 2: x64.var(1).astype(np.float32)},
                rtol=1e-4, atol=1e-4, program_of=lambda i: (i,))


def _make_matmul(rng, size) -> Case:
    m, n, k, bm, bn, bk, warps = size
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    tails = [f"{w}={v}" for w, v, t in (("M", m, bm), ("N", n, bn), ("K", k, bk)) if v % t]
    return Case(f"M={m}, N={n}, K={k} with BM={bm}, BN={bn}, BK={bk}, num_warps={warps}"
                + (f" (tails: {', '.join(tails)})" if tails else ""),
                (a, b, c, m, n, k), {"BM": bm, "BN": bn, "BK": bk, "num_warps": warps},
                (-(-m // bm), -(-n // bn)), {2: want}, rtol=1e-2, atol=1e-3 * np.sqrt(k),
                program_of=lambda i: (i // n // bm, i % n // bn))


def _make_horner(rng, size) -> Case:
    n, block = size
    x = rng.uniform(-1, 1, n).astype(np.float32)
    c = (rng.standard_normal(D) / np.arange(1, D + 1)).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    want = np.polynomial.polynomial.polyval(x.astype(np.float64), c.astype(np.float64))
    tail = f" (the last block holds {n % block} of {block})" if n % block else ""
    return Case(f"n={n}, degree {D - 1}, BLOCK={block}{tail}", (x, c, out, n),
                {"D": D, "BLOCK": block}, (-(-n // block),), {2: want.astype(np.float32)},
                rtol=1e-4, atol=1e-5, program_of=lambda i: (i // block,))


EXERCISES = (
    Exercise(
        name="mean_var", lesson=7, title="Row mean and variance, right for every config",
        task="mean[i] = x[i, :].mean() and var[i] = x[i, :].var() (population variance) for "
             "a row-major fp32 M x N x, one program per row walking it in chunks of BLOCK; "
             "the check runs several (BLOCK, num_warps) configurations, as an autotuner would.",
        params=("x_ptr", "mean_ptr", "var_ptr", "N", "BLOCK"),
        stub='''@wb.jit
def mean_var(x_ptr, mean_ptr, var_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    # TODO: walk the row in masked chunks of BLOCK; store its mean and variance
    pass
''',
        solution=mean_var, slow=mean_var_two_pass,
        slow_advice="reads the same data more than once",
        make=_make_mean_var, sizes=((30, 1000, 256, 4), (64, 3000, 1024, 8),
                                     (128, 4096, 512, 4)),
        hints=("A configuration is only a choice of BLOCK and num_warps: the kernel must not "
               "assume the row fits in one chunk, nor that N is a multiple of BLOCK.",
               "The kernel is memory-bound (a few FLOPs per 4-byte element, far below the "
               "H200's ridge), so its time is its bytes: read each element once. "
               "var = E[x^2] - mean^2 needs only the running sums of x and x*x, kept as "
               "BLOCK-wide vectors and reduced once after the loop.",
               "s += x\ns2 += x * x\n...\nmean = tl.sum(s, axis=0) / N\n"
               "tl.store(var_ptr + row, tl.sum(s2, axis=0) / N - mean * mean)")),
    Exercise(
        name="matmul_tuned", lesson=7, title="A matmul for an autotuner's configurations",
        task="c = a @ b for fp16 a (M x K) and b (K x N), c in fp32, correct for each "
             "configuration of (BM, BN, BK, num_warps) the check tries (non-square tiles "
             "and tails included).",
        params=("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "BM", "BN", "BK"),
        stub='''@wb.jit
def matmul_tuned(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    # TODO: lesson 6's K loop, written for any BM, BN, BK (never assume they are equal)
    pass
''',
        solution=matmul_tuned, slow=matmul_tuned_fma,
        slow_advice="tl.dot on whole tiles runs on the tensor cores",
        make=_make_matmul, sizes=((40, 24, 50, 32, 32, 32, 4), (64, 96, 128, 64, 32, 16, 4),
                                  (128, 192, 256, 32, 64, 16, 4)),
        hints=("Every tile shape comes from the constexprs; masks use each dimension's own "
               "block size.",
               "A matmul of n x n x n does 2n^3 FLOPs on 3 n^2 elements: its arithmetic "
               "intensity grows with the tile, so it is compute-bound on an H200 and the roof "
               "that binds is the tensor cores' (fp16:dot, about 990 TFLOP/s). Only tl.dot "
               "reaches that roof; the configurations then trade tile size against "
               "occupancy, which is what the autotuner measures.",
               "for k in range(0, K, BK):\n    rk = k + tl.arange(0, BK)\n"
               "    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=..., other=0.0)\n"
               "    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=..., other=0.0)\n"
               "    acc = tl.dot(a, b, acc)")),
    Exercise(
        name="horner", lesson=7, title="A polynomial below the ridge: Horner's rule",
        task=f"out[i] = c[0] + c[1] x[i] + ... + c[D-1] x[i]^(D-1) for i < n (D = {D} fp32 "
             "coefficients in c), one program per BLOCK elements.",
        params=("x_ptr", "c_ptr", "out_ptr", "n", "D", "BLOCK"),
        stub='''@wb.jit
def horner(x_ptr, c_ptr, out_ptr, n, D: tl.constexpr, BLOCK: tl.constexpr):
    # TODO: load a masked block of x, evaluate the polynomial, store it
    pass
''',
        solution=horner, slow=horner_by_terms, slow_advice="the compute roof binds it",
        make=_make_horner, sizes=((1000, 1024), (98_765, 512), (1 << 18, 1024)),
        hints=("Count the FLOPs per element of your kernel and divide by its 8 bytes "
               "(one load, one store): that is its arithmetic intensity.",
               "The H200's fp32 ridge is 67 TFLOP/s / 4.8 TB/s, about 14 FLOP/byte. Term by "
               "term, x^k costs k multiplications: about 150 FLOPs per element, 19 FLOP/byte, "
               "compute-bound. Horner's rule, p = (...(c[D-1] x + c[D-2]) x + ...) + c[0], "
               "does 2 FLOPs per coefficient: 32 per element, 4 FLOP/byte, memory-bound, so "
               "the arithmetic costs nothing.",
               "acc = tl.zeros((BLOCK,), tl.float32)\nfor k in tl.static_range(D):\n"
               "    acc = acc * x + tl.load(c_ptr + (D - 1 - k))")),
)
