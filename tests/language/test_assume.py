"""``tl.assume(cond)`` (Triton's hint) compiles and changes no result; a compile-time False or
a non-boolean condition is refused at the line."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def add_with_assumptions(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.assume(pid >= 0)
    tl.assume(stride > 0)
    tl.assume(True)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride, mask=mask) + 1.0, mask=mask)


def test_assume_changes_nothing(backend):
    x = np.random.default_rng().standard_normal(400).astype(np.float32)
    out = np.full(200, np.nan, dtype=np.float32)
    add_with_assumptions[(2,)](x, out, 200, 2, BLOCK=128)
    np.testing.assert_array_equal(out, x[::2] + np.float32(1.0))


@wb.jit
def assumes_false(out_ptr):
    tl.assume(False)
    tl.store(out_ptr, 1.0)


@wb.jit
def assumes_a_float(x_ptr, out_ptr):
    x = tl.load(x_ptr)
    tl.assume(x)
    tl.store(out_ptr, x)


@pytest.mark.parametrize("kernel, words", [(assumes_false, "false at compile time"),
                                           (assumes_a_float, "needs a boolean")])
def test_assume_refuses_bad_conditions(backend, kernel, words):
    args = (np.ones(1, np.float32), np.zeros(1, np.float32))
    with pytest.raises(CompilationError, match=words) as info:
        kernel[(1,)](*args[-1:] if kernel is assumes_false else args)
    assert "tl.assume(" in str(info.value)
