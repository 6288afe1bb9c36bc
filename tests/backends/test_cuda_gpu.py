"""Kernels launched on an NVIDIA GPU and compared with numpy (fresh random inputs, poisoned
outputs). Marked ``gpu``: skipped cleanly without a GPU and cuda-bindings (tests/conftest.py)."""
from __future__ import annotations

import numpy as np
import pytest

from workbench.backends.cuda import CudaBackend
from workbench.codegen.nvptx import samples
from workbench.codegen.nvptx.types import bf16_bits
from workbench.config import CompileContext, Options, Target

pytestmark = pytest.mark.gpu


def _run(module, grid, args, num_warps=4):
    from workbench.backends import cuda_driver as cd
    res = CudaBackend(Target.parse("cuda:90")).compile(module, None, Options(num_warps=num_warps),
                                                       CompileContext())
    assert res.launch_error is None, res.launch_error
    conv = [a.pointer_arg() if isinstance(a, cd.DeviceArray) else a for a in args]
    res.launcher(tuple(grid) + (1,) * (3 - len(grid)), conv)
    cd.synchronize()
    return res


def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(a)


@pytest.mark.parametrize("vec,n_div16,n", [(1, False, 5000), (4, True, 4096 + 16),
                                           (4, False, 777), (1, False, 1)])
def test_vector_add(vec, n_div16, n):
    rng = np.random.default_rng()
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n + 64, np.nan, np.float32)
    dx, dy, do = _dev(x), _dev(y), _dev(out)
    _run(samples.vector_add(vec=vec, n_div16=n_div16), ((n + 1023) // 1024,), [dx, dy, do, n])
    got = do.to_numpy()
    np.testing.assert_array_equal(got[:n], x + y)
    assert np.isnan(got[n:]).all(), "wrote past the mask"


def test_broadcast_tile():
    rng = np.random.default_rng()
    m, n, stride = 30, 50, 53
    x, y = rng.standard_normal(m).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full((m, stride), np.nan, np.float32)
    dx, dy, do = _dev(x), _dev(y), _dev(out)
    _run(samples.broadcast_tile(32, 64), (1,), [dx, dy, do, m, n, stride])
    got = do.to_numpy()
    np.testing.assert_allclose(got[:, :n], x[:, None] * y[None, :] + 1, rtol=1e-6, atol=1e-6)
    assert np.isnan(got[:, n:]).all()


@pytest.mark.parametrize("m,n,axis,kind,warps", [(64, 128, 1, "sum", 4), (64, 128, 0, "max", 4),
                                                 (128, 64, 1, "sum", 8), (32, 64, 0, "sum", 4)])
def test_reductions(m, n, axis, kind, warps):
    x = np.random.default_rng().standard_normal((m, n)).astype(np.float32)
    r_len = n if axis == 0 else m
    out = np.full(r_len, np.nan, np.float32)
    dx, do = _dev(x), _dev(out)
    _run(samples.reduce_2d(m, n, axis, kind, num_warps=warps), (1,), [dx, do], num_warps=warps)
    want = x.sum(axis=axis) if kind == "sum" else x.max(axis=axis)
    np.testing.assert_allclose(do.to_numpy(), want, rtol=1e-5, atol=1e-5)


def test_softmax_non_power_of_two_cols():
    rows, cols = 37, 1000
    x = (np.random.default_rng().standard_normal((rows, cols)) * 3).astype(np.float32)
    out = np.full((rows, cols), np.nan, np.float32)
    dx, do = _dev(x), _dev(out)
    _run(samples.softmax(1024), (rows,), [do, dx, cols, cols, cols])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(do.to_numpy(), e / e.sum(axis=1, keepdims=True), rtol=2e-5,
                               atol=1e-7)


def test_casts():
    n = 1000
    x = (np.random.default_rng().standard_normal(n) * 300).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    dx, do = _dev(x), _dev(out)
    _run(samples.casts(256), ((n + 255) // 256,), [dx, do, n])
    h = x.astype(np.float16).astype(np.float32)
    b = np.array([bf16_bits(v) for v in h], np.uint32) << 16
    want = np.trunc(b.view(np.float32)).astype(np.int32).astype(np.float32)
    np.testing.assert_array_equal(do.to_numpy(), want)


def test_frontend_kernels_through_the_runtime():
    import workbench as wb
    import workbench.language as tl

    @wb.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs,
                                                                             mask=mask), mask=mask)

    @wb.jit
    def softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
        num = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)

    from workbench.backends import cuda_driver as cd
    rng = np.random.default_rng()
    n = 10000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    dx, dy, do = _dev(x), _dev(y), _dev(np.full(n, np.nan, np.float32))
    add[(n + 1023) // 1024,](dx, dy, do, n, BLOCK=1024)
    cd.synchronize()
    np.testing.assert_array_equal(do.to_numpy(), x + y)
    rows, cols = 20, 781
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    da, dout = _dev(a), _dev(np.full((rows, cols), np.nan, np.float32))
    softmax[rows,](dout, da, cols, cols, cols, BLOCK=1024)
    cd.synchronize()
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(dout.to_numpy(), e / e.sum(axis=1, keepdims=True), rtol=2e-5,
                               atol=1e-7)
