"""Interpreter semantics on hand-built ttir: C integer division, wrap-around, signedness from
the op, casts (fp16, bf16 round-to-nearest-even, rtz), NaN behaviour of max/min, extern math."""
from __future__ import annotations

import numpy as np
import pytest

from tests.ir_kit import K, poisoned, ptr
from workbench.backends.interp.dtypes import bf16_to_f32, f32_to_bf16
from workbench.ir.types import TensorType, bf16, f16, f32, f64, i1, i8, i16, i32, i64

N = 64


def unary_kernel(tin, tout, build):
    """o[i] = build(k, x[i]) over one program of N lanes."""
    k = K("u", [("x", ptr(tin)), ("o", ptr(tout))])
    x, o = k.args
    r = k.arange(0, N)
    k.store(k.addptr(o, r), build(k, k.load(k.addptr(x, r))))
    return k


def binary_kernel(t, tout, build):
    k = K("b", [("x", ptr(t)), ("y", ptr(t)), ("o", ptr(tout))])
    x, y, o = k.args
    r = k.arange(0, N)
    k.store(k.addptr(o, r), build(k, k.load(k.addptr(x, r)), k.load(k.addptr(y, r))))
    return k


def c_div(a, b):
    a, b = a.astype(np.int64), b.astype(np.int64)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(np.int32)


INT_CASES = {
    "divsi": lambda a, b: c_div(a, b),
    "remsi": lambda a, b: (a - c_div(a, b).astype(np.int64) * b).astype(np.int32),
    "divui": lambda a, b: (a.view(np.uint32) // b.view(np.uint32)).view(np.int32),
    "remui": lambda a, b: (a.view(np.uint32) % b.view(np.uint32)).view(np.int32),
    "maxsi": np.maximum,
    "maxui": lambda a, b: np.maximum(a.view(np.uint32), b.view(np.uint32)).view(np.int32),
    "minui": lambda a, b: np.minimum(a.view(np.uint32), b.view(np.uint32)).view(np.int32),
    "muli": lambda a, b: (a.astype(np.int64) * b).astype(np.int32),
    "addi": lambda a, b: (a.astype(np.int64) + b).astype(np.int32),
}


@pytest.mark.parametrize("name", sorted(INT_CASES))
def test_int32_binary_ops_c_semantics_and_wrap(name):
    rng = np.random.default_rng()
    a = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
    a[:4] = [-7, 7, -7, -2**31]
    b[:4] = [2, -2, -2, 3]
    b[b == 0] = 5
    if name in ("divsi", "remsi"):
        b[8:16] = rng.integers(-9, 10, 8)
        b[b == 0] = -3
    out = poisoned(N, np.int32)
    binary_kernel(i32, i32, lambda k, x, y: k.bin("arith." + name, x, y)).interpret((1,), a, b, out)
    np.testing.assert_array_equal(out, INT_CASES[name](a, b))
    if name == "divsi":
        assert out[0] == -3  # -7 // 2 truncates toward zero
    if name == "remsi":
        assert out[0] == -1 and out[1] == 1


@pytest.mark.parametrize("name,ref", [
    ("shrsi", lambda a, s: a >> s),
    ("shrui", lambda a, s: (a.view(np.uint32) >> s.astype(np.uint32)).view(np.int32)),
    ("shli", lambda a, s: (a.astype(np.int64) << s).astype(np.int32))])
def test_shifts_by_op_signedness(name, ref):
    rng = np.random.default_rng()
    a = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
    s = rng.integers(0, 32, N).astype(np.int32)
    out = poisoned(N, np.int32)
    binary_kernel(i32, i32, lambda k, x, y: k.bin("arith." + name, x, y)).interpret((1,), a, s, out)
    np.testing.assert_array_equal(out, ref(a, s))


@pytest.mark.parametrize("pred", ["slt", "ult", "sge", "uge", "eq", "ne"])
def test_cmpi_signed_vs_unsigned(pred):
    rng = np.random.default_rng()
    a = rng.integers(-5, 5, N).astype(np.int32)
    b = rng.integers(-5, 5, N).astype(np.int32)
    out = poisoned(N, np.int8)
    kernel = binary_kernel(i32, i1, lambda k, x, y: k.cmp("arith.cmpi", pred, x, y))
    kernel.interpret((1,), a, b, out)
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    exp = {"slt": a < b, "ult": ua < ub, "sge": a >= b, "uge": ua >= ub, "eq": a == b,
           "ne": a != b}[pred]
    np.testing.assert_array_equal(out, exp.astype(np.int8))


@pytest.mark.parametrize("src,dst,name", [(i8, i32, "extsi"), (i8, i32, "extui"),
                                          (i32, i8, "trunci"), (i16, i64, "extsi"),
                                          (i32, i16, "trunci")])
def test_int_casts(src, dst, name):
    rng = np.random.default_rng()
    snp = {8: np.int8, 16: np.int16, 32: np.int32}[src.width]
    dnp = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[dst.width]
    info = np.iinfo(snp)
    a = rng.integers(info.min, info.max + 1, N, dtype=np.int64).astype(snp)
    out = poisoned(N, dnp)
    unary_kernel(src, dst, lambda k, x: k.cast("arith." + name, x, dst)).interpret((1,), a, out)
    if name == "extui":
        exp = a.view(np.dtype(f"u{a.itemsize}")).astype(dnp)
    else:
        exp = a.astype(dnp)  # sign extension / wrap-around truncation
    np.testing.assert_array_equal(out, exp)


def test_i8_arithmetic_wraps_at_8_bits():
    a = np.random.randint(-128, 128, N).astype(np.int8)
    b = np.random.randint(-128, 128, N).astype(np.int8)
    out = poisoned(N, np.int8)
    binary_kernel(i8, i8, lambda k, x, y: k.bin("arith.muli", k.bin("arith.addi", x, y), y)
                  ).interpret((1,), a, b, out)
    np.testing.assert_array_equal(out, ((a.astype(np.int64) + b) * b).astype(np.int8))


def test_f32_to_f16_and_bf16_round_to_nearest_even():
    rng = np.random.default_rng()
    x = rng.standard_normal(N).astype(np.float32) * 100
    # exact ties for bf16: low 16 bits 0x8000, with even and odd kept parts
    bits = x.view(np.uint32)
    bits[:8] = (bits[:8] & 0xFFFF0000) | 0x8000
    out16 = poisoned(N, np.float16)
    unary_kernel(f32, f16, lambda k, v: k.cast("arith.truncf", v, f16)).interpret((1,), x, out16)
    np.testing.assert_array_equal(out16, x.astype(np.float16))
    outb = np.zeros(N, np.uint16)
    unary_kernel(f32, bf16, lambda k, v: k.cast("arith.truncf", v, bf16)).interpret((1,), x, outb)
    exp = x.astype(np.float64)
    back = bf16_to_f32(outb).astype(np.float64)
    # nearest: error at most half an ulp of bf16; ties go to an even mantissa
    ulp = np.abs(bf16_to_f32(outb + np.uint16(1)).astype(np.float64) - back)
    assert (np.abs(back - exp) <= ulp / 2).all()
    assert ((outb[:8] & 1) == 0).all()


def test_bf16_arithmetic_rounds_each_op_and_widens_exactly():
    rng = np.random.default_rng()
    a = f32_to_bf16(rng.standard_normal(N).astype(np.float32))
    b = f32_to_bf16(rng.standard_normal(N).astype(np.float32))
    out = np.zeros(N, np.float32)
    binary_kernel(bf16, f32, lambda k, x, y: k.cast("arith.extf", k.bin("arith.mulf", x, y),
                                                     f32)).interpret((1,), a, b, out)
    exp = bf16_to_f32(f32_to_bf16(bf16_to_f32(a) * bf16_to_f32(b)))
    np.testing.assert_array_equal(out, exp)


def test_fp16_math_in_fp16():
    a = np.full(N, 2048, np.float16)
    b = np.ones(N, np.float16)
    b[1::2] = 3
    out = poisoned(N, np.float16)
    binary_kernel(f16, f16, lambda k, x, y: k.bin("arith.addf", x, y)).interpret((1,), a, b, out)
    np.testing.assert_array_equal(out, a + b)  # 2048 + 1 = 2048 in fp16, 2048 + 3 = 2052
    assert out[0] == 2048 and out[1] == 2052


@pytest.mark.parametrize("name,src,dst", [("sitofp", i32, f32), ("uitofp", i32, f32),
                                          ("fptosi", f32, i32), ("sitofp", i64, f16),
                                          ("extf", f16, f64)])
def test_int_float_conversions(name, src, dst):
    rng = np.random.default_rng()
    if src == i32:
        a = rng.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
    elif src == i64:
        a = rng.integers(-60000, 60000, N).astype(np.int64)
    elif src == f32:
        a = (rng.standard_normal(N) * 1e4).astype(np.float32)
    else:
        a = rng.standard_normal(N).astype(np.float16)
    dnp = {f32: np.float32, i32: np.int32, f16: np.float16, f64: np.float64}[dst]
    out = poisoned(N, dnp)
    unary_kernel(src, dst, lambda k, v: k.cast("arith." + name, v, dst)).interpret((1,), a, out)
    if name == "uitofp":
        exp = a.view(np.uint32).astype(np.float32)
    elif name == "fptosi":
        exp = np.trunc(a).astype(np.int32)
    elif src == i64 and dst == f16:
        exp = a.astype(np.float64).astype(np.float16)
    else:
        exp = a.astype(dnp)
    np.testing.assert_array_equal(out, exp)


def test_fp_to_fp_round_toward_zero():
    x = np.random.default_rng().standard_normal(N).astype(np.float32)
    out = poisoned(N, np.float16)
    unary_kernel(f32, f16, lambda k, v: k.op("tt.fp_to_fp", [v], TensorType((N,), f16),
                                             rounding="rtz")).interpret((1,), x, out)
    o64 = out.astype(np.float64)
    assert (np.abs(o64) <= np.abs(x.astype(np.float64))).all()
    nxt = np.nextafter(out, np.copysign(np.float16(np.inf), out)).astype(np.float64)
    assert (np.abs(nxt) > np.abs(x.astype(np.float64))).all()


@pytest.mark.parametrize("name,ref", [("maxnumf", np.fmax), ("maximumf", np.maximum),
                                      ("minnumf", np.fmin), ("minimumf", np.minimum)])
def test_float_max_min_nan_behaviour(name, ref):
    rng = np.random.default_rng()
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    a[::5] = np.nan
    b[::7] = np.nan
    out = np.zeros(N, np.float32)
    binary_kernel(f32, f32, lambda k, x, y: k.bin("arith." + name, x, y)).interpret((1,), a, b, out)
    np.testing.assert_array_equal(out, ref(a, b))


def test_remf_and_divf():
    rng = np.random.default_rng()
    a = (rng.standard_normal(N) * 10).astype(np.float32)
    b = (rng.standard_normal(N) * 3).astype(np.float32)
    out = np.zeros(N, np.float32)
    binary_kernel(f32, f32, lambda k, x, y: k.bin("arith.addf", k.bin("arith.remf", x, y),
                                                  k.bin("arith.divf", x, y))).interpret((1,), a, b,
                                                                                  out)
    np.testing.assert_array_equal(out, np.fmod(a, b) + a / b)


@pytest.mark.parametrize("sym,ref", [("__nv_powf", lambda x: np.power(np.abs(x), 1.5)),
                                     ("__nv_log1pf", lambda x: np.log1p(np.abs(x))),
                                     ("__nv_tanhf", lambda x: np.tanh(np.abs(x)))])
def test_extern_elementwise(sym, ref):
    x = np.random.default_rng().standard_normal(N).astype(np.float32)
    out = np.zeros(N, np.float32)

    def build(k, v):
        t = TensorType((N,), f32)
        av = k.op("math.absf", [v], t)
        ops = [av, k.const(1.5, t)] if "pow" in sym else [av]
        return k.op("tt.extern_elementwise", ops, t, symbol=sym, libname="", libpath="",
                    pure=True)
    unary_kernel(f32, f32, build).interpret((1,), x, out)
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), rtol=1e-6)


def test_math_ops_fp32():
    x = np.abs(np.random.default_rng().standard_normal(N)).astype(np.float32) + 0.1
    out = np.zeros(N, np.float32)
    t = TensorType((N,), f32)

    def build(k, v):
        e = k.op("math.exp", [v], t)
        s = k.op("math.sqrt", [v], t)
        lg = k.op("math.log2", [v], t)
        er = k.op("math.erf", [v], t)
        return k.bin("arith.addf", k.bin("arith.addf", e, s), k.bin("arith.addf", lg, er))
    unary_kernel(f32, f32, build).interpret((1,), x, out)
    import math
    erf = np.array([math.erf(float(v)) for v in x], np.float32)
    np.testing.assert_allclose(out, (np.exp(x) + np.sqrt(x)) + (np.log2(x) + erf), rtol=1e-6)


def test_double_precision_libdevice_predicates():
    """``__nv_isnand`` and friends (the ``d`` spellings the CUDA backend accepts)."""
    import numpy as np

    from workbench.backends.interp.extern import extern_fn
    from workbench.ir.types import f64, i32
    x = np.array([1.5, np.nan, -np.inf, -0.0])
    assert extern_fn("__nv_isnand", [f64], i32)(x).tolist() == [0, 1, 0, 0]
    assert extern_fn("__nv_isinfd", [f64], i32)(x).tolist() == [0, 0, 1, 0]
    assert extern_fn("__nv_isfinited", [f64], i32)(x).tolist() == [1, 0, 0, 1]
    assert extern_fn("__nv_signbitd", [f64], i32)(x).tolist() == [0, 0, 1, 1]
