"""The rest of the language on the CUDA backend: Philox (tt.mulhiui), clamp (tt.clampf),
rtz casts (tt.fp_to_fp), precise sqrt/div, libdevice names (tt.extern_elementwise),
scf.while, argmax/argmin (multi-operand tt.reduce), block pointers with tl.dot.

Every kernel compiles to PTX for sm_80 and sm_90 and ptxas assembles it; ``gpu``-marked tests
compare with numpy / the interpreter (fresh random inputs, poisoned outputs)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from tests.ir_kit import FILE, K, ptr
from workbench.backends import nvidia_tools
from workbench.codegen.nvptx import libdevice, libdevice_more
from workbench.errors import UnsupportedError
from workbench.ir.types import TensorType, f16, f32, f64, i1, i32, i64

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "language"))
from philox_ref import normal, triton_randint4x, uniform  # noqa: E402

PTXAS = nvidia_tools.find_tool("ptxas")


@wb.jit
def random_k(seed, ri, ru, rn, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ri + offs, tl.randint(seed, offs))
    tl.store(ru + offs, tl.rand(seed, offs))
    tl.store(rn + offs, tl.randn(seed, offs))


@wb.jit
def elementwise_k(x_ptr, o_ptr, N: tl.constexpr, OP: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    if OP == "clamp":
        y = tl.clamp(x, -0.5, 0.75)
    elif OP == "clamp_nan":
        y = tl.clamp(x, -0.5, 0.75, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "rtz_f16":
        y = x.to(tl.float16, fp_downcast_rounding="rtz").to(tl.float32)
    elif OP == "rtz_bf16":
        y = x.to(tl.bfloat16, fp_downcast_rounding="rtz").to(tl.float32)
    elif OP == "sqrt_rn":
        y = tl.sqrt_rn(tl.abs(x))
    elif OP == "div_rn":
        y = tl.div_rn(x, x * x + 1.0)
    else:  # umulhi
        u = (x * 1e9).to(tl.int32).to(tl.uint32, bitcast=True)
        y = tl.umulhi(u, u + 12345).to(tl.float32)
    tl.store(o_ptr + r, y)


@wb.jit
def while_k(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    i = 0
    while i < n:  # a tile and a scalar carried through scf.while
        acc += tl.load(x_ptr + i * BLOCK + r)
        i += 1
    tl.store(o_ptr + r, acc)


@wb.jit
def argmax_k(x_ptr, vi, ii, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    a = tl.argmax(x, axis=AXIS)
    b = tl.argmin(x, axis=AXIS)
    L: tl.constexpr = N if AXIS == 0 else M
    tl.store(vi + tl.arange(0, L), a)
    tl.store(ii + tl.arange(0, L), b)


@wb.jit
def bp_matmul_k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    pa = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (0, 0), (BM, BK), (1, 0))
    pb = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, 0), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(pa, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(pb, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b)
        pa = tl.advance(pa, (0, BK))
        pb = tl.advance(pb, (BK, 0))
    pc = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    tl.store(pc, acc, boundary_check=(0, 1))


EW_OPS = ["clamp", "clamp_nan", "rtz_f16", "rtz_bf16", "sqrt_rn", "div_rn", "umulhi"]
KERNELS = {
    "random": lambda t: wb.compile(random_k, "i64", "*u32", "*fp32", "*fp32", BLOCK=128,
                                   target=t),
    "while": lambda t: wb.compile(while_k, "*fp32", "*fp32", "i32", BLOCK=256, target=t),
    "argmax0": lambda t: wb.compile(argmax_k, "*fp32", "*i32", "*i32", M=16, N=64, AXIS=0,
                                    target=t),
    "argmax1": lambda t: wb.compile(argmax_k, "*fp32", "*i32", "*i32", M=16, N=64, AXIS=1,
                                    target=t),
    "bp_matmul": lambda t: wb.compile(bp_matmul_k, "*fp16", "*fp16", "*fp32", "i32", "i32",
                                      "i32", BM=32, BN=32, BK=32, target=t),
    **{f"ew_{op}": (lambda t, op=op: wb.compile(elementwise_k, "*fp32", "*fp32", N=256, OP=op,
                                                  target=t)) for op in EW_OPS},
}


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_ptx_assembles(name, arch):
    c = KERNELS[name](f"cuda:{arch}")
    assert ".entry" in c.asm["ptx"]
    if PTXAS:
        assert "cubin" in c.asm


def test_instructions():
    ptx = KERNELS["random"]("cuda:90").asm["ptx"]
    assert "mul.hi.u32" in ptx
    assert "cvt.rz.f16.f32" in KERNELS["ew_rtz_f16"]("cuda:80").asm["ptx"]
    assert "max.NaN.f32" in KERNELS["ew_clamp_nan"]("cuda:80").asm["ptx"]
    assert "sqrt.rn.f32" in KERNELS["ew_sqrt_rn"]("cuda:80").asm["ptx"]
    assert "div.rn.f32" in KERNELS["ew_div_rn"]("cuda:80").asm["ptx"]


# hand-built ttir: 64-bit mulhi, f64 rtz, extern_elementwise -----------------------------------
N = 256
NP = {f16: np.float16, f32: np.float32, f64: np.float64, i32: np.int32, i64: np.int64,
      i1: np.bool_}


def ew_kernel(in_types, out_t, name, **attrs):
    params = [(f"x{i}", ptr(t)) for i, t in enumerate(in_types)] + [("o", ptr(out_t))]
    k = K("ew", params)
    r = k.arange(0, N)
    xs = [k.load(k.addptr(p, r)) for p in k.args[:-1]]
    k.at(7, 9)
    k.store(k.addptr(k.args[-1], r), k.op(name, xs, TensorType((N,), out_t), **attrs))
    return k.ret()


def extern_kernel(sym, in_types, out_t):
    return ew_kernel(in_types, out_t, "tt.extern_elementwise", symbol=sym, libname="libdevice",
                     libpath="", pure=True)


def _cuda(module, arch=90):
    from workbench.backends.cuda import CudaBackend
    from workbench.config import CompileContext, Options, Target
    return CudaBackend(Target.parse(f"cuda:{arch}")).compile(module, None, Options(),
                                                             CompileContext())


MORE = sorted(libdevice_more.F64_NAMES - {"ldexp", "scalbn", "atan2"})
FLOAT1 = ["sqrt", "sqrt_rn", "rcp", "rsqrt", "floor", "ceil", "trunc", "round", "rint",
          "nearbyint", "fabs", "saturate", "exp", "exp2", "log", "log2", "exp10",
          "log10"] + MORE
FLOAT1_F32 = ["fast_exp", "fast_log", "sin", "cos", "tan", "sinpi", "cospi", "erf"]
FLOAT2 = ["fmax", "fmin", "copysign", "div_rn", "fdiv_rn", "fdim", "atan2"]
APPROX = ("fast_", "sin", "cos", "tan", "erf", "rsqrt", "fma")
INT1 = ["abs", "popc", "clz", "brev"]
INT2 = ["min", "max", "umin", "umax"]


def extern_cases():
    for s in FLOAT1:
        yield f"__nv_{s}f", [f32], f32
        yield f"__nv_{s}", [f64], f64
    for s in FLOAT1_F32:
        yield f"__nv_{s}f", [f32], f32
    for s in FLOAT2:
        yield f"__nv_{s}f", [f32, f32], f32
        if s != "fdiv_rn":  # libdevice's __nv_fdiv_rn is single precision only
            yield f"__nv_{s}", [f64, f64], f64
    yield "__nv_fmaf", [f32] * 3, f32
    yield "__nv_powf", [f32, f32], f32
    yield "__nv_hypotf", [f32, f32], f32
    yield "__nv_ldexpf", [f32, i32], f32
    yield "__nv_scalbn", [f64, i32], f64
    yield "__nv_expf", [f16], f16
    for s in ("isnan", "isinf", "isfinite", "signbit"):
        yield f"__nv_{s}f", [f32], i32
        yield f"__nv_{s}d", [f64], i32
    for s in INT1:
        yield f"__nv_{s}", [i32], i32
        yield f"__nv_{('ll' if s == 'abs' else '')}{s}{'' if s == 'abs' else 'll'}", [i64], \
            (i32 if s in ("popc", "clz") else i64)
    for s in INT2:
        yield f"__nv_{s}", [i32, i32], i32
        yield f"__nv_{'u' if s[0] == 'u' else ''}ll{s.lstrip('u')}", [i64, i64], i64


EXTERN = list(extern_cases())


@pytest.mark.parametrize("sym,ins,out", EXTERN, ids=[f"{s}-{i[0]}" for s, i, _ in EXTERN])
def test_extern_ptx(sym, ins, out):
    assert libdevice.resolve(sym, ins[0] in (f16, f32, f64)) is not None, sym
    res = _cuda(extern_kernel(sym, ins, out).module, 80)
    if PTXAS:
        assert "cubin" in res.extra


def test_extern_unknown_symbol_names_function_and_line():
    # a symbol neither our code nor libdevice defines (lgammaf, once refused here, is now
    # linked from libdevice where one is installed)
    with pytest.raises(UnsupportedError) as e:
        _cuda(extern_kernel("__nv_frobnicatef", [f32], f32).module)
    msg = str(e.value)
    assert "__nv_frobnicatef" in msg and "CUDA backend" in msg
    assert e.value.loc.file == FILE and e.value.loc.line == 7


@pytest.mark.parametrize("arch", [80, 90])
def test_mulhi_u64_and_rtz_from_f64(arch):
    res = _cuda(ew_kernel([i64, i64], i64, "tt.mulhiui").module, arch)
    assert "mul.hi.u64" in res.extra["ptx"]
    res = _cuda(ew_kernel([f64], f32, "tt.fp_to_fp", rounding="rtz").module, arch)
    assert "cvt.rz.f32.f64" in res.extra["ptx"]
    res = _cuda(ew_kernel([f64], f16, "tt.fp_to_fp", rounding="rtz").module, arch)
    assert "cvt.rz.f16.f32" in res.extra["ptx"]


# on the GPU ------------------------------------------------------------------------------------
def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(a)


def _sync():
    from workbench.backends import cuda_driver
    cuda_driver.synchronize()


def _interpret(monkeypatch, kernel, grid, *args, **kw):
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    kernel[grid](*args, **kw)
    monkeypatch.delenv("WORKBENCH_INTERPRET")


@pytest.mark.gpu
@pytest.mark.parametrize("seed", [7, 0x123456789AB])
def test_random_gpu_bit_exact(monkeypatch, seed):
    n, block = 1024, 128
    outs = [np.full(n, 0xDEAD, np.uint32), np.full(n, np.nan, np.float32),
            np.full(n, np.nan, np.float32)]
    devs = [_dev(o) for o in outs]
    random_k[(n // block,)](seed, *devs, BLOCK=block)
    _sync()
    ri, ru, rn = (d.to_numpy() for d in devs)
    _interpret(monkeypatch, random_k, (n // block,), seed, *outs, BLOCK=block)
    np.testing.assert_array_equal(ri, outs[0])
    np.testing.assert_array_equal(ru, outs[1])
    ref = triton_randint4x(seed, np.arange(n, dtype=np.int32))
    np.testing.assert_array_equal(ri, ref[0])
    np.testing.assert_array_equal(ru, uniform(ref[0]))
    # log/cos are .approx instructions on the GPU
    np.testing.assert_allclose(rn, normal(ref[0], ref[1]), rtol=1e-4, atol=2e-5)


@pytest.mark.gpu
@pytest.mark.parametrize("op", EW_OPS)
def test_elementwise_gpu_vs_interpreter(monkeypatch, op):
    x = np.random.default_rng().standard_normal(256).astype(np.float32)
    x[::17] = np.nan
    if op == "umulhi":
        x = np.nan_to_num(x) / 4
    d = _dev(np.full(256, 123.0, np.float32))
    # bit-exact against the interpreter: no mul+add -> fma (div_rn divides by x * x + 1.0)
    elementwise_k[(1,)](_dev(x), d, N=256, OP=op, enable_fp_fusion=False)
    _sync()
    want = np.full(256, -1.0, np.float32)
    _interpret(monkeypatch, elementwise_k, (1,), x, want, N=256, OP=op)
    np.testing.assert_array_equal(d.to_numpy(), want)


@pytest.mark.gpu
def test_while_gpu():
    n, block = 5, 256
    x = np.random.default_rng().standard_normal((n, block)).astype(np.float32)
    d = _dev(np.full(block, np.nan, np.float32))
    while_k[(1,)](_dev(x), d, n, BLOCK=block)
    _sync()
    np.testing.assert_allclose(d.to_numpy(), x.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
@pytest.mark.parametrize("axis", [0, 1])
def test_argmax_argmin_gpu(axis):
    x = np.random.default_rng().integers(-5, 5, (16, 64)).astype(np.float32)  # many ties
    length = x.shape[1 - axis]
    da, db = _dev(np.full(length, -1, np.int32)), _dev(np.full(length, -1, np.int32))
    argmax_k[(1,)](_dev(x), da, db, M=16, N=64, AXIS=axis)
    _sync()
    np.testing.assert_array_equal(da.to_numpy(), np.argmax(x, axis))
    np.testing.assert_array_equal(db.to_numpy(), np.argmin(x, axis))


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(32, 32, 64), (20, 27, 45)])
def test_block_pointer_matmul_gpu(m, n, k):
    rng = np.random.default_rng()
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    dc = _dev(c)
    bp_matmul_k[(1,)](_dev(a), _dev(b), dc, m, n, k, BM=32, BN=32, BK=32)
    _sync()
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(dc.to_numpy(), want, rtol=1e-3, atol=1e-3)


def _run_both(module, inputs, out_t):
    from tests.ir_kit import run
    from workbench.backends import cuda_driver as cd
    from workbench.backends.interpreter import InterpreterBackend
    from workbench.config import CompileContext, Options, Target
    res = _cuda(module)
    devs = [_dev(x) for x in inputs] + [_dev(np.zeros(N, NP[out_t]))]
    res.launcher((1, 1, 1), [d.pointer_arg() for d in devs])
    cd.synchronize()
    ref = np.zeros(N, NP[out_t])
    interp = InterpreterBackend(Target.parse("interpreter")).compile(module, None, Options(),
                                                                     CompileContext())
    run(interp, 1, *inputs, ref)
    return devs[-1].to_numpy(), ref


@pytest.mark.gpu
@pytest.mark.parametrize("sym,ins,out", EXTERN, ids=[f"{s}-{i[0]}" for s, i, _ in EXTERN])
def test_extern_gpu_vs_interpreter(sym, ins, out):
    rng = np.random.default_rng()
    inputs = []
    for t in ins:
        if t in (i32, i64):
            inputs.append(rng.integers(-1000, 1000, N).astype(NP[t]))
        else:
            x = (rng.standard_normal(N) * 3).astype(NP[t])
            x[:4] = [0.0, -0.0, np.inf, np.nan]
            if any(s in sym for s in ("log", "sqrt")):
                x = np.abs(x)
            if "tan" in sym and "tanh" not in sym:  # away from the poles of tan
                x = np.clip(x, -1.4, 1.4)
            inputs.append(x)
    got, want = _run_both(extern_kernel(sym, ins, out).module, inputs, out)
    if out in (i32, i64):
        np.testing.assert_array_equal(got, want)
    else:
        # .approx instructions (PTX ISA 9.7.3: sin/cos absolute error ~2^-21, tan near its
        # poles); the interpreter's fma rounds twice (float64 product and sum, then float32);
        # the rest is computed in float64 and rounded once (float32) or within a few ulp
        approx = any(s in sym for s in APPROX)
        tol = 1e-2 if out == f16 else 1e-3 if "tan" in sym and "tanh" not in sym else \
            1e-5 if approx else 1e-6 if out == f32 else 1e-13
        if sym.rstrip("f").endswith(("floor", "ceil", "trunc", "round", "rint", "fabs", "fmax",
                                     "fmin", "copysign", "sqrt", "sqrt_rn", "div_rn", "rcp")) \
                and "rsqrt" not in sym and sym != "__nv_sqrtf":
            # f32 rsqrt is rsqrt.approx (rel. error 2^-22.9); libdevice's __nv_sqrtf is
            # sqrt.approx.ftz.f32 as Triton configures it (__CUDA_PREC_SQRT reflects 0)
            tol = 0  # correctly rounded instructions: bit-exact
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=tol, atol=tol, equal_nan=True)


# float64 helpers, numerically checked on the host CPU (the same LLVM IR, JIT-compiled) -----
class _HostKL:
    """What :mod:`libdevice_more` needs of a KernelLowering: a builder and intrinsics."""

    def __init__(self, module, builder):
        self.module, self.b = module, builder

    def intrinsic(self, name, ret, args):
        from llvmlite import ir
        return self.module.globals.get(name) or ir.Function(
            self.module, ir.FunctionType(ret, list(args)), name)


def _host_function(name, nargs, int_second=False):
    import ctypes

    from llvmlite import binding as llvm
    from llvmlite import ir
    f64_t, i32_t = ir.DoubleType(), ir.IntType(32)
    types = [f64_t] + [i32_t if int_second else f64_t] * (nargs - 1)
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(f64_t, types), "f")
    b = ir.IRBuilder(fn.append_basic_block())
    b.ret(libdevice_more.special(_HostKL(mod, b), name, list(fn.args)))
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    m = llvm.parse_assembly(str(mod))
    ee = llvm.create_mcjit_compiler(m, llvm.Target.from_default_triple().create_target_machine())
    ee.finalize_object()
    ct = [ctypes.c_int32 if t == i32_t else ctypes.c_double for t in types]
    cf = ctypes.CFUNCTYPE(ctypes.c_double, *ct)(ee.get_function_address("f"))
    return lambda *a: cf(*a), ee


HOST_REF = {"expm1": np.expm1, "log1p": np.log1p, "sinh": np.sinh, "cosh": np.cosh,
            "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
            "cbrt": np.cbrt, "rcbrt": lambda x: 1 / np.cbrt(x), "hypot": np.hypot,
            "pow": np.power}
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-300, 5e-324, -1e-8, 2.0, 0.5]


@pytest.mark.parametrize("name", sorted(HOST_REF))
def test_float64_helpers_on_the_host(name):
    rng = np.random.default_rng()
    nargs = 2 if name in ("hypot", "pow") else 1
    f, _ee = _host_function(name, nargs)
    xs = np.concatenate([SPECIAL, rng.standard_normal(1000) * 5,
                         np.exp(rng.uniform(-30, 30, 1000)) * rng.choice([-1, 1], 1000)])
    args = [xs]
    if nargs == 2:  # integers and halves exercise pow's sign rules
        args.append(rng.permutation(np.concatenate(
            [SPECIAL, np.round(rng.standard_normal(xs.size - len(SPECIAL)) * 3,
                               rng.integers(0, 2))])))
    got = np.array([f(*a) for a in zip(*args, strict=False)])
    with np.errstate(all="ignore"):
        want = HOST_REF[name](*args)
        rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if nargs == 1:  # float64 arguments: within a few ulp
        assert (same | (rel < 4e-15)).all(), (xs[~(same | (rel < 4e-15))][:5])
    # float32 arguments (the f32 path rounds the float64 result once): exact
    fin = np.abs(xs) < 1e38
    x32 = [a[fin].astype(np.float32).astype(np.float64) for a in args]
    with np.errstate(all="ignore"):
        got32 = np.array([f(*a) for a in zip(*x32, strict=False)]).astype(np.float32)
        want32 = HOST_REF[name](*x32).astype(np.float32)
    np.testing.assert_array_equal(got32, want32)


def test_ldexp_on_the_host():
    f, _ee = _host_function("ldexp", 2, int_second=True)
    for x, e in [(1.0, 10), (3.0, -1076), (1.5, 2000), (1e-300, 600), (-2.0, -5), (1.0, -1074),
                 (0.75, -1075), (np.inf, -3000), (5e-324, 1100)]:
        with np.errstate(all="ignore"):
            assert f(x, e) == np.ldexp(x, e), (x, e)


@pytest.mark.parametrize("name", ["sinh", "cosh"])
def test_float64_sinh_cosh_near_overflow(name):
    """Finite up to the true overflow (e^x alone overflows above 709.78)."""
    f, _ee = _host_function(name, 1)
    rng = np.random.default_rng()
    xs = np.concatenate([[19.9, 20.0, 20.1, 709.0, 709.5, 709.79, 710.0, 710.47, 710.475,
                          710.48, 711.0], rng.uniform(15.0, 710.475, 300)])
    xs = np.concatenate([xs, -xs])
    got = np.array([f(x) for x in xs])
    with np.errstate(over="ignore"):
        want = HOST_REF[name](xs)
    assert np.array_equal(np.isinf(got), np.isinf(want)) and np.isinf(want).sum() == 4
    fin = np.isfinite(want)
    assert (np.abs(got[fin] - want[fin]) <= 4e-15 * np.abs(want[fin])).all()
    assert (np.sign(got) == np.sign(want)).all()


def test_float64_expm1_near_overflow():
    """Finite up to e^x's own overflow at 709.78 ((u - 1) x alone overflows from about 703)."""
    f, _ee = _host_function("expm1", 1)
    rng = np.random.default_rng()
    xs = np.concatenate([[36.0, 37.5, 40.0, 40.5, 700.0, 703.0, 705.0, 709.0, 709.78, 709.79,
                          710.0], rng.uniform(30.0, 709.78, 300)])
    got = np.array([f(x) for x in xs])
    with np.errstate(over="ignore"):
        want = np.expm1(xs)
    assert np.array_equal(np.isinf(got), np.isinf(want)) and np.isinf(want).sum() == 2
    fin = np.isfinite(want)
    assert (np.abs(got[fin] - want[fin]) <= 4e-15 * np.abs(want[fin])).all()
