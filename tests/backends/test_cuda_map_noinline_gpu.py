"""tl.map_elementwise and @jit(noinline=True) on a GPU (the lead runs these on the H200):
the rewritten tiles and the inlined calls against numpy, fresh random inputs, poisoned
outputs."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(a)


def _sync():
    from workbench.backends import cuda_driver
    cuda_driver.synchronize()


@wb.jit
def _ratio_or(a, b):
    if b != 0:
        return a // b, a % b
    return -7, -9


@wb.jit
def _swap_pairs(a0, a1):
    return a1, a0


@wb.jit
def map_k(a_ptr, b_ptr, q_ptr, r_ptr, s_ptr, N: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    q, r = tl.map_elementwise(_ratio_or, a, b)
    tl.store(q_ptr + offs, q)
    tl.store(r_ptr + offs, r)
    (s,) = tl.map_elementwise(_swap_pairs, a, pack=2)
    tl.store(s_ptr + offs, s)


@pytest.mark.gpu
def test_map_elementwise_gpu():
    rng = np.random.default_rng()
    n = 1024
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    b = rng.integers(-4, 5, n).astype(np.int32)
    outs = [_dev(np.full(n, 12345, np.int32)) for _ in range(3)]
    map_k[(n // 256,)](_dev(a), _dev(b), *outs, N=256)
    _sync()
    q, r, s = (o.to_numpy() for o in outs)
    nz = b != 0
    sb = np.where(nz, b, 1)
    trunc = np.sign(a) * np.sign(sb) * (np.abs(a) // np.abs(sb))
    np.testing.assert_array_equal(q, np.where(nz, trunc, -7))
    np.testing.assert_array_equal(r, np.where(nz, a - trunc * sb, -9))
    np.testing.assert_array_equal(s, a[np.arange(n) ^ 1])


@wb.jit(noinline=True)
def _axpy(a, x, y):
    return a * x + y


@wb.jit(noinline=True)
def _put(p, v):
    tl.store(p, v)


@wb.jit
def noinline_k(x_ptr, y_ptr, out_ptr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    if pid % 3 == 0:
        _put(out_ptr + pid, _axpy(2.0, x, tl.load(y_ptr + pid)))
    else:
        _put(out_ptr + pid, _axpy(x, x, 1.0))


@pytest.mark.gpu
def test_noinline_gpu():
    rng = np.random.default_rng()
    n = 300
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = _dev(np.full(n, np.nan, np.float32))
    noinline_k[(n,)](_dev(x), _dev(y), out)
    _sync()
    pid = np.arange(n)
    want = np.where(pid % 3 == 0, np.float32(2) * x + y, x * x + np.float32(1))
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-6, atol=1e-6)
