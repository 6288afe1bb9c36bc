"""A right shift is arithmetic when the left operand is signed and logical when it is
unsigned, whatever type the operands promote to (Triton's ``tensor.__rshift__``)."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


@wb.jit
def shr(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x >> y, mask=mask)


@pytest.mark.parametrize("xt, yt, zt", [
    (np.int8, np.uint32, np.int32),     # signed left: arithmetic, in 32 bits
    (np.int16, np.uint64, np.int64),
    (np.uint32, np.int8, np.uint32),    # unsigned left: logical
    (np.uint8, np.int64, np.uint64),
])
def test_right_shift_kind_follows_the_left_operand(backend, xt, yt, zt):
    rng = np.random.default_rng()
    n = 257
    info = np.iinfo(xt)
    x = rng.integers(info.min, info.max, n, endpoint=True).astype(xt)
    bits = 8 * max(np.dtype(xt).itemsize, np.dtype(yt).itemsize)
    y = rng.integers(0, bits, n).astype(yt)
    out = np.zeros(n, dtype=zt)
    shr[(3,)](x, y, out, n, BLOCK=128)
    expected = x.astype(zt) >> y.astype(zt)
    np.testing.assert_array_equal(out, expected)
