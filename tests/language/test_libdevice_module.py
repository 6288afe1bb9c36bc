"""``tl.extra.libdevice`` (and ``tl.extra.cuda.libdevice``): Triton's names, the libdevice
symbol each argument dtype picks (compared with real Triton's ttir where Triton is
installed), results against numpy on both host backends, and errors at the user's line."""
import importlib.util
import math
import re

import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError
from workbench.language.extra import libdevice
from workbench.language.extra.cuda import libdevice as cuda_libdevice


@wb.jit
def unary(x_ptr, y_ptr, FN: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, getattr(libdevice, FN)(tl.load(x_ptr + offs)))


@wb.jit
def mixed(x_ptr, y_ptr, e_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    e = tl.load(e_ptr + offs)
    r = libdevice.atan2(x, y) + libdevice.pow(x, 2.0) + libdevice.ldexp(y, e)
    r += libdevice.isnan(x / y).to(tl.float32) * 100.0
    r += cuda_libdevice.abs(e).to(tl.float32) * 1000.0
    tl.store(out_ptr + offs, r)


@pytest.mark.parametrize("fn, ref, lo, hi", [
    ("asin", np.arcsin, -1, 1), ("acosh", np.arccosh, 1, 20), ("expm1", np.expm1, -2, 2),
    ("log1p", np.log1p, -0.5, 3), ("cbrt", np.cbrt, -9, 9), ("tanh", np.tanh, -4, 4),
    ("erf", None, -3, 3),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_functions_match_numpy(backend, rng, fn, ref, lo, hi, dtype):
    if ref is None:
        import math
        ref = np.vectorize(math.erf)
    x = rng.uniform(lo, hi, 128).astype(dtype)
    y = np.full(128, np.nan, dtype)
    launch(backend, unary, (1,), x, y, fn, 128)
    want = ref(x.astype(np.float64))
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(y, want, rtol=4 * eps, atol=4 * eps)


def test_mixed_signatures_and_predicates(backend, rng):
    x = rng.standard_normal(64).astype(np.float32)
    y = rng.standard_normal(64).astype(np.float32)
    y[::7] = 0.0
    x[::14] = 0.0  # 0 / 0: NaN
    e = rng.integers(-5, 5, 64).astype(np.int32)
    out = np.zeros(64, np.float32)
    launch(backend, mixed, (1,), x, y, e, out, 64)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = (np.arctan2(x, y).astype(np.float64) + x.astype(np.float64) ** 2
                + np.ldexp(y, e) + np.isnan(x / y) * 100.0 + np.abs(e) * 1000.0)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-5)


def test_fp16_arguments_are_refused_at_the_line():
    @wb.jit
    def half(x_ptr):
        x = tl.load(x_ptr + tl.arange(0, 16))
        tl.store(x_ptr + tl.arange(0, 16), libdevice.asin(x))

    with pytest.raises(CompilationError, match=r"does not take arguments of type \(fp16\)") as e:
        half[(1,)](np.zeros(16, np.float16))
    assert "libdevice.asin(x)" in str(e.value)


def test_erfcinv_runs_on_each_host_backend(backend):
    # every TABLE symbol is known to both host backends (tests/codegen/
    # test_libdevice_census.py); an unknown symbol's compile error is tested at the IR level
    # (tests/codegen/test_cpu_math_ops.py)
    x = np.random.default_rng().uniform(0.05, 1.95, 16).astype(np.float32)
    y = np.zeros_like(x)
    unary[(1,)](x, y, "erfcinv", 16)
    erfc = np.vectorize(math.erfc)
    np.testing.assert_allclose(erfc(y.astype(np.float64)), x, rtol=1e-6)


def test_cuda_compile_uses_the_symbols():
    ptx = wb.compile(unary, "*fp32", "*fp32", FN="tanh", N=64, target="cuda:90").asm["ptx"]
    assert ".version" in ptx
    ttir = wb.compile(unary, "*fp64", "*fp64", FN="tanh", N=64, target="cuda:90").asm["ttir"]
    assert 'symbol = "__nv_tanh"' in ttir


_SAMPLES = [  # (function, argument signature types)
    ("asin", ["fp32"]), ("asin", ["fp64"]), ("pow", ["fp32", "i32"]), ("pow", ["fp64", "fp64"]),
    ("isnan", ["fp64"]), ("abs", ["i64"]), ("float2int_rn", ["fp32"]), ("mulhi", ["u32", "u32"]),
    ("fast_dividef", ["fp32", "fp32"]), ("cyl_bessel_i1", ["fp64"]), ("popc", ["i64"]),
    ("ull2double_rz", ["u64"]), ("sad", ["u32", "u32", "u32"]), ("div_rd", ["fp64", "fp64"]),
]
_KERNEL = '''
import {pkg}
import {pkg}.language as tl
from {pkg}.language.extra import libdevice


@{pkg}.jit
def call(out_ptr, {params}):
    tl.store(out_ptr, libdevice.{fn}({params}).to(tl.float64))
'''


def _tritons_symbol(tmp_path, fn, types):
    """The libdevice symbol in real Triton's ttir for ``libdevice.<fn>`` on ``types``."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    params = ", ".join(f"a{i}" for i in range(len(types)))
    path = tmp_path / f"call_{fn}_{len(types)}_{types[0]}.py"
    path.write_text(_KERNEL.format(pkg="triton", fn=fn, params=params))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = {"out_ptr": "*fp64", **{f"a{i}": t for i, t in enumerate(types)}}
    ttir = triton.compile(ASTSource(mod.call, signature=sig),
                          target=GPUTarget("cuda", 90, 32)).asm["ttir"]
    return re.search(r'symbol = "(\w+)"', ttir).group(1)


_DT = {"fp32": tl.float32, "fp64": tl.float64, "i32": tl.int32, "i64": tl.int64,
       "u32": tl.uint32, "u64": tl.uint64}


def test_names_and_symbols_are_tritons(tmp_path):
    pytest.importorskip("triton", reason="the comparison needs Triton 3.6")
    from triton.language.extra import libdevice as theirs
    from triton.language.extra.cuda import libdevice as theirs_cuda

    def names(mod):
        return {n for n in dir(mod) if not n.startswith("_") and callable(getattr(mod, n))
                and getattr(getattr(mod, n), "__module__", "").endswith("libdevice")}
    assert names(theirs) == set(libdevice.__all__)
    assert names(theirs_cuda) == set(cuda_libdevice.__all__) - {"fast_tanhf"}
    for fn, types in _SAMPLES:
        ours = next(sym for args, sym, _ in libdevice.TABLE[fn]
                    if args == tuple(_DT[t] for t in types))
        assert ours == _tritons_symbol(tmp_path, fn, types), (fn, types)


@pytest.mark.parametrize("fn, torch_fn", [("j0", "bessel_j0"), ("j1", "bessel_j1"),
                                          ("y0", "bessel_y0"), ("y1", "bessel_y1"),
                                          ("cyl_bessel_i0", "i0"), ("cyl_bessel_i1", "i1")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bessel_functions(backend, rng, fn, torch_fn, dtype):
    """Bessel functions against torch.special (computed in float64): libm's j0/j1/y0/y1 and
    our own I0/I1 (series, then the large-argument expansion above 30)."""
    torch = pytest.importorskip("torch", reason="torch.special is the reference")
    # I0/I1: also large arguments, for the expansion above 30; j/y: torch's float64 j0/j1/y0/
    # y1 lose digits beyond |x| ~ 5 (4e-7 off libm there), so standard normal inputs as
    # Triton's own test uses
    if fn.startswith("cyl"):
        x = np.concatenate([rng.standard_normal(96) * 3, rng.uniform(25, 60, 32)])
    else:
        x = rng.standard_normal(128)
    x = x.astype(dtype)
    y = np.zeros(128, dtype)
    launch(backend, unary, (1,), x, y, fn, 128)
    want = getattr(torch.special, torch_fn)(torch.from_numpy(x.astype(np.float64))).numpy()
    eps = np.finfo(dtype).eps
    # torch's j/y are themselves off by ~1e-12 (float64): for them torch.testing's default
    # tolerances (Triton's own test); I0/I1 within 16 ulp. y0/y1 of x < 0 are NaN.
    if fn.startswith("cyl"):
        rtol, atol = 16 * eps, 16 * eps
    else:
        rtol, atol = (1e-7, 1e-7) if dtype == np.float64 else (1.3e-6, 1e-5)
    np.testing.assert_allclose(y, want.astype(dtype), rtol=rtol, atol=atol, equal_nan=True)
