"""``workbench.must_use_result``: calling a marked helper as a statement (its result dropped)
is a compile error at that call, with the extra words given; using the result compiles."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.must_use_result("Squares are not computed in place.")
@wb.jit
def square(x):
    return x * x


@wb.jit
def uses(out_ptr):
    a = tl.arange(0, 8)
    a = square(a)
    tl.store(out_ptr + tl.arange(0, 8), a)


@wb.jit
def drops(out_ptr):
    a = tl.arange(0, 8)
    square(a)
    tl.store(out_ptr + tl.arange(0, 8), a)


def test_used_result_compiles_and_dropped_result_is_refused(backend):
    out = np.zeros(8, np.int32)
    uses[(1,)](out)
    np.testing.assert_array_equal(out, np.arange(8) ** 2)
    with pytest.raises(CompilationError,
                       match="The result of square is not being used. Squares are not") as e:
        drops[(1,)](out)
    assert "square(a)" in str(e.value)
