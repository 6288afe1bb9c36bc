"""CPU backend elementwise ops beyond arith: tt.extern_elementwise (libdevice names),
tt.fp_to_fp rounding, tt.clampf, tt.precise_sqrt/precise_divf, tt.mulhiui, tt.bitcast and
math.* — each compared with numpy and with the interpreter (the reference semantics) on fresh
random inputs, outputs poisoned."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.ir_kit import K, ptr, run
from workbench.backends.interpreter import InterpreterBackend
from workbench.config import CompileContext, Options, Target
from workbench.errors import UnsupportedError
from workbench.ir.types import TensorType, bf16, f16, f32, f64, i32, i64

rng = np.random.default_rng()
N = 256
NP = {f16: np.float16, f32: np.float32, f64: np.float64, i32: np.int32, i64: np.int64,
      bf16: np.uint16}


def elementwise(in_types, out_t, build):
    """A kernel loading one tile per input type, ``build(k, *tiles) -> tile``, storing it."""
    params = [(f"x{i}", ptr(t)) for i, t in enumerate(in_types)] + [("o", ptr(out_t))]
    k = K("ew", params)
    r = k.arange(0, N)
    xs = [k.load(k.addptr(p, r)) for p in k.args[:-1]]
    k.store(k.addptr(k.args[-1], r), build(k, *xs))
    return k.ret()


def both(k, out_t, *inputs):
    """(cpu output, interpreter output) of kernel ``k`` on ``inputs``."""
    outs = []
    cpu = k.compile()
    interp = InterpreterBackend(Target.parse("interpreter")).compile(
        k.module, None, Options(), CompileContext())
    for res in (cpu, interp):
        o = np.full(N, 0x7FC1 if out_t == bf16 else -1, NP[out_t])
        if NP[out_t] in (np.float16, np.float32, np.float64):
            o[:] = np.nan
        run(res, 1, *inputs, o)
        outs.append(o)
    return outs


def extern(sym, out_t):
    def build(k, *xs):
        return k.op("tt.extern_elementwise", list(xs), TensorType((N,), out_t), symbol=sym,
                    libname="libdevice", libpath="", pure=True)
    return build


FLOAT_CASES = [
    ("__nv_powf", 2, lambda a, b: np.power(np.abs(a), b)),
    ("__nv_log1pf", 1, lambda a: np.log1p(np.abs(a))),
    ("__nv_expm1f", 1, np.expm1),
    ("__nv_tanhf", 1, np.tanh),
    ("__nv_tanf", 1, np.tan),
    ("__nv_atan2f", 2, np.arctan2),
    ("__nv_hypotf", 2, np.hypot),
    ("__nv_rsqrtf", 1, lambda a: 1 / np.sqrt(np.abs(a))),
    ("__nv_cbrtf", 1, np.cbrt),
    ("__nv_erff", 1, np.vectorize(math.erf)),
    ("__nv_erfcf", 1, np.vectorize(math.erfc)),
    ("__nv_sinpif", 1, lambda a: np.sin(np.pi * a)),
    ("__nv_fdimf", 2, lambda a, b: np.where(a > b, a - b, 0)),
    ("__nv_fmodf", 2, np.fmod),
    ("__nv_floorf", 1, np.floor),
    ("__nv_roundf", 1, lambda a: np.trunc(a + np.copysign(0.5, a))),
    ("__nv_fmaxf", 2, np.fmax),
    ("__nv_copysignf", 2, np.copysign),
    ("__nv_exp10f", 1, lambda a: 10.0 ** a),
    ("__nv_asinhf", 1, np.arcsinh),
    ("__nv_fast_expf", 1, np.exp),
    ("__nv_saturatef", 1, lambda a: np.clip(a, 0, 1)),
    ("__nv_pow", 2, lambda a, b: np.power(np.abs(a), b)),  # double spelling
]


F64_CASES = [c for c in FLOAT_CASES if c[0] in ("__nv_pow", "__nv_tanhf", "__nv_atan2f",
                                                 "__nv_erff", "__nv_rsqrtf")]


@pytest.mark.parametrize("sym,nargs,ref,t", [c + (f32,) for c in FLOAT_CASES] +
                         [c + (f64,) for c in F64_CASES],
                         ids=[c[0] for c in FLOAT_CASES] + [c[0] + "-f64" for c in F64_CASES])
def test_extern_float_functions(sym, nargs, ref, t):
    xs = [rng.standard_normal(N).astype(NP[t]) * 2 for _ in range(nargs)]
    pre = [np.abs(x) if ("pow" in sym or "log1p" in sym or "rsqrt" in sym) and i == 0 else x
           for i, x in enumerate(xs)]

    def build(k, *tiles):
        tiles = list(tiles)
        if "pow" in sym or "log1p" in sym or "rsqrt" in sym:
            tiles[0] = k.op("math.absf", [tiles[0]], tiles[0].type)
        return extern(sym, t)(k, *tiles)
    cpu, ref_interp = both(elementwise([t] * nargs, t, build), t, *xs)
    want = ref(*[p.astype(np.float64) for p in pre]) if "pow" not in sym else ref(*xs)
    tol = 1e-6 if t == f32 else 1e-12
    np.testing.assert_allclose(cpu, ref_interp, rtol=tol, atol=tol)
    np.testing.assert_allclose(cpu, np.asarray(want, np.float64).astype(NP[t]), rtol=4 * tol,
                               atol=4 * tol)


def test_extern_predicates_ldexp_and_f16():
    x = rng.standard_normal(N).astype(np.float32)
    x[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, -1.0]
    for sym, ref in (("__nv_isnanf", np.isnan), ("__nv_isinff", np.isinf),
                     ("__nv_finitef", np.isfinite), ("__nv_signbitf", np.signbit)):
        cpu, ip = both(elementwise([f32], i32, extern(sym, i32)), i32, x)
        np.testing.assert_array_equal(cpu, ip)
        np.testing.assert_array_equal(cpu != 0, ref(x))
    e = rng.integers(-10, 10, N).astype(np.int32)
    cpu, ip = both(elementwise([f32, i32], f32, extern("__nv_ldexpf", f32)), f32, x, e)
    np.testing.assert_array_equal(cpu, np.ldexp(x, e))
    h = rng.standard_normal(N).astype(np.float16)
    cpu, ip = both(elementwise([f16], f16, extern("__nv_expf", f16)), f16, h)
    np.testing.assert_array_equal(cpu, ip)


INT_CASES = [("__nv_popc", 1, lambda a: np.bitwise_count(a.view(np.uint32))),
             ("__nv_clz", 1, None), ("__nv_brev", 1, None), ("__nv_abs", 1, np.abs),
             ("__nv_umin", 2, lambda a, b: np.minimum(a.view(np.uint32), b.view(np.uint32))),
             ("__nv_max", 2, np.maximum)]


@pytest.mark.parametrize("sym,nargs,ref", INT_CASES, ids=[c[0] for c in INT_CASES])
def test_extern_int_functions(sym, nargs, ref):
    xs = [rng.integers(-2 ** 31, 2 ** 31 - 1, N).astype(np.int32) for _ in range(nargs)]
    xs[0][:3] = [0, -1, -2 ** 31]
    cpu, ip = both(elementwise([i32] * nargs, i32, extern(sym, i32)), i32, *xs)
    np.testing.assert_array_equal(cpu, ip)
    if ref is not None:
        np.testing.assert_array_equal(cpu, np.asarray(ref(*xs)).astype(np.int32))
    if sym == "__nv_clz":
        u = xs[0].view(np.uint32)
        np.testing.assert_array_equal(cpu, [32 - int(v).bit_length() for v in u])


def test_extern_unknown_symbol_is_a_compile_error():
    with pytest.raises(UnsupportedError, match="__nv_nosuchf"):
        elementwise([f32], f32, extern("__nv_nosuchf", f32)).compile()


@pytest.mark.parametrize("src,dst", [(f32, f16), (f32, bf16), (f64, f32), (f64, f16),
                                     (f64, bf16)])
@pytest.mark.parametrize("rounding", ["rtz", "rtne"])
def test_fp_to_fp_rounding_matches_interpreter(src, dst, rounding):
    x = (rng.standard_normal(N) * 10.0 ** rng.integers(-6, 6, N)).astype(NP[src])
    x[:8] = [np.nan, np.inf, -np.inf, 1e30, -1e30, 65519.0, -65521.0, 1e-40]
    if src == f64:  # just above an f16 tie: rounding through f32 first would go down
        x[8:10] = [1 + 2 ** -11 + 2 ** -40, -(1 + 2 ** -11 + 2 ** -40)]

    def build(k, v):
        return k.op("tt.fp_to_fp", [v], TensorType((N,), dst), rounding=rounding)
    cpu, ip = both(elementwise([src], dst, build), dst, x)
    np.testing.assert_array_equal(cpu.view(np.uint8), ip.view(np.uint8))
    if dst == f16:
        if rounding == "rtz":
            fin = np.isfinite(x)
            assert (np.abs(cpu[fin].astype(np.float64)) <= np.abs(x[fin])).all()
        else:
            with np.errstate(over="ignore"):
                np.testing.assert_array_equal(cpu, x.astype(np.float16))


@pytest.mark.parametrize("prop", ["none", "all"])
def test_clampf_nan_modes(prop):
    x = rng.standard_normal(N).astype(np.float32) * 3
    x[:4] = np.nan
    lo, hi = np.full(N, -1.0, np.float32), np.full(N, 1.5, np.float32)

    def build(k, v, a, b):
        return k.op("tt.clampf", [v, a, b], v.type, propagateNan=prop)
    cpu, ip = both(elementwise([f32] * 3, f32, build), f32, x, lo, hi)
    np.testing.assert_array_equal(cpu, ip)
    ref = np.clip(x, lo, hi) if prop == "all" else np.fmin(np.fmax(x, lo), hi)
    np.testing.assert_array_equal(cpu, ref)


def test_precise_sqrt_divf_mulhi_bitcast_and_math():
    x = np.abs(rng.standard_normal(N)).astype(np.float32) + 0.1
    y = rng.standard_normal(N).astype(np.float32)
    t = TensorType((N,), f32)
    cases = [
        (lambda k, a, b: k.op("tt.precise_sqrt", [a], t), np.sqrt(x)),
        (lambda k, a, b: k.op("tt.precise_divf", [a, b], t), x / y),
        (lambda k, a, b: k.op("math.fma", [a, b, b], t),
         (x.astype(np.float64) * y + y).astype(np.float32)),
        (lambda k, a, b: k.op("math.floor", [b], t), np.floor(y)),
        (lambda k, a, b: k.op("math.ceil", [b], t), np.ceil(y)),
    ]
    for build, ref in cases:
        cpu, ip = both(elementwise([f32, f32], f32, build), f32, x, y)
        np.testing.assert_array_equal(cpu, ref)
        np.testing.assert_array_equal(cpu, ip)
    for name, f in (("math.sin", np.sin), ("math.cos", np.cos), ("math.tanh", np.tanh),
                    ("math.erf", np.vectorize(math.erf))):
        cpu, ip = both(elementwise([f32], f32, lambda k, a, name=name: k.op(name, [a], t)), f32,
                       y)
        np.testing.assert_allclose(cpu, f(y.astype(np.float64)), rtol=2e-6, atol=2e-7)
    bits = both(elementwise([f32], i32, lambda k, a: k.op("tt.bitcast", [a],
                                                          TensorType((N,), i32))), i32, y)[0]
    np.testing.assert_array_equal(bits, y.view(np.int32))
    for it, np_t in ((i32, np.uint32), (i64, np.uint64)):
        a = rng.integers(-2 ** 62, 2 ** 62, N).astype(np.int64).astype(NP[it])
        b = rng.integers(-2 ** 62, 2 ** 62, N).astype(np.int64).astype(NP[it])
        cpu, ip = both(elementwise([it, it], it, lambda k, p, q: k.op("tt.mulhiui", [p, q],
                                                                      p.type)), it, a, b)
        w = np_t(0).itemsize * 8
        ref = [(int(u) * int(v)) >> w for u, v in zip(a.view(np_t), b.view(np_t), strict=True)]
        np.testing.assert_array_equal(cpu.view(np_t), np.array(ref, dtype=np_t))
        np.testing.assert_array_equal(cpu, ip)
