"""Python numbers meeting narrow tiles, as Triton 3.6 types them: tl.minimum/maximum/clamp turn
the number into an int32/fp32 tensor first (and bf16 into fp32), so the result is promoted;
binary operators keep the tile's dtype but reject numbers that do not fit it."""
import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def min_then_add(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.minimum(x, -2) + y)


@wb.jit
def max_neg_one(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs), -1))


@wb.jit
def max_half_times(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs), 0.5) * 1000.0)


@wb.jit
def clamp_log2(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.log2(tl.clamp(tl.load(x_ptr + offs), 1.0, 60000.0)))


@wb.jit
def branch_types(x_ptr, out_ptr, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if flag > 0:
        v = tl.maximum(x, -3)
    else:
        v = x.to(tl.int32) * 2
    tl.store(out_ptr + offs, v)


def _ttir_op_line(kernel, op, *sig, **consts):
    text = wb.compile(kernel, *sig, target="cpu", **consts).asm["ttir"]
    return next(line for line in text.splitlines() if op in line)


def test_minimum_int8_with_number_is_int32(backend, rng):
    x = rng.integers(-128, 128, 64).astype(np.int8)
    y = rng.integers(-128, 128, 64).astype(np.int8)
    out = np.zeros(64, np.int32)
    launch(backend, min_then_add, (1,), x, y, out, BLOCK=64)
    want = np.minimum(x.astype(np.int32), -2) + y.astype(np.int32)
    np.testing.assert_array_equal(out, want)
    assert want.min() < -128  # the int8 computation would have wrapped here
    assert "tensor<64xi32>" in _ttir_op_line(min_then_add, "arith.minsi", "*i8", "*i8", "*i32",
                                             BLOCK=64)


def test_maximum_uint8_with_minus_one_keeps_input(backend, rng):
    x = rng.integers(0, 256, 64).astype(np.uint8)
    out = np.zeros(64, np.int32)
    launch(backend, max_neg_one, (1,), x, out, BLOCK=64)
    np.testing.assert_array_equal(out, x.astype(np.int32))
    assert "tensor<64xi32>" in _ttir_op_line(max_neg_one, "arith.maxsi", "*u8", "*i32",
                                             BLOCK=64)


@pytest.mark.parametrize("dtype,short", [(np.float16, "*fp16"), ("bf16", "*bf16")])
def test_maximum_half_with_float_computes_in_fp32(backend, rng, dtype, short):
    vals = rng.uniform(-200.0, 200.0, 64).astype(np.float32)
    if dtype == "bf16":
        ml_dtypes = pytest.importorskip("ml_dtypes", reason="bf16 numpy arrays need ml_dtypes")
        x = vals.astype(ml_dtypes.bfloat16)
    else:
        x = vals.astype(np.float16)
    vals = x.astype(np.float32)
    out = np.zeros(64, np.float32)
    launch(backend, max_half_times, (1,), x, out, BLOCK=64)
    want = np.maximum(vals, np.float32(0.5)) * np.float32(1000.0)
    assert np.isfinite(out).all() and out.max() > 65504.0  # past fp16's range
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert "tensor<64xf32>" in _ttir_op_line(max_half_times, "arith.maxnumf", short, "*fp32",
                                             BLOCK=64)


def test_bf16_min_max_clamp_are_fp32_in_ttir():
    assert "tensor<64xf32>" in _ttir_op_line(max_half_times, "arith.maxnumf", "*bf16", "*fp32",
                                             BLOCK=64)
    assert "tensor<64xf32>" in _ttir_op_line(clamp_log2, "tt.clampf", "*bf16", "*fp32",
                                             BLOCK=64)


def test_clamp_fp16_with_numbers_feeds_fp32_math(backend, rng):
    x = rng.uniform(-10.0, 65000.0, 64).astype(np.float16)
    out = np.zeros(64, np.float32)
    launch(backend, clamp_log2, (1,), x, out, BLOCK=64)
    want = np.log2(np.clip(x.astype(np.float32), 1.0, 60000.0))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert "tensor<64xf32>" in _ttir_op_line(clamp_log2, "tt.clampf", "*fp16", "*fp32",
                                             BLOCK=64)


@pytest.mark.parametrize("flag", [1, 0])
def test_branches_agree_on_promoted_type(backend, rng, flag):
    x = rng.integers(-128, 128, 32).astype(np.int8)
    out = np.zeros(32, np.int32)
    launch(backend, branch_types, (1,), x, out, flag, BLOCK=32)
    x32 = x.astype(np.int32)
    np.testing.assert_array_equal(out, np.maximum(x32, -3) if flag else x32 * 2)


@wb.jit
def plus_minus_one(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + -1)


@wb.jit
def plus_300(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 300)


@pytest.mark.parametrize("kernel,dtype,phrase", [
    (plus_minus_one, np.uint8, "negative scalar -1"),
    (plus_300, np.int8, "scalar 300 is out of range for type int8"),
    (plus_300, np.uint8, "scalar 300 is out of range for type uint8"),
])
def test_scalar_out_of_range_is_an_error_at_the_users_line(backend, kernel, dtype, phrase):
    x = np.zeros(16, dtype)
    out = np.zeros(16, dtype)
    with pytest.raises(CompilationError) as info:
        launch(backend, kernel, (1,), x, out, BLOCK=16)
    msg = str(info.value)
    assert phrase in msg
    assert "tl.store(out_ptr + offs, tl.load(x_ptr + offs) +" in msg and "^" in msg
    assert "test_scalar_promotion.py:" in msg


def test_scalar_in_range_of_wider_tile_is_accepted(backend, rng):
    x = rng.integers(-1000, 1000, 16).astype(np.int16)
    out = np.zeros(16, np.int16)
    launch(backend, plus_300, (1,), x, out, BLOCK=16)
    np.testing.assert_array_equal(out, x + np.int16(300))
