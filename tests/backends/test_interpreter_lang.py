"""Kernels written in the language (workbench.language), compiled for target="interpreter"
and checked against numpy with fresh random inputs and poisoned outputs."""
from __future__ import annotations

import inspect
import time

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.interpreter import DeviceAssertionError
from workbench.errors import OutOfBoundsError


@pytest.fixture(autouse=True)
def _interpret(monkeypatch):
    """kernel[grid](...) launches run on the interpreter in this module."""
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")


def nan_like(shape, dtype=np.float32):
    return np.full(shape, np.nan, dtype)


@wb.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def test_vector_add_language_and_speed():
    rng = np.random.default_rng()
    n = (1 << 20) - int(rng.integers(1, 1000))
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    out = nan_like(n)
    k = wb.compile(add_kernel, x, y, out, n, BLOCK=1024, target="interpreter")
    grid = (triton_cdiv(n, 1024),)
    k[grid](x, y, out, n)  # warm
    out[:] = np.nan
    t0 = time.perf_counter()
    k[grid](x, y, out, n)
    dt = time.perf_counter() - t0
    np.testing.assert_array_equal(out, x + y)
    assert dt < 0.5, f"1M-element vector add took {dt:.3f} s on the interpreter"


def triton_cdiv(a, b):
    return (a + b - 1) // b


@wb.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + cols, num / den, mask=mask)


def test_softmax_language_strided_rows():
    rng = np.random.default_rng()
    rows, cols = int(rng.integers(50, 90)), int(rng.integers(200, 500))
    big = (rng.standard_normal((rows, cols + 13)) * 4).astype(np.float32)
    x = big[:, 5:5 + cols]
    out = nan_like((rows, cols))
    k = wb.compile(softmax_kernel, out, x, x.strides[0] // 4, out.strides[0] // 4, cols,
                   BLOCK=512, target="interpreter")
    k[(rows,)](out, x, x.strides[0] // 4, out.strides[0] // 4, cols)
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=2e-6, atol=1e-8)


@wb.jit
def outer_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + rm * K + k, mask=rm < M, other=0.0)
        b = tl.load(b_ptr + k * N + rn, mask=rn < N, other=0.0)
        acc += a[:, None] * b[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=mask)


def test_matmul_by_outer_products_with_k_loop_2d_grid():
    rng = np.random.default_rng()
    M, N, K = (int(v) for v in rng.integers(20, 60, 3))
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = nan_like((M, N))
    outer_matmul[(triton_cdiv(M, 16), triton_cdiv(N, 32))](a, b, c, M, N, K, BM=16, BN=32)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@wb.jit
def int_ops(x_ptr, y_ptr, q_ptr, r_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(q_ptr + offs, x // y)
    tl.store(r_ptr + offs, x % y)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8])
def test_integer_division_language(dtype):
    rng = np.random.default_rng()
    info = np.iinfo(dtype)
    x = rng.integers(max(info.min, -1000), min(info.max, 1000), 64).astype(dtype)
    y = rng.integers(1, 50, 64).astype(dtype)
    if info.min < 0:
        y[::2] = -y[::2]
    q, r = np.zeros(64, dtype), np.zeros(64, dtype)
    int_ops[(1,)](x, y, q, r, BLOCK=64, )
    xi, yi = x.astype(np.int64), y.astype(np.int64)
    qt = np.trunc(xi / yi).astype(np.int64)
    np.testing.assert_array_equal(q, qt.astype(dtype))
    np.testing.assert_array_equal(r, (xi - qt * yi).astype(dtype))


@wb.jit
def cast_kernel(x_ptr, h_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    h = x.to(tl.float16)
    tl.store(h_ptr + offs, h * 2.0)
    tl.store(b_ptr + offs, x.to(tl.bfloat16).to(tl.float32))


def test_fp16_and_bf16_casts_language():
    rng = np.random.default_rng()
    x = (rng.standard_normal(128) * 1000).astype(np.float32)
    h = np.zeros(128, np.float16)
    b = nan_like(128)
    cast_kernel[(1,)](x, h, b, BLOCK=128)
    np.testing.assert_array_equal(h, x.astype(np.float16) * np.float16(2))
    bits = x.view(np.uint32)
    rne = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(b, rne)


@wb.jit
def grid3(o_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    lin = (z * tl.num_programs(1) + y) * tl.num_programs(0) + x
    tl.store(o_ptr + lin, x * 100 + y * 10 + z)


def test_3d_grid_language():
    out = np.full(2 * 3 * 4, -1, np.int32)
    grid3[(4, 3, 2)](out)
    z, y, x = np.meshgrid(range(2), range(3), range(4), indexing="ij")
    np.testing.assert_array_equal(out, (x * 100 + y * 10 + z).ravel())


@wb.jit
def reduce_axes(x_ptr, r0_ptr, r1_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(r0_ptr + rn, tl.max(x, axis=0))
    tl.store(r1_ptr + rm, tl.sum(x, axis=1))


def test_reductions_both_axes_language():
    rng = np.random.default_rng()
    x = rng.standard_normal((16, 64)).astype(np.float32)
    r0, r1 = nan_like(64), nan_like(16)
    reduce_axes[(1,)](x, r0, r1, M=16, N=64)
    np.testing.assert_array_equal(r0, x.max(0))
    # fp32 sums of 64 terms in another order: error bound ~ n * eps * sum|x| per row
    bound = 64 * np.finfo(np.float32).eps * np.abs(x).sum(1)
    assert (np.abs(r1 - x.astype(np.float64).sum(1)) <= bound).all()


@wb.jit
def oob_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def test_out_of_bounds_language_points_at_the_user_line():
    x = np.zeros(100, np.float32)
    out = np.zeros(256, np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        oob_kernel[(2,)](x, out, BLOCK=64)
    lines, first = inspect.getsourcelines(oob_kernel.fn)
    line = first + next(i for i, s in enumerate(lines) if "tl.load" in s)
    e = ei.value
    assert e.program_id == (1, 0, 0) and e.loc.line == line
    assert e.offsets == list(range(100, 128)) and "x_ptr" in str(e)
    assert "tl.store(out_ptr + offs, tl.load(x_ptr + offs))" in str(e)


@wb.jit
def print_kernel(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.device_print("x=", x)


def test_device_print_language(capsys):
    x = np.random.default_rng().integers(0, 9, 4).astype(np.int32)
    print_kernel[(2,)](x)
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 2
    assert out[0].startswith("pid (0, 0, 0)") and out[1].startswith("pid (1, 0, 0)")
    assert all(np.array2string(x) in line for line in out)


@wb.jit
def assert_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x >= 0, "x must be non-negative")


def test_device_assert_language_with_debug():
    x = np.arange(64, dtype=np.int32)
    x[40] = -5
    k = wb.compile(assert_kernel, x, BLOCK=16, target="interpreter", debug=True)
    with pytest.raises(DeviceAssertionError) as ei:
        k[(4,)](x)
    assert ei.value.program_id == (2, 0, 0)
    assert "x must be non-negative" in str(ei.value)
