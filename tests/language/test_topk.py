"""``tl.topk``: the k largest values along the last dim in descending order, against numpy's
sort, for 1-D and 2-D tiles, several k, ints and floats (narrow ones come back widened,
as Triton's do), on both host backends."""
import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def topk_rows(x_ptr, z_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    z = tl.topk(x, K)
    tl.store(z_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :], z)


@wb.jit
def topk_1d(x_ptr, z_ptr, N: tl.constexpr, K: tl.constexpr):
    z = tl.topk(tl.load(x_ptr + tl.arange(0, N)), K, dim=0)
    tl.store(z_ptr + tl.arange(0, K), z)


def _random(rng, dtype, shape):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-50, 50, shape).astype(dtype)  # with repeats
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float16, np.int8])
@pytest.mark.parametrize("m, n, k", [(4, 64, 8), (8, 16, 1), (2, 32, 32), (16, 8, 2)])
def test_topk_rows(backend, rng, dtype, m, n, k):
    x = _random(rng, dtype, (m, n))
    z = np.full((m, k), 99, dtype=dtype)
    launch(backend, topk_rows, (1,), x, z, m, n, k)
    want = -np.sort(-x.astype(np.float64), axis=1)[:, :k]
    np.testing.assert_array_equal(z.astype(np.float64), want)


def test_topk_1d_and_widened_dtype(backend, rng):
    x = _random(rng, np.float32, 128)
    z = np.zeros(4, np.float32)
    launch(backend, topk_1d, (1,), x, z, 128, 4)
    np.testing.assert_array_equal(z, np.sort(x)[::-1][:4])

    @wb.jit
    def widened(x_ptr, z_ptr):
        v = tl.topk(tl.load(x_ptr + tl.arange(0, 16)).to(tl.float16), 4)
        tl.static_assert(v.dtype == tl.float32)
        tl.store(z_ptr + tl.arange(0, 4), v)

    z2 = np.zeros(4, np.float32)
    launch(backend, widened, (1,), x[:16], z2)
    np.testing.assert_array_equal(z2, np.sort(x[:16].astype(np.float16))[::-1][:4])


def test_topk_along_another_dim_is_refused():
    @wb.jit
    def first_dim(x_ptr):
        x = tl.load(x_ptr + tl.arange(0, 4)[:, None] * 4 + tl.arange(0, 4)[None, :])
        tl.store(x_ptr + tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :],
                 tl.topk(x, 2, dim=0))

    with pytest.raises(CompilationError, match="only minor dimension") as e:
        first_dim[(1,)](np.zeros(16, np.float32))
    assert "tl.topk(x, 2, dim=0)" in str(e.value)


def test_topk_compiles_for_cuda():
    ptx = wb.compile(topk_rows, "*fp32", "*fp32", M=4, N=64, K=8, target="cuda:90").asm["ptx"]
    assert ".version" in ptx and "st.global" in ptx
