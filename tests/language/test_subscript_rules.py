"""``x[...]`` with ``None`` and ``:`` follows Triton: each ``None`` inserts a dimension at its
position, a ``:`` is not counted against the rank, so ``ptr[None, None, :]`` on a scalar
pointer is a (1, 1) block and ``x[None]`` on a 2-D tile is (1, M, N)."""
import numpy as np

import workbench as wb
import workbench.language as tl


@wb.jit
def max_into_1x1(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    m = tl.max(x, axis=None, keep_dims=True)          # shape (1, 1)
    tl.store(out_ptr[None, None, :], m)                # scalar pointer -> (1, 1) block


def test_colons_past_the_rank_of_a_scalar_pointer(backend, rng):
    x = rng.standard_normal((8, 16)).astype(np.float32)
    out = np.full(1, np.nan, np.float32)
    max_into_1x1[(1,)](x, out, M=8, N=16)
    assert out[0] == x.max()


@wb.jit
def leading_none(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)[None]                    # (1, M, N): trailing dims implied
    s = tl.sum(x, axis=0)                              # back to (M, N)
    tl.store(out_ptr + offs, s * 2)


def test_none_alone_on_a_2d_tile(backend, rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)
    out = np.zeros_like(x)
    leading_none[(1,)](x, out, M=4, N=8)
    np.testing.assert_allclose(out, 2 * x, rtol=1e-6)
