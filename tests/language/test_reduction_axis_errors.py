"""tl.max / tl.min given a tile as their second argument (a student meaning tl.maximum) are
told which elementwise function they wanted, at their line."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def clamp_wrong(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    lo = tl.zeros((N,), tl.float32)
    tl.store(out_ptr + offs, tl.max(x, lo))


def test_a_tile_as_the_axis_points_to_the_elementwise_function():
    x = np.random.default_rng().standard_normal(16).astype(np.float32)
    with pytest.raises(CompilationError) as e:
        clamp_wrong[(1,)](x, np.zeros_like(x), N=16)
    text = str(e.value)
    assert "tl.minimum / tl.maximum" in text and "got a tensor" in text
    assert "test_reduction_axis_errors.py" in text and "tl.max(x, lo)" in text
