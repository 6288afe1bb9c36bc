"""An int argument that fits neither int64 nor uint64 (or its annotated type) is refused at
launch with an error that is both a LaunchError and an OverflowError (Triton raises
OverflowError); the range's edges themselves pass."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import ArgumentOverflowError, LaunchError


@wb.jit
def store_half(out_ptr, value):
    tl.store(out_ptr, (value // 2).to(tl.float64))


@pytest.mark.parametrize("value", [2**64 - 1, -2**63, 2**63, 2**62 + 12345])
def test_edges_of_the_int_ranges_launch(value):
    rng = np.random.default_rng()
    out = np.full(1, rng.standard_normal(), np.float64)
    store_half[(1,)](out, value)
    assert out[0] == float(value // 2)


@pytest.mark.parametrize("value", [2**64, -2**63 - 1, 2**70, -2**65])
def test_out_of_range_ints_raise_overflow(value):
    out = np.zeros(1, np.float64)
    with pytest.raises(OverflowError) as info:
        store_half[(1,)](out, value)
    assert isinstance(info.value, LaunchError)
    assert isinstance(info.value, ArgumentOverflowError)
    assert "value" in str(info.value) and "int64 or uint64" in str(info.value)


@wb.jit
def _bool_param(x_ptr, v: "tl.uint1"):
    tl.store(x_ptr + v, v)


@pytest.mark.parametrize("value", [0, 1, 2, 3, np.int64(5)])
def test_an_int_for_a_bool_parameter_passes_its_low_bit(backend, value):
    # Triton spells the 1-bit type bool, int1, uint1, i1 or u1; its launcher passes the low bit
    x = np.zeros(2, np.float32)
    k = _bool_param[(1,)](x, value)
    bit = int(value) & 1
    assert x.tolist() == [0.0, float(bit)]
    assert "%v: i1" in k.asm["ttir"] and "arith.extui %v" in k.asm["ttir"]
