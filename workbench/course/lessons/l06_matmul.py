"""Lesson 6, matmul: a K loop, tl.dot and the
tensor cores, fp16 inputs with an fp32 accumulator, and a torch-style linear layer.

Every kernel computes a BM x BN tile of the output per program over a 2-D grid, walking K in
steps of BK with masked loads (other=0.0 so the tail adds nothing). The slow solutions are
right but multiply with scalar FMAs, no tensor cores (one outer product per k; or a broadcast
product of converted tiles summed over K), or convert fp16 tiles to fp32 before ``tl.dot``
(tf32 tensor cores, half of fp16's rate on an H200). The plain fp32 broadcast-and-sum,
``tl.sum(a[:, :, None] * b[None, :, :], axis=1)`` with tiles of 16 or more, is not among them:
Triton 3.6's ``triton-combine`` pass (ours too) turns it into ``tl.dot``.
"""
from __future__ import annotations

import numpy as np

from ... import language as tl
from ...runtime.jit import jit
from ..exercise import Case, Exercise

BM, BN, BK = 32, 32, 32
SIZES = ((40, 24, 50), (64, 96, 128), (256, 256, 512))


@jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
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
def matmul_outer(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                 BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + rm * K + k, mask=rm < M, other=0.0)
        b = tl.load(b_ptr + k * N + rn, mask=rn < N, other=0.0)
        acc += a[:, None] * b[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@jit
def matmul_fp16(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
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
def matmul_fp16_upcast(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
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
        acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@jit
def linear(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
           BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        wt = tl.load(w_ptr + rn[None, :] * K + rk[:, None],
                     mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, wt, acc)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@jit
def linear_broadcast(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        wt = tl.load(w_ptr + rn[None, :] * K + rk[:, None],
                     mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.sum(x[:, :, None].to(tl.float32) * wt[None, :, :].to(tl.float32), axis=1)
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _grid(m: int, n: int) -> tuple:
    return (-(-m // BM), -(-n // BN))


def _program_of(n: int):
    def program(i: int) -> tuple:
        return (i // n // BM, i % n // BN)
    return program


def _label(m: int, n: int, k: int) -> str:
    tails = [f"{w}={v}" for w, v, b in (("M", m, BM), ("N", n, BN), ("K", k, BK)) if v % b]
    return f"M={m}, N={n}, K={k}" + (f" (tails: {', '.join(tails)})" if tails else "")


def _make(dtype, rtol, atol):
    """Cases of a matmul of ``dtype`` inputs; the absolute tolerance grows as sqrt(K) (the
    rounding errors of K products of random sign add up like a random walk; fp32 inputs run as
    tf32, 10 mantissa bits)."""
    def make(rng, size) -> Case:
        m, n, k = size
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        c = np.full((m, n), np.nan, np.float32)
        want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
        return Case(_label(m, n, k), (a, b, c, m, n, k), {"BM": BM, "BN": BN, "BK": BK},
                    _grid(m, n), {2: want}, rtol=rtol, atol=atol * np.sqrt(k),
                    program_of=_program_of(n))
    return make


def _make_linear(rng, size) -> Case:
    m, n, k = size
    x = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.standard_normal((n, k)).astype(np.float16)
    b = rng.standard_normal(n).astype(np.float32)
    y = np.full((m, n), np.nan, np.float32)
    want = (x.astype(np.float64) @ w.astype(np.float64).T + b).astype(np.float32)
    return Case(_label(m, n, k), (x, w, b, y, m, n, k), {"BM": BM, "BN": BN, "BK": BK},
                _grid(m, n), {3: want}, rtol=1e-2, atol=1e-3 * np.sqrt(k),
                program_of=_program_of(n))


TENSOR_CORES = "tl.dot on whole tiles runs on the tensor cores"
PARAMS = ("M", "N", "K", "BM", "BN", "BK")
K_LOOP = ("rm = tl.program_id(0) * BM + tl.arange(0, BM)\n"
          "rn = tl.program_id(1) * BN + tl.arange(0, BN)\nacc = tl.zeros((BM, BN), tl.float32)\n"
          "for k in range(0, K, BK):\n    rk = k + tl.arange(0, BK)\n")
STUB = '''@wb.jit
def {name}({args}, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # TODO: {todo}
    pass
'''

EXERCISES = (
    Exercise(
        name="matmul", lesson=6, title="Matmul with a K loop and tl.dot",
        task="c = a @ b for row-major fp32 a (M x K) and b (K x N); program (pid_m, pid_n) "
             "computes a BM x BN tile of c, walking K in steps of BK.",
        params=("a_ptr", "b_ptr", "c_ptr") + PARAMS,
        stub=STUB.format(name="matmul", args="a_ptr, b_ptr, c_ptr",
                         todo="an fp32 accumulator tile, a loop over K loading a BM x BK tile "
                              "of a and a BK x BN tile of b (masked, other=0.0), tl.dot"),
        solution=matmul, slow=matmul_outer, slow_advice=TENSOR_CORES,
        make=_make(np.float32, 1e-2, 3e-3), sizes=SIZES,
        hints=("Keep a BM x BN accumulator in registers and add one BK-wide slab of the "
               "product per loop iteration.",
               "`tl.dot(a, b, acc)` multiplies a (BM, BK) tile by a (BK, BN) tile and adds "
               "acc; masked loads with `other=0.0` make the K tail add nothing. (fp32 inputs "
               "run as tf32 on the tensor cores, hence the check's looser tolerance.)",
               K_LOOP + "    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=..., "
               "other=0.0)\n    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=..., "
               "other=0.0)\n    acc = tl.dot(a, b, acc)")),
    Exercise(
        name="matmul_fp16", lesson=6, title="fp16 inputs, an fp32 accumulator",
        task="c = a @ b for fp16 a (M x K) and b (K x N), c in fp32.",
        params=("a_ptr", "b_ptr", "c_ptr") + PARAMS,
        stub=STUB.format(name="matmul_fp16", args="a_ptr, b_ptr, c_ptr",
                         todo="as matmul; the loaded tiles are fp16, the accumulator fp32"),
        solution=matmul_fp16, slow=matmul_fp16_upcast,
        slow_advice="your tl.dot multiplies f32 tiles where the data is f16",
        make=_make(np.float16, 1e-2, 1e-3), sizes=SIZES,
        hints=("tl.dot takes fp16 tiles as they are loaded.",
               "With fp16 operands and an fp32 `acc`, tl.dot accumulates in fp32 on the "
               "fp16 tensor cores; nothing needs converting.",
               K_LOOP + "    acc = tl.dot(a, b, acc)     # a, b: the fp16 tiles as loaded")),
    Exercise(
        name="linear", lesson=6, title="A linear layer: y = x @ w.T + b",
        task="y = x @ w.T + b with x (M x K) and w (N x K) in fp16 (w stored as torch's "
             "Linear stores it), b (N) and y (M x N) in fp32.",
        params=("x_ptr", "w_ptr", "b_ptr", "y_ptr") + PARAMS,
        stub=STUB.format(name="linear", args="x_ptr, w_ptr, b_ptr, y_ptr",
                         todo="load w's tile already transposed (BK x BN) through its "
                              "pointers, tl.dot, then add the bias row before the store"),
        solution=linear, slow=linear_broadcast, slow_advice=TENSOR_CORES,
        make=_make_linear, sizes=SIZES,
        hints=("w.T's (k, n) element is w's (n, k): build the tile of pointers that way "
               "round.",
               "`w_ptr + rn[None, :] * K + rk[:, None]` is a (BK, BN) tile of pointers into w "
               "(no copy, no tl.trans); the bias is one row added after the loop.",
               K_LOOP + "    wt = tl.load(w_ptr + rn[None, :] * K + rk[:, None], mask=..., "
               "other=0.0)\n    acc = tl.dot(x, wt, acc)\n"
               "acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0)[None, :]")),
)
