"""Triton-tutorial-equivalent kernels, written for this project, correct against numpy on the
interpreter and the CPU backend: vector add, fused softmax, matmul (K loop, masked edges,
grouped program ordering, fused activation; fp32 and fp16), low-memory dropout with Philox,
layer norm forward and backward, fused attention forward, histogram with atomics, cumsum.
Every kernel launched on the CPU also compiles to PTX for sm_80 and sm_90 and assembles
(tests/kernels/conftest.py); tests/backends/test_cuda_tutorials.py runs them on a GPU."""
import sys
from pathlib import Path

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import UnsupportedError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "language"))
from philox_ref import triton_randint4x, uniform  # noqa: E402


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def launch(backend, kernel, grid, *args, **kwargs):
    """Launch; on the CPU backend an op it cannot lower yet makes the test xfail."""
    try:
        return kernel[grid](*args, **kwargs)
    except UnsupportedError as e:
        if backend == "cpu" and "CPU backend" in str(e):
            pytest.xfail(f"CPU backend: {str(e).splitlines()[0]}")
        raise


# 01 vector add --------------------------------------------------------------------------------
@wb.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def test_vector_add(backend, rng):
    n = 98_432
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    launch(backend, add_kernel, lambda meta: (wb.cdiv(n, meta["BLOCK_SIZE"]),), x, y, out, n,
           BLOCK_SIZE=1024)
    np.testing.assert_array_equal(out, x + y)


# 02 fused softmax -----------------------------------------------------------------------------
@wb.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=2):
        row_ptr = in_ptr + row_idx * in_row_stride
        col = tl.arange(0, BLOCK_SIZE)
        row = tl.load(row_ptr + col, mask=col < n_cols, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        tl.store(out_ptr + row_idx * out_row_stride + col, numerator / denominator,
                 mask=col < n_cols)


def test_fused_softmax(backend, rng):
    m, n = 37, 781
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = np.full((m, n), np.nan, np.float32)
    launch(backend, softmax_kernel, (8,), out, x, n, n, m, n,
           BLOCK_SIZE=wb.next_power_of_2(n))
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


# 03 matmul ------------------------------------------------------------------------------------
@wb.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@wb.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                  ACTIVATION: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator, input_precision=PRECISION)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(c_ptr.dtype.element_ty)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(backend, a, b, activation="", precision="ieee", out_dtype=None):
    m, k = a.shape
    _, n = b.shape
    c = np.full((m, n), np.nan, out_dtype or a.dtype)
    grid = lambda meta: (wb.cdiv(m, meta["BLOCK_SIZE_M"]) *  # noqa: E731
                         wb.cdiv(n, meta["BLOCK_SIZE_N"]),)
    launch(backend, matmul_kernel, grid, a, b, c, m, n, k, a.strides[0] // a.itemsize,
           a.strides[1] // a.itemsize, b.strides[0] // b.itemsize, b.strides[1] // b.itemsize,
           c.strides[0] // c.itemsize, c.strides[1] // c.itemsize, BLOCK_SIZE_M=32,
           BLOCK_SIZE_N=32, BLOCK_SIZE_K=16, GROUP_SIZE_M=2, ACTIVATION=activation,
           PRECISION=precision)
    return c


@pytest.mark.parametrize("dtype,activation", [(np.float32, "leaky_relu"),
                                              (np.float16, "leaky_relu")])
def test_matmul(backend, rng, dtype, activation):
    m, n, k = 70, 45, 52  # every edge masked
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = matmul(backend, a, b, activation)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if activation:
        ref = np.where(ref >= 0, ref, 0.01 * ref)
    tol = 1e-4 if dtype == np.float32 else 2e-2
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=tol, atol=tol)


def test_matmul_transposed_b_view(backend, rng):
    a = rng.standard_normal((33, 40)).astype(np.float32)
    bt = rng.standard_normal((50, 40)).astype(np.float32)
    c = matmul(backend, a, bt.T)  # strided view: stride_bk = 1
    np.testing.assert_allclose(c, a @ bt.T, rtol=1e-4, atol=1e-4)


# 04 low-memory dropout ------------------------------------------------------------------------
@wb.jit
def seeded_dropout_kernel(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


def test_low_memory_dropout(backend, rng):
    n, p, seed = 3000, 0.3, 123
    x = rng.standard_normal(n).astype(np.float32)
    outs = []
    for _ in range(2):  # the same seed gives the same mask
        out = np.full(n, np.nan, np.float32)
        launch(backend, seeded_dropout_kernel, (wb.cdiv(n, 1024),), x, out, n, p, seed,
               BLOCK_SIZE=1024)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
    keep = uniform(triton_randint4x(seed, np.arange(n, dtype=np.int32))[0]) > np.float32(p)
    np.testing.assert_allclose(outs[0], np.where(keep, x / np.float32(1 - p), 0), rtol=1e-6)
    assert 0.25 < 1 - keep.mean() < 0.35


# 05 layer norm --------------------------------------------------------------------------------
@wb.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@wb.jit
def layer_norm_bwd_dx(DX, DY, DW_part, DB_part, X, W, Mean, Rstd, stride, N,
                      BLOCK_SIZE_N: tl.constexpr):
    # one row per program; the row's dW/dB contributions go to row `row` of the partial
    # buffers (the tutorial accumulates them under an atomic_cas lock instead: that form is
    # in test_tutorials_layer_norm.py)
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    tl.store(DW_part + row * N + cols, dy * xhat, mask=mask)
    tl.store(DB_part + row * N + cols, dy, mask=mask)


@wb.jit
def layer_norm_bwd_dwdb(DW_part, DB_part, FINAL_DW, FINAL_DB, M, N,
                        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW_part + offs, mask=mask, other=0.)
        db += tl.load(DB_part + offs, mask=mask, other=0.)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


def test_layer_norm_forward_and_backward(backend, rng):
    m, n, eps = 13, 100, 1e-5
    x = rng.standard_normal((m, n)).astype(np.float32)
    w, b = rng.random(n).astype(np.float32), rng.random(n).astype(np.float32)
    dy = rng.standard_normal((m, n)).astype(np.float32)
    y = np.full((m, n), np.nan, np.float32)
    mean, rstd = np.zeros(m, np.float32), np.zeros(m, np.float32)
    launch(backend, layer_norm_fwd, (m,), x, y, w, b, mean, rstd, n, n, eps, BLOCK_SIZE=32)
    mu = x.mean(1, keepdims=True)
    rs = 1 / np.sqrt(x.var(1, keepdims=True) + eps)
    np.testing.assert_allclose(mean, mu[:, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, rs[:, 0], rtol=1e-5)
    np.testing.assert_allclose(y, (x - mu) * rs * w + b, rtol=1e-5, atol=1e-5)

    dx = np.full((m, n), np.nan, np.float32)
    dw_part, db_part = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    launch(backend, layer_norm_bwd_dx, (m,), dx, dy, dw_part, db_part, x, w, mean, rstd, n, n,
           BLOCK_SIZE_N=128)
    dw, db = np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)
    launch(backend, layer_norm_bwd_dwdb, (wb.cdiv(n, 32),), dw_part, db_part, dw, db, m, n,
           BLOCK_SIZE_M=8, BLOCK_SIZE_N=32)
    xhat = (x - mu) * rs  # analytic gradients of y = xhat * w + b
    g = dy * w
    dx_ref = rs * (g - g.mean(1, keepdims=True) - xhat * (g * xhat).mean(1, keepdims=True))
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dw, (dy * xhat).sum(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(db, dy.sum(0), rtol=1e-4, atol=1e-5)


# 06 fused attention ---------------------------------------------------------------------------
@wb.jit
def attn_fwd(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # exp(x) = exp2(x * log2(e))
    hi = (start_m + 1) * BLOCK_M if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + base + cols[None, :] * HEAD_DIM + offs_d[:, None])  # K^T tile
        qk = tl.dot(q, k, input_precision="ieee") * qk_scale
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= cols[None, :], qk, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + cols[:, None] * HEAD_DIM + offs_d[None, :])
        acc = tl.dot(p, v, acc, input_precision="ieee")
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc)


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_forward(backend, rng, causal):
    z_h, n_ctx, d = 2, 64, 16
    q, k, v = (rng.standard_normal((z_h, n_ctx, d)).astype(np.float32) for _ in range(3))
    out = np.full_like(q, np.nan)
    scale = 0.5
    launch(backend, attn_fwd, (n_ctx // 16, z_h), q, k, v, out, scale, n_ctx, HEAD_DIM=d,
           BLOCK_M=16, BLOCK_N=16, CAUSAL=causal)
    s = np.einsum("hmd,hnd->hmn", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones((n_ctx, n_ctx), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = np.einsum("hmn,hnd->hmd", p / p.sum(-1, keepdims=True), v)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


# histogram with atomics -----------------------------------------------------------------------
@wb.jit
def histogram_kernel(x_ptr, hist_ptr, n, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    bins = tl.minimum(tl.maximum(x, 0), NUM_BINS - 1)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)


def test_histogram_with_atomics(backend, rng):
    n, bins = 5000, 16
    x = rng.integers(-3, bins + 3, n).astype(np.int32)
    hist = np.zeros(bins, np.int32)
    launch(backend, histogram_kernel, (wb.cdiv(n, 512),), x, hist, n, NUM_BINS=bins,
           BLOCK=512)
    np.testing.assert_array_equal(hist, np.bincount(np.clip(x, 0, bins - 1), minlength=bins))


# cumulative sum -------------------------------------------------------------------------------
@wb.jit
def cumsum_rows(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    carry = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        c = tl.cumsum(x, axis=0) + carry
        tl.store(out_ptr + row * stride + cols, c, mask=cols < n_cols)
        carry += tl.sum(x, axis=0)


def test_cumulative_sum(backend, rng):
    m, n = 5, 300
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = np.full((m, n), np.nan, np.float32)
    launch(backend, cumsum_rows, (m,), x, out, n, n, BLOCK=64)
    np.testing.assert_allclose(out, np.cumsum(x, axis=1), rtol=1e-4, atol=1e-4)
