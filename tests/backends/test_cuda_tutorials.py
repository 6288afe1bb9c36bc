"""The tutorial kernels of tests/kernels/test_tutorials.py on an NVIDIA GPU, against numpy
(fresh random inputs, NaN-poisoned outputs, every element checked): vector add, fused softmax,
matmul (fp32 and fp16, masked edges, grouped ordering, leaky ReLU, a strided B), low-memory
dropout (Philox, bit-exact mask), layer norm forward and backward, fused attention forward
(causal and not), histogram with atomics, cumulative sum. Marked ``gpu``: skipped cleanly
without a usable CUDA device (tests/conftest.py)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import workbench as wb

pytestmark = pytest.mark.gpu

_TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_TESTS / "language"))
from philox_ref import triton_randint4x, uniform  # noqa: E402

_spec = importlib.util.spec_from_file_location("tutorial_kernels",
                                               _TESTS / "kernels" / "test_tutorials.py")
tut = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tut)


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(np.ascontiguousarray(a))


def host(d):
    from workbench.backends import cuda_driver
    cuda_driver.synchronize()
    return d.to_numpy()


def test_vector_add(rng):
    n = 98_432
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = dev(np.full(n, np.nan, np.float32))
    tut.add_kernel[lambda meta: (wb.cdiv(n, meta["BLOCK_SIZE"]),)](dev(x), dev(y), out, n,
                                                                    BLOCK_SIZE=1024)
    np.testing.assert_array_equal(host(out), x + y)


def test_fused_softmax(rng):
    m, n = 37, 781
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = dev(np.full((m, n), np.nan, np.float32))
    tut.softmax_kernel[(8,)](out, dev(x), n, n, m, n, BLOCK_SIZE=wb.next_power_of_2(n))
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(host(out), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def matmul(a, b_dev, b_strides, k_n, activation="", out_dtype=None):
    m, k = a.shape
    _, n = k_n
    c = dev(np.full((m, n), np.nan, out_dtype or a.dtype))
    grid = lambda meta: (wb.cdiv(m, meta["BLOCK_SIZE_M"]) *  # noqa: E731
                         wb.cdiv(n, meta["BLOCK_SIZE_N"]),)
    tut.matmul_kernel[grid](dev(a), b_dev, c, m, n, k, k, 1, b_strides[0], b_strides[1], n, 1,
                            BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16, GROUP_SIZE_M=2,
                            ACTIVATION=activation, PRECISION="ieee")
    return host(c)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_matmul(rng, dtype):
    m, n, k = 70, 45, 52  # every edge masked
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = matmul(a, dev(b), (n, 1), (k, n), "leaky_relu")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    ref = np.where(ref >= 0, ref, 0.01 * ref)
    tol = 1e-4 if dtype == np.float32 else 2e-2
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=tol, atol=tol)


def test_matmul_transposed_b_view(rng):
    a = rng.standard_normal((33, 40)).astype(np.float32)
    bt = rng.standard_normal((50, 40)).astype(np.float32)
    c = matmul(a, dev(bt), (1, 40), (40, 50))  # B = bt.T through strides (stride_bk = 1)
    np.testing.assert_allclose(c, a @ bt.T, rtol=1e-4, atol=1e-4)


def test_low_memory_dropout(rng):
    n, p, seed = 3000, 0.3, 123
    x = rng.standard_normal(n).astype(np.float32)
    outs = []
    for _ in range(2):  # the same seed gives the same mask
        out = dev(np.full(n, np.nan, np.float32))
        tut.seeded_dropout_kernel[(wb.cdiv(n, 1024),)](dev(x), out, n, p, seed,
                                                       BLOCK_SIZE=1024)
        outs.append(host(out))
    np.testing.assert_array_equal(outs[0], outs[1])
    keep = uniform(triton_randint4x(seed, np.arange(n, dtype=np.int32))[0]) > np.float32(p)
    np.testing.assert_array_equal(outs[0] != 0, keep & (x != 0))
    np.testing.assert_allclose(outs[0], np.where(keep, x / np.float32(1 - p), 0), rtol=1e-6)


def test_layer_norm_forward_and_backward(rng):
    m, n, eps = 13, 100, 1e-5
    x = rng.standard_normal((m, n)).astype(np.float32)
    w, b = rng.random(n).astype(np.float32), rng.random(n).astype(np.float32)
    dy = rng.standard_normal((m, n)).astype(np.float32)
    dx_, dw_, db_, ddy = dev(x), dev(w), dev(b), dev(dy)
    y = dev(np.full((m, n), np.nan, np.float32))
    mean, rstd = dev(np.full(m, np.nan, np.float32)), dev(np.full(m, np.nan, np.float32))
    tut.layer_norm_fwd[(m,)](dx_, y, dw_, db_, mean, rstd, n, n, eps, BLOCK_SIZE=32)
    mu = x.mean(1, keepdims=True)
    rs = 1 / np.sqrt(x.var(1, keepdims=True) + eps)
    np.testing.assert_allclose(host(mean), mu[:, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(host(rstd), rs[:, 0], rtol=1e-5)
    np.testing.assert_allclose(host(y), (x - mu) * rs * w + b, rtol=1e-5, atol=1e-5)

    dx = dev(np.full((m, n), np.nan, np.float32))
    dw_part, db_part = dev(np.zeros((m, n), np.float32)), dev(np.zeros((m, n), np.float32))
    tut.layer_norm_bwd_dx[(m,)](dx, ddy, dw_part, db_part, dx_, dw_, mean, rstd, n, n,
                                BLOCK_SIZE_N=128)
    dw, db = dev(np.full(n, np.nan, np.float32)), dev(np.full(n, np.nan, np.float32))
    tut.layer_norm_bwd_dwdb[(wb.cdiv(n, 32),)](dw_part, db_part, dw, db, m, n, BLOCK_SIZE_M=8,
                                               BLOCK_SIZE_N=32)
    xhat = (x - mu) * rs
    g = dy * w
    dx_ref = rs * (g - g.mean(1, keepdims=True) - xhat * (g * xhat).mean(1, keepdims=True))
    np.testing.assert_allclose(host(dx), dx_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(host(dw), (dy * xhat).sum(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(host(db), dy.sum(0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_forward(rng, causal):
    z_h, n_ctx, d = 2, 64, 16
    q, k, v = (rng.standard_normal((z_h, n_ctx, d)).astype(np.float32) for _ in range(3))
    out = dev(np.full_like(q, np.nan))
    scale = 0.5
    tut.attn_fwd[(n_ctx // 16, z_h)](dev(q), dev(k), dev(v), out, scale, n_ctx, HEAD_DIM=d,
                                     BLOCK_M=16, BLOCK_N=16, CAUSAL=causal)
    s = np.einsum("hmd,hnd->hmn", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones((n_ctx, n_ctx), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = np.einsum("hmn,hnd->hmd", p / p.sum(-1, keepdims=True), v)
    np.testing.assert_allclose(host(out), ref, rtol=1e-4, atol=1e-5)


def test_histogram_with_atomics(rng):
    n, bins = 5000, 16
    x = rng.integers(-3, bins + 3, n).astype(np.int32)
    hist = dev(np.zeros(bins, np.int32))
    tut.histogram_kernel[(wb.cdiv(n, 512),)](dev(x), hist, n, NUM_BINS=bins, BLOCK=512)
    np.testing.assert_array_equal(host(hist),
                                  np.bincount(np.clip(x, 0, bins - 1), minlength=bins))


def test_cumulative_sum(rng):
    m, n = 5, 300
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = dev(np.full((m, n), np.nan, np.float32))
    tut.cumsum_rows[(m,)](dev(x), out, n, n, BLOCK=64)
    np.testing.assert_allclose(host(out), np.cumsum(x, axis=1), rtol=1e-4, atol=1e-4)
