"""Python's min/max on compile-time values in kernels: folded when unambiguous, refused at
the line with a NaN or a -0.0 among them (Triton's builtin_min/builtin_max assert that)."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def minmax_kernel(out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    tl.store(out_ptr, min(A, B, C))
    tl.store(out_ptr + 1, max(A, B))


def test_folded_minmax(backend):
    a, b, c = (random.uniform(-100, 100) for _ in range(3))
    out = np.zeros(2, np.float32)
    minmax_kernel[(1,)](out, A=a, B=b, C=c)
    np.testing.assert_allclose(out, np.float32([min(a, b, c), max(a, b)]))


@pytest.mark.parametrize("bad", [math.nan, -0.0])
def test_nan_or_negative_zero_is_refused_at_the_line(bad):
    with pytest.raises(CompilationError) as e:
        wb.compile(minmax_kernel, "*fp32", target="cpu", A=1.0, B=bad, C=2.0)
    assert "NaN or a -0.0" in str(e.value) and "min(A, B, C)" in str(e.value)
