"""Launches on an NVIDIA GPU through the public API with device arrays (torch, CuPy, DLPack):
the runtime picks ``cuda:<arch>`` from the arrays, the cuda backend compiles and launches.
Skipped where no CUDA device is usable (tests/conftest.py)."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import LaunchError

pytestmark = pytest.mark.gpu


@wb.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@wb.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@wb.jit
def scale_2d(x_ptr, out_ptr, M, N, sxm, sxn, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], x * 3.0, mask=mask)


class DLPackOnly:
    """Exposes only the DLPack protocol of a device tensor (no CUDA array interface)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__()

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_torch_vector_add_and_softmax():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    n = 10_000 + int(rng.integers(0, 100))
    x = torch.from_numpy(rng.standard_normal(n).astype(np.float32)).cuda()
    y = torch.from_numpy(rng.standard_normal(n).astype(np.float32)).cuda()
    out = torch.full((n,), float("nan"), device="cuda")
    k = add_kernel[(wb.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    major, minor = torch.cuda.get_device_capability()
    assert k.target.backend == "cuda" and k.target.arch <= major * 10 + minor
    np.testing.assert_array_equal(out.cpu().numpy(), (x + y).cpu().numpy())

    rows, cols = 37, 781
    a = torch.from_numpy((rng.standard_normal((rows, cols)) * 3).astype(np.float32)).cuda()
    o = torch.full_like(a, float("nan"))
    softmax_kernel[(rows,)](o, a, a.stride(0), o.stride(0), cols, BLOCK=1024)
    an = a.cpu().numpy().astype(np.float64)
    e = np.exp(an - an.max(axis=1, keepdims=True))
    np.testing.assert_allclose(o.cpu().numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5,
                               atol=1e-7)


def test_strided_device_view_and_dlpack():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    M, N = 50, 40
    base = torch.from_numpy(rng.standard_normal((M, 2 * N)).astype(np.float32)).cuda()
    view = base[:, ::2]  # strided, passed without a copy
    out = torch.full((M, N), float("nan"), device="cuda")
    scale_2d[(wb.cdiv(M, 16),)](view, DLPackOnly(out), M, N, view.stride(0), view.stride(1),
                                BM=16, BN=64)
    np.testing.assert_array_equal(out.cpu().numpy(), view.cpu().numpy() * np.float32(3.0))


def test_cupy_arrays():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng()
    n = 3000
    x = cp.asarray(rng.standard_normal(n).astype(np.float32))
    y = cp.asarray(rng.standard_normal(n).astype(np.float32))
    for _ in range(2):  # the second launch is a fast-path hit (a __cuda_array_interface__ key)
        out = cp.full(n, cp.nan, dtype=cp.float32)
        add_kernel[(wb.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
        np.testing.assert_array_equal(cp.asnumpy(out), cp.asnumpy(x) + cp.asnumpy(y))
    from workbench.runtime import argkeys
    assert argkeys.HANDLERS[type(x)] is argkeys._cuda_array


def test_mixed_host_and_device_is_refused():
    torch = pytest.importorskip("torch")
    x = torch.zeros(16, device="cuda")
    with pytest.raises(LaunchError, match="different devices"):
        add_kernel[(1,)](x, np.zeros(16, np.float32), x, 16, BLOCK=16)
