"""Float ``atomic_max``/``atomic_min`` follow Triton's bit trick: the sign bit picks signed
integer max/min (sign clear) or unsigned min/max (sign set), so -0.0 orders below +0.0 and
max(-FLT_MAX, -0.0) is -0.0 (a ``val >= 0`` test would send -0.0 the wrong way)."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


@wb.jit
def minmax_into_slots(vals_ptr, slot_ptr, max_ptr, min_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * N + tl.arange(0, N)
    v = tl.load(vals_ptr + offs)
    s = tl.load(slot_ptr + offs)
    tl.atomic_max(max_ptr + s, v)
    tl.atomic_min(min_ptr + s, v)


def _ordered(x):
    """A key ordering floats with -0.0 just below +0.0."""
    return (float(x), not np.signbit(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_signed_zeros_and_extremes(backend, dtype):
    rng = np.random.default_rng()
    fin = np.finfo(dtype)
    pool = np.array([-0.0, 0.0, fin.min, fin.max, -1.5, 2.25], dtype)
    vals = rng.choice(pool, size=4 * 16).astype(dtype)
    pick = rng.random(vals.size) < 0.3
    vals[pick] = rng.standard_normal(int(pick.sum())).astype(dtype)
    slots = rng.integers(0, 5, size=vals.size).astype(np.int32)
    mx = np.full(5, fin.min, dtype)
    mn = np.full(5, fin.max, dtype)
    mx[4], mn[4] = -0.0, 0.0  # a slot starting at a zero of the other sign
    minmax_into_slots[(4,)](vals, slots, mx, mn, N=16)
    for k in range(5):
        got = vals[slots == k]
        start_max = fin.min if k < 4 else dtype(-0.0)
        start_min = fin.max if k < 4 else dtype(0.0)
        want_max = max([start_max, *got], key=_ordered)
        want_min = min([start_min, *got], key=_ordered)
        assert mx[k] == want_max and np.signbit(mx[k]) == np.signbit(want_max), k
        assert mn[k] == want_min and np.signbit(mn[k]) == np.signbit(want_min), k


@wb.jit
def max_of_negative_zero(inp, out_max, out_min):
    x = tl.load(inp)
    tl.atomic_max(out_max, x)
    tl.atomic_min(out_min, x)


def test_negative_zero_beats_the_lowest_float(backend):
    fin = np.finfo(np.float32)
    inp = np.array([-0.0], np.float32)
    mx, mn = np.array([fin.min], np.float32), np.array([fin.max], np.float32)
    max_of_negative_zero[(1,)](inp, mx, mn)
    assert mx[0] == 0 and np.signbit(mx[0])
    assert mn[0] == 0 and np.signbit(mn[0])
