"""CPU backend end to end: kernels in the language (while, atomics, scans, dot, print/assert,
join/split, clamp, umulhi, rounding casts) compiled by the frontend and run on the CPU target,
compared with numpy on fresh random inputs and poisoned outputs."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.interpreter import DeviceAssertionError

rng = np.random.default_rng()


@wb.jit
def collatz(x_ptr, out_ptr):
    pid = tl.program_id(0)
    n = tl.load(x_ptr + pid)
    steps = 0
    while n > 1:
        if n % 2 == 1:
            n = 3 * n + 1
        else:
            n = n // 2
        steps += 1
    tl.store(out_ptr + pid, steps)


def test_while_loop():
    x = rng.integers(1, 500, 50).astype(np.int32)
    out = np.full(50, -1, np.int32)
    collatz[(50,)](x, out)

    def ref(n):
        s = 0
        while n > 1:
            n = 3 * n + 1 if n % 2 else n // 2
            s += 1
        return s
    np.testing.assert_array_equal(out, [ref(int(v)) for v in x])


@wb.jit
def histogram(x_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    b = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(h_ptr + b, 1, mask=mask)


@wb.jit
def global_max(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
    tl.atomic_max(out_ptr, tl.max(x, axis=0))
    tl.atomic_min(out_ptr + 1, tl.min(tl.where(offs < n, x, float("inf")), axis=0))


def test_histogram_and_float_atomic_max_min_many_programs():
    n = 100_000
    x = rng.integers(0, 50, n).astype(np.int32)
    h = np.zeros(50, np.int32)
    histogram[(triton_cdiv(n, 256),)](x, h, n, BLOCK=256)
    np.testing.assert_array_equal(h, np.bincount(x, minlength=50))
    for shift in (-10.0, 0.0, 10.0):  # all negative, mixed, all positive
        f = (rng.standard_normal(n) + shift).astype(np.float32)
        out = np.array([-np.inf, np.inf], np.float32)
        global_max[(triton_cdiv(n, 512),)](f, out, n, BLOCK=512)
        assert out[0] == f.max() and out[1] == f.min()


def triton_cdiv(a, b):
    return (a + b - 1) // b


@wb.jit
def add_pair(a, b):
    return a + b


@wb.jit
def scans(x_ptr, s_ptr, p_ptr, r_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(s_ptr + offs, tl.cumsum(x, axis=1))
    tl.store(p_ptr + offs, tl.cumprod(x, axis=0))
    tl.store(r_ptr + offs, tl.associative_scan(x, 1, add_pair, reverse=True))


def test_cumsum_cumprod_associative_scan():
    M, N = 8, 32
    x = rng.integers(-3, 4, (M, N)).astype(np.int32)
    s, p, r = (np.full((M, N), -99, np.int32) for _ in range(3))
    scans[(1,)](x, s, p, r, M=M, N=N)
    np.testing.assert_array_equal(s, np.cumsum(x, 1))
    np.testing.assert_array_equal(p, np.cumprod(x, 0))
    np.testing.assert_array_equal(r, np.cumsum(x[:, ::-1], 1)[:, ::-1])


@wb.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
           BK: tl.constexpr, PREC: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PREC)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("dtype,prec", [(np.float32, "ieee"), (np.float32, "tf32"),
                                        (np.float16, "tf32")])
def test_matmul_with_k_loop_and_masked_edges(dtype, prec):
    M, N, K = 70, 50, 90
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = np.full((M, N), np.nan, np.float32)
    matmul[(triton_cdiv(M, 32), triton_cdiv(N, 32))](a, b, c, M, N, K, BM=32, BN=32, BK=32,
                                                      PREC=prec)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # error bound of the sum of products: each operand cut to tf32 (10 explicit mantissa bits:
    # under 2^-10 relative each, rounded or truncated, so 2^-9 a product) or exact (fp32 ieee,
    # fp16), then K fp32 additions (2^-24 each), all scaled by sum |a||b|
    size = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    unit = 2.0 ** -9 if (prec == "tf32" and dtype == np.float32) else 0.0
    assert np.all(np.abs(c - ref) <= (unit + K * 2.0 ** -24) * size * 1.01), np.abs(c - ref).max()
    if prec == "tf32" and dtype == np.float32:
        assert np.abs(c - ref).max() > 1e-4  # TF32 rounding is emulated


@wb.jit
def printer(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_print("x=", x, tl.program_id(0))


def test_device_print(capfd):
    x = rng.integers(-9, 9, 4).astype(np.int32)
    printer[(3,)](x, N=4)
    lines = capfd.readouterr().out.splitlines()
    assert lines == [f"pid ({p}, 0, 0) x= {np.array2string(x)} {p}" for p in range(3)]


@wb.jit(debug=True)
def checked(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.program_id(0) * N + tl.arange(0, N))
    tl.device_assert(x >= 0, "x must be non-negative")


def test_device_assert():
    x = np.arange(64, dtype=np.int32)
    checked[(8,)](x, N=8)
    x[45] = -1
    with pytest.raises(DeviceAssertionError) as ei:
        checked[(8,)](x, N=8)
    assert ei.value.program_id == (5, 0, 0) and "x must be non-negative" in str(ei.value)
    assert ei.value.loc.line == checked.fn.__code__.co_firstlineno + 3


@wb.jit
def shapes_math(x_ptr, y_ptr, j_ptr, s_ptr, c_ptr, u_ptr, h_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    y = tl.load(y_ptr + r)
    j = tl.join(x, y)
    tl.store(j_ptr + r[:, None] * 2 + tl.arange(0, 2)[None, :], j)
    a, b = tl.split(j)
    tl.store(s_ptr + r, a - b)
    tl.store(c_ptr + r, tl.clamp(x, -0.5, 0.5))
    xi = x.to(tl.int32, bitcast=True)
    tl.store(u_ptr + r, tl.umulhi(xi, xi))
    tl.store(h_ptr + r, x.to(tl.float16, fp_downcast_rounding="rtz"))


def test_join_split_clamp_umulhi_rtz_cast():
    N = 64
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    j = np.full((N, 2), np.nan, np.float32)
    s, c = np.full(N, np.nan, np.float32), np.full(N, np.nan, np.float32)
    u = np.zeros(N, np.int32)
    h = np.full(N, np.nan, np.float16)
    shapes_math[(1,)](x, y, j, s, c, u, h, N=N)
    np.testing.assert_array_equal(j, np.stack([x, y], -1))
    np.testing.assert_array_equal(s, x - y)
    np.testing.assert_array_equal(c, np.clip(x, -0.5, 0.5))
    xu = x.view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(u.view(np.uint32), ((xu * xu) >> 32).astype(np.uint32))
    assert (np.abs(h.astype(np.float64)) <= np.abs(x)).all()
    assert (np.abs(x - h) < 2e-3 * np.abs(x) + 1e-7).all()


@wb.jit
def random_sort_flip(seed, o_ptr, i_ptr, s_ptr, f_ptr, x_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(o_ptr + r, tl.rand(seed, r))
    tl.store(i_ptr + r, tl.randint(seed, r))
    x = tl.load(x_ptr + r)
    tl.store(s_ptr + r, tl.sort(x))
    tl.store(f_ptr + r, tl.flip(x))


def test_philox_random_bit_exact_with_interpreter_sort_and_flip(monkeypatch):
    N = 64
    x = rng.standard_normal(N).astype(np.float32)
    seed = int(rng.integers(0, 2 ** 31))

    def launch():
        outs = [np.full(N, np.nan, np.float32), np.zeros(N, np.int32),
                np.full(N, np.nan, np.float32), np.full(N, np.nan, np.float32)]
        random_sort_flip[(1,)](seed, *outs, x, N=N)
        return outs
    cpu = launch()
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    ref = launch()
    for c, r in zip(cpu, ref, strict=True):
        np.testing.assert_array_equal(c, r)
    assert ((cpu[0] >= 0) & (cpu[0] < 1)).all() and np.unique(cpu[1]).size == N
    np.testing.assert_array_equal(cpu[2], np.sort(x))
    np.testing.assert_array_equal(cpu[3], x[::-1])
