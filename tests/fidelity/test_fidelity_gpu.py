"""Fidelity kernels whose shared memory and barriers Triton's way changes (scratch placed by
liveness over dead pipeline buffers, one barrier per exchange) run on the GPU against numpy:
fresh random inputs, outputs poisoned with NaN, 4 and 8 warps. Marked ``gpu``."""
from __future__ import annotations

import numpy as np
import pytest
from fidelity_kernels import (  # noqa: E402
    atomic_max_rows_k,
    attention_k,
    bias_cols_k,
    bias_strided_k,
    col_sum_k,
    copy_strided_k,
    cumsum_cols_k,
    dot_single_k,
    gather_rows_k,
    join_k,
    layernorm_k,
    matmul_bias_relu_k,
    matmul_k,
    matmul_store_t_k,
    row_sum_k,
    scale_rows_k,
    scores_t_k,
    split_k,
    trans_dot_k,
    transpose_k,
    two_dots_k,
)

pytestmark = pytest.mark.gpu
WARPS = [4, 8]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _dev(torch, a):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def _nan(torch, shape, dtype=np.float32):
    return torch.from_numpy(np.full(shape, np.nan, dtype)).cuda()


@pytest.mark.parametrize("warps", WARPS)
def test_reductions_and_scan(torch, warps):
    rng = np.random.default_rng()
    M, N = 64, 128  # two programs of BM=32 rows / BN=64 cols
    x = rng.standard_normal((M, N)).astype(np.float32)
    dx = _dev(torch, x)
    out = _nan(torch, M)
    row_sum_k[(M // 32,)](dx, out, N, BM=32, BN=64, num_warps=warps)
    np.testing.assert_allclose(out.cpu().numpy(), x[:, :64].sum(1), rtol=1e-5, atol=1e-5)
    out = _nan(torch, N)
    col_sum_k[(N // 64,)](dx, out, N, BM=32, BN=64, num_warps=warps)
    np.testing.assert_allclose(out.cpu().numpy(), x[:32].sum(0), rtol=1e-5, atol=1e-5)
    out = _nan(torch, (M, N))
    cumsum_cols_k[(N // 64,)](dx, out, N, BM=32, BN=64, num_warps=warps)
    got = out.cpu().numpy()
    np.testing.assert_allclose(got[:32], np.cumsum(x[:32], 0), rtol=1e-5, atol=1e-4)
    assert np.isnan(got[32:]).all()


@pytest.mark.parametrize("warps", WARPS)
def test_transpose_join_split(torch, warps):
    rng = np.random.default_rng()
    M, N = 128, 64
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = _nan(torch, (N, M))
    transpose_k[(M // 64, N // 64)](_dev(torch, x), out, M, N, BM=64, BN=64, num_warps=warps)
    np.testing.assert_array_equal(out.cpu().numpy(), x.T)
    n = 512
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    j = _nan(torch, (n, 2))
    join_k[(n // 256,)](_dev(torch, a), _dev(torch, b), j, BLOCK=256, num_warps=warps)
    np.testing.assert_array_equal(j.cpu().numpy(), np.stack([a, b], 1))
    sa, sb = _nan(torch, n), _nan(torch, n)
    split_k[(n // 256,)](j, sa, sb, BLOCK=256, num_warps=warps)
    np.testing.assert_array_equal(sa.cpu().numpy(), a)
    np.testing.assert_array_equal(sb.cpu().numpy(), b)


@pytest.mark.parametrize("warps", WARPS)
def test_atomic_max_rows(torch, warps):
    rng = np.random.default_rng()
    M, N = 64, 64
    x = rng.standard_normal((M, N)).astype(np.float32)
    start = rng.standard_normal(M).astype(np.float32)
    out = _dev(torch, start)
    atomic_max_rows_k[(M // 32,)](_dev(torch, x), out, N, BM=32, BN=64, num_warps=warps)
    np.testing.assert_array_equal(out.cpu().numpy(), np.maximum(start, x.max(1)))


@pytest.mark.parametrize("warps", WARPS)
@pytest.mark.parametrize("stages", [2, 3])
def test_matmuls(torch, warps, stages):
    rng = np.random.default_rng()
    M, N, K = 128, 128, 256
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    c = _nan(torch, (M, N), np.float16)
    grid = (M // 64, N // 64)
    matmul_k[grid](_dev(torch, a), _dev(torch, b), c, M, N, K, BM=64, BN=64, BK=32,
                   num_warps=warps, num_stages=stages)
    np.testing.assert_allclose(c.cpu().numpy().astype(np.float32), ref, rtol=1e-2, atol=1e-1)
    bias = rng.standard_normal(N).astype(np.float32)
    c32 = _nan(torch, (M, N))
    matmul_bias_relu_k[grid](_dev(torch, a), _dev(torch, b), _dev(torch, bias), c32, M, N, K,
                             BM=64, BN=64, BK=32, num_warps=warps, num_stages=stages)
    np.testing.assert_allclose(c32.cpu().numpy(), np.maximum(ref + bias, 0), rtol=1e-3,
                               atol=1e-2)


@pytest.mark.parametrize("warps", WARPS)
def test_dot_single_and_attention(torch, warps):
    rng = np.random.default_rng()
    a = rng.standard_normal((32, 32)).astype(np.float32)
    b = rng.standard_normal((32, 32)).astype(np.float32)
    c = _nan(torch, (32, 32))
    dot_single_k[(1,)](_dev(torch, a), _dev(torch, b), c, BM=32, BN=32, BK=32, num_warps=warps)
    np.testing.assert_allclose(c.cpu().numpy(), a @ b, rtol=1e-2, atol=5e-2)  # tf32
    L, D = 256, 64
    q, k, v = (rng.standard_normal((L, D)).astype(np.float16) for _ in range(3))
    o = _nan(torch, (L, D))
    attention_k[(L // 64,)](_dev(torch, q), _dev(torch, k), _dev(torch, v), o, L, BM=64, BN=32,
                            D=64, num_warps=warps)
    s = q.astype(np.float32) @ k.astype(np.float32).T
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v.astype(np.float32)
    np.testing.assert_allclose(o.cpu().numpy(), ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("bm,bn,d", [(64, 32, 64), (64, 16, 64), (64, 64, 64), (64, 32, 128),
                                     (128, 64, 64), (128, 32, 128)])
@pytest.mark.parametrize("warps", WARPS)
def test_attention_on_wgmma(torch, warps, bm, bn, d):
    # on sm_90 both dots are wgmma; with 8 warps and 64 rows the first dot's two warp groups
    # compute the same rows (warpsPerCTA [8, 1]) and the second's split the columns ([4, 2])
    rng = np.random.default_rng()
    L = 4 * bm
    q, k, v = (rng.standard_normal((L, d)).astype(np.float16) for _ in range(3))
    o = _nan(torch, (L, d))
    attention_k[(L // bm,)](_dev(torch, q), _dev(torch, k), _dev(torch, v), o, L, BM=bm, BN=bn,
                            D=d, num_warps=warps)
    s = q.astype(np.float32) @ k.astype(np.float32).T
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v.astype(np.float32)
    np.testing.assert_allclose(o.cpu().numpy(), ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("warps", WARPS)
def test_rematerialised_broadcast_operands(torch, warps):
    # the 1-D operand of each kernel is loaded directly in a slice of the tile's layout
    rng = np.random.default_rng()
    M, N = 64, 64
    x = rng.standard_normal((M, N)).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    s = rng.standard_normal(M).astype(np.float32)
    dx, db, ds = _dev(torch, x), _dev(torch, b), _dev(torch, s)
    kw = dict(BM=32, BN=64, num_warps=warps)
    out = _nan(torch, (M, N))
    bias_cols_k[(M // 32,)](dx, db, out, N, **kw)
    np.testing.assert_array_equal(out.cpu().numpy(), x + b[None, :])
    out = _nan(torch, (M, N))
    scale_rows_k[(M // 32,)](dx, ds, out, N, **kw)
    np.testing.assert_array_equal(out.cpu().numpy(), x * s[:, None])
    out = _nan(torch, (M, N))
    layernorm_k[(M // 32,)](dx, db, out, N, **kw)
    d = x - x.mean(1, keepdims=True)
    want = d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5) * b[None, :]
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-4, atol=1e-5)
    idx = rng.permutation(M).astype(np.int32)
    out = _nan(torch, (M, N))
    gather_rows_k[(M // 32,)](dx, _dev(torch, idx), out, N, **kw)
    np.testing.assert_array_equal(out.cpu().numpy(), x[idx])


@pytest.mark.parametrize("warps", WARPS)
def test_run_time_strides(torch, warps):
    # no contiguity known: the tiles take order [0, 1] as Triton's do
    rng = np.random.default_rng()
    M, N = 64, 64
    big = rng.standard_normal((N, 3 * M)).astype(np.float32)
    x = big[:, ::3].T
    dbig = _dev(torch, big)
    out = _nan(torch, (M, 2 * N))
    copy_strided_k[(M // 32,)](dbig, out, 3, 3 * M, 2 * N, 2, BM=32, BN=64, num_warps=warps)
    got = out.cpu().numpy()
    np.testing.assert_array_equal(got[:, ::2], 2 * x)
    assert np.isnan(got[:, 1::2]).all()
    b = rng.standard_normal(2 * N).astype(np.float32)
    res = _nan(torch, (M, N))
    bias_strided_k[(M // 32,)](dbig, _dev(torch, b), res, 3, 3 * M, 2, BM=32, BN=64,
                               num_warps=warps)
    np.testing.assert_array_equal(res.cpu().numpy(), x + b[::2][None, :])


@pytest.mark.parametrize("warps", WARPS)
def test_trans_of_a_dot_result(torch, warps):
    # the transposed #mma layout (#ttg.linear) reaches the store through one conversion
    rng = np.random.default_rng()
    a = rng.standard_normal((64, 32)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    c = _nan(torch, (64, 64))
    trans_dot_k[(1,)](_dev(torch, a), _dev(torch, b), c, BM=64, BK=32, num_warps=warps)
    want = (a.astype(np.float32) @ b.astype(np.float32)).T
    np.testing.assert_allclose(c.cpu().numpy(), want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("warps", WARPS)
@pytest.mark.parametrize("stages", [2, 3])
def test_matmul_stored_column_major(torch, warps, stages):
    # the accumulator leaves through stmatrix.x4.trans on sm_90 (as Triton 3.6's)
    rng = np.random.default_rng()
    M, N, K = 128, 192, 96
    a = rng.integers(-4, 5, (M, K)).astype(np.float16)   # exact in fp16 and fp32
    b = rng.integers(-4, 5, (K, N)).astype(np.float16)
    c = _nan(torch, (N, M), np.float16)
    matmul_store_t_k[(M // 64, N // 64)](_dev(torch, a), _dev(torch, b), c, M, N, K, BM=64,
                                          BN=64, BK=32, num_warps=warps, num_stages=stages)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(c.cpu().numpy(), want.T)


@pytest.mark.parametrize("arch", ["sm80", "sm90"])
@pytest.mark.parametrize("warps", WARPS)
def test_transposed_operands_read_with_ldmatrix(torch, warps, arch):
    """K^T and X^T staged untransposed and read back into the transposed operand layout (with
    ``ldmatrix.x4`` under sm_80 decisions, as Triton does), summed over three key blocks."""
    rng = np.random.default_rng()
    BM = BN = D = 64
    nblk = 3
    q = rng.standard_normal((BM, D)).astype(np.float16)
    k = rng.standard_normal((nblk * BN, D)).astype(np.float16)
    out = _nan(torch, (BM, BN))
    scores_t_k[(1,)](_dev(torch, q), _dev(torch, k), out, nblk * BN, BM=BM, BN=BN, D=D,
                     num_warps=warps, arch=arch)
    want = sum(q.astype(np.float32) @ k[i * BN:(i + 1) * BN].astype(np.float32).T
               for i in range(nblk))
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-2, atol=1e-2)
    a = rng.standard_normal((BM, D)).astype(np.float16)
    b = rng.standard_normal((BM, BN)).astype(np.float16)
    x = rng.standard_normal((nblk * D, BN)).astype(np.float16)
    out = _nan(torch, BM * BN + BM * D)
    two_dots_k[(1,)](_dev(torch, a), _dev(torch, b), _dev(torch, x), out, nblk * BN, BM=BM,
                     BN=BN, D=D, num_warps=warps, arch=arch)
    xs = [x[i * D:(i + 1) * D].astype(np.float32) for i in range(nblk)]
    got = out.cpu().numpy()
    np.testing.assert_allclose(got[:BM * BN].reshape(BM, BN),
                               sum(a.astype(np.float32) @ xi for xi in xs), rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(got[BM * BN:].reshape(BM, D),
                               sum(b.astype(np.float32) @ xi.T for xi in xs), rtol=1e-2,
                               atol=1e-2)
