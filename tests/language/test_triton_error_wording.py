"""Errors Triton's own tests match by text: a bitwise operator on floats and a division of
mixed signedness raise at compile time with Triton's wording (and our caret)."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def bitwise_on_floats(x_ptr, out_ptr):
    offs = tl.arange(0, 8)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x | x)


@wb.jit
def mixed_sign_division(x_ptr, y_ptr, out_ptr):
    offs = tl.arange(0, 8)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) // tl.load(y_ptr + offs))


def test_bitwise_on_floats_says_invalid_operands(backend):
    x = np.random.default_rng().standard_normal(8).astype(np.float32)
    with pytest.raises(CompilationError, match="invalid operands of type") as info:
        bitwise_on_floats[(1,)](x, np.zeros(8, np.float32))
    assert "x | x" in str(info.value)


def test_mixed_signedness_division_says_different_signedness(backend):
    x = np.random.default_rng().integers(1, 100, 8).astype(np.int16)
    y = np.random.default_rng().integers(1, 100, 8).astype(np.uint8)
    with pytest.raises(CompilationError,
                       match="Cannot use .* because they have different signedness"):
        mixed_sign_division[(1,)](x, y, np.zeros(8, np.int16))
