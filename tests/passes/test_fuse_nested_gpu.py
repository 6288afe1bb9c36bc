"""``tl.range(..., flatten=True)`` nests on an NVIDIA GPU (sm_80 or newer), fused by
tritongpu-fuse-nested-loops: test_core's ``test_tl_range_fuse`` and
``test_tl_range_fuse_dependent`` kernels with their ttgir checks, and a nest with a prologue
pointer, a reset accumulator, a carried counter and an epilogue store, against Python's nest
with fresh random sizes and inputs."""
from __future__ import annotations

import numpy as np
import pytest

from .test_fuse_nested_dependent import (
    _dependent_ref,
    _rows_ref,
    _triton_test_checks,
    dependent,
    dependent_rows,
)
from .test_fuse_nested_loops import fuse_counter

pytestmark = pytest.mark.gpu
rng = np.random.default_rng()


def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(np.ascontiguousarray(a))


def _sync():
    from workbench.backends import cuda_driver
    cuda_driver.synchronize()


def test_tl_range_fuse_on_the_gpu():
    ub = 10
    out = _dev(np.zeros((32, 32), np.int32))
    k = fuse_counter[(1,)](ub, out)
    _sync()
    assert "tt.flatten" in k.asm["ttir"] and k.asm["ttgir"].count("scf.for") == 1
    ref = np.zeros((32, 32), np.int32)
    ref[:ub, :ub] = np.arange(1, ub * ub + 1).reshape(ub, ub)
    np.testing.assert_array_equal(out.to_numpy(), ref)


@pytest.mark.parametrize("ub", [10, 0, 1, int(rng.integers(2, 30))])
def test_tl_range_fuse_dependent_on_the_gpu(ub):
    out_i, out_j = _dev(np.zeros(1024, np.int32)), _dev(np.zeros(1024, np.int32))
    k = dependent[(1,)](ub, out_i, out_j)
    _sync()
    assert "tt.flatten" in k.asm["ttir"]
    _triton_test_checks(k.asm["ttgir"])
    ri, rj = _dependent_ref(ub)
    np.testing.assert_array_equal(out_i.to_numpy(), ri)
    np.testing.assert_array_equal(out_j.to_numpy(), rj)


def test_dependent_rows_on_the_gpu():
    M = int(rng.integers(5, 20))
    W = M + 3
    x = rng.standard_normal((M, W, 16)).astype(np.float32)
    out = _dev(np.full((M, 16), np.nan, np.float32))
    cnt = _dev(np.full(1, -1, np.int32))
    k = dependent_rows[(1,)](_dev(x), out, cnt, M, W, BLOCK=16)
    _sync()
    _triton_test_checks(k.asm["ttgir"])
    want, count = _rows_ref(x, M)
    assert cnt.to_numpy()[0] == count
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-5, atol=1e-5)
