"""End-to-end 2-D tile kernels: strides, strided views, broadcasting, reductions, softmax."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def elem_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


@wb.jit
def affine_2d(x_ptr, row_ptr, col_ptr, out_ptr, M, N, sxm, sxn, som, son,
              BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask, other=0.0)
    r = tl.load(row_ptr + rn, mask=rn < N, other=0.0)
    c = tl.load(col_ptr + rm, mask=rm < M, other=0.0)
    y = x * 2.0 + r[None, :] - c[:, None]
    tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, y, mask=mask)


@pytest.mark.parametrize("view", ["contiguous", "every_other_row", "transposed", "reversed"])
def test_2d_strides_views_broadcasting(backend, rng, view):
    M, N = 45, 70
    if view == "contiguous":
        x = rng.standard_normal((M, N)).astype(np.float32)
    elif view == "every_other_row":
        base = rng.standard_normal((2 * M + 1, 3 * N)).astype(np.float32)
        x = base[1::2, ::3]
    elif view == "transposed":
        x = rng.standard_normal((N, M)).astype(np.float32).T
    else:
        x = rng.standard_normal((M, N)).astype(np.float32)[::-1, ::-1]
    before = x.copy()
    row = rng.standard_normal(N).astype(np.float32)
    col = rng.standard_normal(M).astype(np.float32)
    out_base = np.full((M, N + 5), np.nan, np.float32)
    out = out_base[:, :N]
    grid = lambda meta: (wb.cdiv(M, meta["BM"]), wb.cdiv(N, meta["BN"]))  # noqa: E731
    affine_2d[grid](x, row, col, out, M, N, *elem_strides(x), *elem_strides(out), BM=16, BN=32)
    np.testing.assert_array_equal(out, x * np.float32(2.0) + row[None, :] - col[:, None])
    assert np.isnan(out_base[:, N:]).all()
    np.testing.assert_array_equal(x, before)


@wb.jit
def reduce_rows(x_ptr, s_ptr, mx_ptr, mn_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    ptrs = x_ptr + rm[:, None] * stride + rn[None, :]
    x = tl.load(ptrs, mask=mask, other=0.0)
    tl.store(s_ptr + rm, tl.sum(x, axis=1), mask=rm < M)
    tl.store(mx_ptr + rm, tl.max(tl.where(mask, x, float("-inf")), axis=1), mask=rm < M)
    tl.store(mn_ptr + rm, tl.min(tl.where(mask, x, float("inf")), axis=1), mask=rm < M)


@wb.jit
def reduce_cols(x_ptr, s_ptr, mx_ptr, mn_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rm = tl.arange(0, BM)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask, other=0)
    tl.store(s_ptr + rn, tl.sum(x, axis=0), mask=rn < N)
    tl.store(mx_ptr + rn, tl.max(tl.where(mask, x, -1000000), axis=0), mask=rn < N)
    tl.store(mn_ptr + rn, tl.min(tl.where(mask, x, 1000000), axis=0), mask=rn < N)


def test_reduce_over_rows_fp32(backend, rng):
    M, N = 37, 50
    x = rng.standard_normal((M, N)).astype(np.float32)
    s, mx, mn = (np.full(M, np.nan, np.float32) for _ in range(3))
    reduce_rows[(wb.cdiv(M, 8),)](x, s, mx, mn, M, N, N, BM=8, BN=64)
    np.testing.assert_allclose(s, x.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mx, x.max(axis=1))
    np.testing.assert_array_equal(mn, x.min(axis=1))


def test_reduce_over_cols_int32(backend, rng):
    M, N = 29, 70
    base = rng.integers(-1000, 1000, (M, N + 3)).astype(np.int32)
    x = base[:, :N]  # row stride N + 3
    s, mx, mn = (np.full(N, -77, np.int32) for _ in range(3))
    reduce_cols[(wb.cdiv(N, 16),)](x, s, mx, mn, M, N, N + 3, BM=32, BN=16)
    np.testing.assert_array_equal(s, x.sum(axis=0))
    np.testing.assert_array_equal(mx, x.max(axis=0))
    np.testing.assert_array_equal(mn, x.min(axis=0))


@wb.jit
def reduce_1d(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + pid, tl.sum(x, axis=0))
    tl.store(out_ptr + tl.num_programs(0) + pid, tl.max(x, axis=0))


def test_reduce_1d_to_scalar(backend, rng):
    n, block = 1000, 128
    x = rng.uniform(0.0, 1.0, n).astype(np.float32)
    progs = wb.cdiv(n, block)
    out = np.full(2 * progs, np.nan, np.float32)
    reduce_1d[(progs,)](x, out, n, BLOCK=block)
    padded = np.zeros(progs * block, np.float32)
    padded[:n] = x
    chunks = padded.reshape(progs, block)
    np.testing.assert_allclose(out[:progs], chunks.sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(out[progs:], chunks.max(axis=1))


@wb.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


@pytest.mark.parametrize("rows, cols", [(37, 781), (4, 1000), (9, 3)])
def test_softmax_non_power_of_two_columns(backend, rng, rows, cols):
    x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
    out = np.full((rows, cols), np.nan, np.float32)
    softmax_kernel[(rows,)](out, x, x.strides[0] // 4, out.strides[0] // 4, cols,
                            BLOCK=wb.next_power_of_2(cols))
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
