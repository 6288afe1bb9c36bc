"""``tl.max``/``tl.min`` with ``return_indices=True``: the (value, int32 index) pair along an
axis, ties to the smallest index by default, dtypes as Triton keeps them (only bf16 is
compared in fp32), against numpy's max/argmax on both host backends."""
import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def max_min_indices(x_ptr, vmax_ptr, imax_ptr, vmin_ptr, imin_ptr, R: tl.constexpr,
                    C: tl.constexpr, AXIS: tl.constexpr, KEEP: tl.constexpr,
                    LEFT: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + offs)
    vmax, imax = tl.max(x, axis=AXIS, return_indices=True, keep_dims=KEEP,
                        return_indices_tie_break_left=LEFT)
    vmin, imin = x.min(AXIS, return_indices=True, keep_dims=KEEP,
                       return_indices_tie_break_left=LEFT)
    if KEEP:
        vmax = tl.reshape(vmax, (R * C // (R if AXIS == 0 else C),))
        imax = tl.reshape(imax, (R * C // (R if AXIS == 0 else C),))
        vmin = tl.reshape(vmin, (R * C // (R if AXIS == 0 else C),))
        imin = tl.reshape(imin, (R * C // (R if AXIS == 0 else C),))
    n = tl.arange(0, R * C // (R if AXIS == 0 else C))
    tl.store(vmax_ptr + n, vmax)
    tl.store(imax_ptr + n, imax)
    tl.store(vmin_ptr + n, vmin)
    tl.store(imin_ptr + n, imin)


def _run(x, axis, keep, left, out_dtype):
    r, c = x.shape
    n = c if axis == 0 else r
    outs = [np.full(n, 77, dtype=d) for d in (out_dtype, np.int32, out_dtype, np.int32)]
    launch("cpu", max_min_indices, (1,), x, *outs, r, c, axis, keep, left)
    return outs


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int32])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("keep", [False, True])
def test_values_and_first_indices_with_ties(backend, rng, dtype, axis, keep):
    # few distinct values: most rows have ties, which must go to the smallest index
    x = rng.integers(-3, 4, size=(16, 32)).astype(dtype)
    vmax, imax, vmin, imin = _run(x, axis, keep, True, dtype)
    np.testing.assert_array_equal(vmax, x.max(axis=axis))
    np.testing.assert_array_equal(imax, x.argmax(axis=axis))
    np.testing.assert_array_equal(vmin, x.min(axis=axis))
    np.testing.assert_array_equal(imin, x.argmin(axis=axis))


@pytest.mark.parametrize("axis", [0, 1])
def test_fast_tie_break_on_distinct_values(backend, rng, axis):
    x = rng.permutation(16 * 32).reshape(16, 32).astype(np.float32) - 200.5
    vmax, imax, vmin, imin = _run(x, axis, False, False, np.float32)
    np.testing.assert_array_equal(imax, x.argmax(axis=axis))
    np.testing.assert_array_equal(imin, x.argmin(axis=axis))
    np.testing.assert_array_equal(vmax, x.max(axis=axis))
    np.testing.assert_array_equal(vmin, x.min(axis=axis))


@wb.jit
def bf16_max_with_index(x_ptr, v_ptr, i_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N)).to(tl.bfloat16)
    v, i = tl.max(x, 0, return_indices=True)
    tl.static_assert(v.dtype == tl.float32)
    tl.store(v_ptr, v)
    tl.store(i_ptr, i)


def test_bf16_is_compared_in_fp32(backend, rng):
    # values exactly representable in bf16
    x = (rng.integers(-250, 250, 64) / 2).astype(np.float32)  # 8 significant bits
    v, i = np.zeros(1, np.float32), np.zeros(1, np.int32)
    launch(backend, bf16_max_with_index, (1,), x, v, i, 64)
    assert v[0] == x.max() and i[0] == x.argmax()


def test_no_axis_is_refused_at_the_line():
    @wb.jit
    def no_axis(x_ptr):
        v, i = tl.max(tl.load(x_ptr + tl.arange(0, 16)), return_indices=True)
        tl.store(x_ptr, v)

    with pytest.raises(CompilationError, match="needs an axis") as e:
        no_axis[(1,)](np.zeros(16, np.float32))
    assert "tl.max(tl.load" in str(e.value)
