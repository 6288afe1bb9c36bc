"""``tl.squeeze`` / ``tl.unsqueeze`` (Triton's names: drop or add a size-1 dim) and
``@constexpr_function`` (a Python helper kernels call with compile-time arguments)."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.constexpr_function
def doubled(n):
    return 2 * n


@wb.jit
def row_sums(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    s = tl.sum(x, axis=1, keep_dims=True)          # [M, 1]
    s = tl.squeeze(s, 1)                            # [M]
    s3 = tl.unsqueeze(s, 0)                         # [1, M]
    s = tl.squeeze(s3, -2)                          # [M]
    tl.store(out_ptr + rows, s * doubled(1))


def test_squeeze_unsqueeze_and_constexpr_function(backend):
    x = np.random.default_rng().standard_normal((8, 16)).astype(np.float32)
    out = np.zeros(8, dtype=np.float32)
    row_sums[(1,)](x, out, M=8, N=16)
    np.testing.assert_allclose(out, 2 * x.sum(axis=1), rtol=1e-5, atol=1e-5)


@wb.jit
def squeeze_wrong_dim(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))[None, :]
    tl.store(out_ptr + tl.arange(0, 4), tl.squeeze(x, 1))


def test_squeeze_of_a_dim_bigger_than_one_is_refused(backend):
    with pytest.raises(CompilationError, match="not 1"):
        squeeze_wrong_dim[(1,)](np.zeros(4, np.float32), np.zeros(4, np.float32))
