"""A Python number in a kernel used as a tensor (``acc = 0; acc.to(tl.int64)``,
``value = 1; value.dtype``) becomes a scalar tensor, as Triton makes it: int -> int32,
float -> float32."""
import numpy as np

import workbench as wb
import workbench.language as tl


@wb.jit
def wide_sum(out_ptr, lo, hi, big):
    acc = 0
    acc = acc.to(tl.int64)
    for i in range(lo, hi):
        acc += big + i
    tl.store(out_ptr, acc)


def test_to_on_a_python_int_widens_the_accumulator(backend):
    rng = np.random.default_rng()
    lo = int(rng.integers(0, 10))
    hi = lo + int(rng.integers(3, 9))
    big = int(rng.integers(2**30, 2**31 - 1))
    out = np.zeros(1, dtype=np.int64)
    wide_sum[(1,)](out, lo, hi, big)
    assert out[0] == sum(big + i for i in range(lo, hi))  # past int32: the sum is int64


@wb.jit
def fill_like_literals(ints_ptr, floats_ptr, BLOCK: tl.constexpr):
    one = 1
    half = 0.5
    offs = tl.arange(0, BLOCK)
    tl.store(ints_ptr + offs, tl.full([BLOCK], one, dtype=one.dtype))
    tl.store(floats_ptr + offs, tl.full([BLOCK], half, dtype=half.dtype) * 3)


def test_dtype_of_python_literals(backend):
    ints = np.zeros(16, dtype=np.int32)
    floats = np.zeros(16, dtype=np.float32)
    fill_like_literals[(1,)](ints, floats, BLOCK=16)
    np.testing.assert_array_equal(ints, np.ones(16, np.int32))
    np.testing.assert_array_equal(floats, np.full(16, 1.5, np.float32))
