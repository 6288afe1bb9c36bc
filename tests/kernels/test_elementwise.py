"""End-to-end 1-D kernels against numpy on every backend: fresh random inputs, poisoned outputs.
"""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


@pytest.fixture
def rng():
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


def poisoned(n, dtype, pad=0):
    """An output buffer of ``n + pad`` elements full of a poison value (NaN or a sentinel)."""
    dtype = np.dtype(dtype)
    fill = np.nan if dtype.kind == "f" else (-77 if dtype.kind == "i" else 77)
    return np.full(n + pad, fill, dtype=dtype)


@wb.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@pytest.mark.parametrize("n, block, dtype", [
    (1000, 128, np.float32), (1024, 256, np.float32), (4099, 512, np.float32),
    (37, 16, np.float64), (777, 64, np.int32), (300, 128, np.float16), (1, 64, np.float32),
])
def test_vector_add_tail_mask(backend, rng, n, block, dtype):
    x = rng.standard_normal(n).astype(dtype) if np.dtype(dtype).kind == "f" \
        else rng.integers(-1000, 1000, n).astype(dtype)
    y = (rng.standard_normal(n) * 10).astype(dtype) if np.dtype(dtype).kind == "f" \
        else rng.integers(-1000, 1000, n).astype(dtype)
    buf = poisoned(n, dtype, pad=40)
    out = buf[:n]
    k = add_kernel[(wb.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    np.testing.assert_array_equal(out, x + y)
    assert np.isnan(buf[n:]).all() if buf.dtype.kind == "f" else (buf[n:] == -77).all()
    assert k.name == "add_kernel"


def test_n_smaller_than_block(backend, rng):
    n = 5
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = poisoned(n, np.float32)
    add_kernel[lambda meta: (wb.cdiv(meta["n"], meta["BLOCK"]),)](x, y, out, n, BLOCK=1024)
    np.testing.assert_array_equal(out, x + y)


def test_empty_grid_runs_nothing(backend, rng):
    x = rng.standard_normal(8).astype(np.float32)
    out = poisoned(8, np.float32)
    k = add_kernel[(0,)](x, x, out, 8, BLOCK=8)
    assert isinstance(k, wb.CompiledKernel)
    assert np.isnan(out).all()


@wb.jit
def promote_kernel(a8_ptr, b8_ptr, u8_ptr, h_ptr, i16_ptr, i32_ptr, u32_ptr,
                   o_i8sum, o_u8inc, o_hsum, o_i16f, o_mixed, o_div, o_h2, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a8 = tl.load(a8_ptr + offs, mask=m)
    b8 = tl.load(b8_ptr + offs, mask=m)
    u8 = tl.load(u8_ptr + offs, mask=m)
    h = tl.load(h_ptr + offs, mask=m)
    i16 = tl.load(i16_ptr + offs, mask=m)
    i32 = tl.load(i32_ptr + offs, mask=m)
    u32 = tl.load(u32_ptr + offs, mask=m)
    tl.store(o_i8sum + offs, a8 + b8, mask=m)        # int8 + int8 wraps in int8
    tl.store(o_u8inc + offs, u8 + 1, mask=m)         # uint8 tensor + python int -> uint8
    tl.store(o_hsum + offs, h + h * 2.0, mask=m)     # fp16 stays fp16
    tl.store(o_i16f + offs, i16 * 0.5, mask=m)       # int16 * float scalar -> fp32
    tl.store(o_mixed + offs, i32 + u32, mask=m)      # int32 + uint32 -> uint32
    tl.store(o_div + offs, i32 / i16, mask=m)        # int / int -> fp32
    tl.store(o_h2 + offs, h.to(tl.float32) + i32, mask=m)  # fp32 + int32 -> fp32


def test_promotions(backend, rng):
    n, block = 300, 128
    a8 = rng.integers(-128, 128, n).astype(np.int8)
    b8 = rng.integers(-128, 128, n).astype(np.int8)
    u8 = rng.integers(0, 256, n).astype(np.uint8)
    u8[:3] = 255
    h = rng.uniform(-300, 300, n).astype(np.float16)
    i16 = rng.integers(1, 3000, n).astype(np.int16) * rng.choice([-1, 1], n).astype(np.int16)
    i32 = rng.integers(-2 ** 20, 2 ** 20, n).astype(np.int32)
    u32 = rng.integers(0, 2 ** 31, n).astype(np.uint32)
    outs = [poisoned(n, np.int32), poisoned(n, np.int32), poisoned(n, np.float32),
            poisoned(n, np.float32), poisoned(n, np.int64), poisoned(n, np.float32),
            poisoned(n, np.float32)]
    promote_kernel[(wb.cdiv(n, block),)](a8, b8, u8, h, i16, i32, u32, *outs, n, BLOCK=block)
    np.testing.assert_array_equal(outs[0], (a8 + b8).astype(np.int32))
    np.testing.assert_array_equal(outs[1], (u8 + np.uint8(1)).astype(np.int32))
    assert outs[1][0] == 0
    np.testing.assert_array_equal(outs[2], (h + h * np.float16(2.0)).astype(np.float32))
    np.testing.assert_allclose(outs[3], i16.astype(np.float32) * np.float32(0.5), rtol=0)
    np.testing.assert_array_equal(outs[4], (i32.astype(np.uint32) + u32).astype(np.int64))
    np.testing.assert_allclose(outs[5], i32.astype(np.float32) / i16.astype(np.float32),
                               rtol=1e-6)
    np.testing.assert_allclose(outs[6], h.astype(np.float32) + i32.astype(np.float32), rtol=0)


@wb.jit
def cast_kernel(x_ptr, to_i32, to_f16, to_u8, to_bool, back_f64, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(to_i32 + offs, x.to(tl.int32), mask=m)
    tl.store(to_f16 + offs, x.to(tl.float16), mask=m)
    tl.store(to_u8 + offs, tl.abs(x).to(tl.uint8), mask=m)
    tl.store(to_bool + offs, (x > 0.0).to(tl.int8), mask=m)
    tl.store(back_f64 + offs, x.to(tl.int32).to(tl.float64) * 2, mask=m)


def test_casts(backend, rng):
    n = 200
    x = rng.uniform(-250, 250, n).astype(np.float32)
    outs = [poisoned(n, np.int32), poisoned(n, np.float16), poisoned(n, np.uint8),
            poisoned(n, np.int8), poisoned(n, np.float64)]
    cast_kernel[(wb.cdiv(n, 64),)](x, *outs, n, BLOCK=64)
    np.testing.assert_array_equal(outs[0], np.trunc(x).astype(np.int32))  # toward zero
    np.testing.assert_array_equal(outs[1], x.astype(np.float16))
    np.testing.assert_array_equal(outs[2], np.trunc(np.abs(x)).astype(np.uint8))
    np.testing.assert_array_equal(outs[3], (x > 0).astype(np.int8))
    np.testing.assert_array_equal(outs[4], np.trunc(x).astype(np.float64) * 2)


@wb.jit
def divmod_kernel(a_ptr, b_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m, other=1)
    b = tl.load(b_ptr + offs, mask=m, other=1)
    tl.store(q_ptr + offs, a // b, mask=m)
    tl.store(r_ptr + offs, a % b, mask=m)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8])
def test_int_div_mod_c_semantics(backend, rng, dtype):
    n = 500
    hi = np.iinfo(dtype).max
    a = rng.integers(-hi, hi, n).astype(dtype)
    b = rng.integers(1, min(hi, 1000), n).astype(dtype) * rng.choice([-1, 1], n).astype(dtype)
    a[:4] = [-7, 7, -7, 7]
    b[:4] = [2, -2, -2, 2]
    q, r = poisoned(n, dtype), poisoned(n, dtype)
    divmod_kernel[(wb.cdiv(n, 128),)](a, b, q, r, n, BLOCK=128)
    qa = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    want_q = (np.sign(a.astype(np.int64)) * np.sign(b.astype(np.int64)) * qa).astype(dtype)
    want_r = (a.astype(np.int64) - b.astype(np.int64) * want_q).astype(dtype)
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(r, want_r)
    assert list(q[:4]) == [-3, -3, 3, 3] and list(r[:4]) == [-1, 1, -1, 1]


@wb.jit
def math_kernel(x_ptr, y_ptr, o_where, o_min, o_max, o_exp, o_log, o_sqrt, o_rsqrt, o_abs,
                o_sig, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    y = tl.load(y_ptr + offs, mask=m, other=1.0)
    ax = tl.abs(x) + 0.5
    tl.store(o_where + offs, tl.where(x > y, x, y * 3.0), mask=m)
    tl.store(o_min + offs, tl.minimum(x, y), mask=m)
    tl.store(o_max + offs, tl.maximum(x, y), mask=m)
    tl.store(o_exp + offs, tl.exp(x), mask=m)
    tl.store(o_log + offs, tl.log(ax), mask=m)
    tl.store(o_sqrt + offs, tl.sqrt(ax), mask=m)
    tl.store(o_rsqrt + offs, tl.rsqrt(ax), mask=m)
    tl.store(o_abs + offs, tl.abs(x), mask=m)
    tl.store(o_sig + offs, tl.sigmoid(x), mask=m)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_math_functions(backend, rng, dtype):
    n = 333
    x = (rng.standard_normal(n) * 4).astype(dtype)
    y = (rng.standard_normal(n) * 4).astype(dtype)
    outs = [poisoned(n, dtype) for _ in range(9)]
    math_kernel[(wb.cdiv(n, 64),)](x, y, *outs, n, BLOCK=64)
    ax = np.abs(x) + dtype(0.5)
    tol = dict(rtol=2e-6 if dtype == np.float32 else 1e-13, atol=0)
    np.testing.assert_array_equal(outs[0], np.where(x > y, x, y * dtype(3.0)))
    np.testing.assert_array_equal(outs[1], np.minimum(x, y))
    np.testing.assert_array_equal(outs[2], np.maximum(x, y))
    np.testing.assert_allclose(outs[3], np.exp(x), **tol)
    np.testing.assert_allclose(outs[4], np.log(ax), **tol)
    np.testing.assert_allclose(outs[5], np.sqrt(ax), **tol)
    np.testing.assert_allclose(outs[6], 1 / np.sqrt(ax), **tol)
    np.testing.assert_array_equal(outs[7], np.abs(x))
    np.testing.assert_allclose(outs[8], 1 / (1 + np.exp(-x)), **tol)


def test_bfloat16_arrays_via_ml_dtypes(backend):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng()
    n = 200
    x = rng.standard_normal(n).astype(ml_dtypes.bfloat16)
    y = rng.standard_normal(n).astype(ml_dtypes.bfloat16)
    out = np.full(n, np.nan, np.float32)
    k = add_kernel[(wb.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
    assert k.spec.args[0].type == "*bf16"
    # bf16 + bf16 -> bf16, stored into fp32
    want = (x.astype(np.float32) + y.astype(np.float32)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out, want.astype(np.float32))
