"""``num_warps`` must be a power of 2. Any power of 2 launches and computes the same values;
anything else is a :class:`LaunchOptionError` at the launch (or ``warmup``), which is both a
``LaunchError`` and an ``AssertionError`` (Triton's backends check their options with
asserts, so code written for Triton catches ``AssertionError`` there)."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import LaunchError, LaunchOptionError


@wb.jit
def scaled_shift(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * scale - 1.5, mask=mask)


@pytest.mark.parametrize("num_warps", [1, 2, 4, 8])
def test_power_of_two_num_warps_compute_the_same(backend, num_warps):
    rng = np.random.default_rng()
    n = int(rng.integers(100, 300))
    x = rng.standard_normal(n).astype(np.float32)
    scale = float(rng.uniform(0.5, 3.0))
    out = np.full(n, np.nan, dtype=np.float32)
    scaled_shift[(-(-n // 64),)](x, out, n, scale, BLOCK=64, num_warps=num_warps)
    np.testing.assert_allclose(out, x * np.float32(scale) - np.float32(1.5), rtol=1e-6,
                               atol=1e-6)


@pytest.mark.parametrize("bad", [3, 0, 6, -4])
def test_other_num_warps_raise_an_assertion_error(backend, bad):
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    with pytest.raises(AssertionError, match="num_warps must be a power of 2") as e:
        scaled_shift[(1,)](x, out, 8, 2.0, BLOCK=8, num_warps=bad)
    assert isinstance(e.value, LaunchError) and isinstance(e.value, LaunchOptionError)
    assert "test_num_warps_option.py" in str(e.value)  # points at the kernel's def
    assert not out.any()  # nothing ran
    with pytest.raises(AssertionError, match="must be a power of 2"):
        scaled_shift.warmup(x, out, 8, 2.0, BLOCK=8, grid=(1,), num_warps=bad)
    scaled_shift.warmup(x, out, 8, 2.0, BLOCK=8, grid=(1,), num_warps=2)
