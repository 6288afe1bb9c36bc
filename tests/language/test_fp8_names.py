"""Triton's fp8 dtype names exist (``tl.float8e4nv`` ... with their widths), and a kernel that
computes in one is refused at compile time with a message naming the dtype and the line."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError

FP8 = [("float8e4nv", 3), ("float8e5", 2), ("float8e4b15", 3), ("float8e4b8", 3),
       ("float8e5b16", 2)]


@pytest.mark.parametrize("name, mantissa", FP8)
def test_fp8_dtype_attributes(name, mantissa):
    d = getattr(tl, name)
    assert d.is_floating() and d.is_fp8() and not d.is_int()
    assert d.primitive_bitwidth == 8 and d.fp_mantissa_width == mantissa
    assert tl.float32.is_fp8() is False


@wb.jit
def to_fp8(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(out_ptr + tl.arange(0, 16), x.to(tl.float8e5).to(tl.float32))


def test_fp8_cast_in_a_kernel_is_refused_at_the_line(backend):
    x = np.random.default_rng().standard_normal(16).astype(np.float32)
    with pytest.raises(CompilationError) as info:
        to_fp8[(1,)](x, np.zeros(16, dtype=np.float32))
    text = str(info.value)
    assert "float8e5" in text and "not supported" in text
    assert "x.to(tl.float8e5)" in text  # the source line is shown
