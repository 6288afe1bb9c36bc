"""``tl.swizzle2d`` renumbers a grid so that groups of ``size_g`` rows are walked column by
column; checked against a plain Python model of that ordering, with scalar and tile inputs."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


def model(size_i, size_j, size_g):
    """Where each (i, j) goes: walk groups of rows, inside a group column by column."""
    out = np.zeros((size_i, size_j), dtype=np.int32)
    k = 0
    for top in range(0, size_i, size_g):
        rows = min(size_g, size_i - top)
        for j in range(size_j):
            for r in range(rows):
                # the k-th cell of row-major order lands on (top + r, j)
                out[top + r, j] = k
                k += 1
    return out


@wb.jit
def swizzle_scalars(out_ptr, size_i, size_j, size_g):
    for i in range(0, size_i):
        for j in range(0, size_j):
            new_i, new_j = tl.swizzle2d(i, j, size_i, size_j, size_g)
            tl.store(out_ptr + new_i * size_j + new_j, i * size_j + j)


@wb.jit
def swizzle_tiles(out_ptr, size_i, size_j, size_g, BI: tl.constexpr, BJ: tl.constexpr):
    i = tl.arange(0, BI)[:, None]
    j = tl.arange(0, BJ)[None, :]
    new_i, new_j = tl.swizzle2d(i, j, size_i, size_j, size_g)
    mask = (i < size_i) & (j < size_j)
    tl.store(out_ptr + new_i * size_j + new_j, i * size_j + j, mask=mask)


@pytest.mark.parametrize("size_i, size_j, size_g", [(5, 7, 3), (8, 4, 2), (6, 6, 4)])
def test_swizzle2d_scalars_and_tiles(backend, size_i, size_j, size_g):
    want = model(size_i, size_j, size_g)
    out = np.full((size_i, size_j), -1, dtype=np.int32)
    swizzle_scalars[(1,)](out, size_i, size_j, size_g)
    np.testing.assert_array_equal(out, want)
    out2 = np.full((size_i, size_j), -1, dtype=np.int32)
    swizzle_tiles[(1,)](out2, size_i, size_j, size_g, BI=8, BJ=8)
    np.testing.assert_array_equal(out2, want)
