"""libdevice through whole kernels (frontend -> ttir -> target): the kernels of
``nvptx/test_libdevice_link.py`` run their interpreter step (and the CPU backend) here without a
GPU, against references; and a GPU test comparing the CUDA backend (NVIDIA's libdevice) with
the interpreter over a broad sample of TABLE."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from tests.codegen.nvptx import test_libdevice_link as link
from tests.codegen.test_libdevice_census import DOMAIN, LOOSE, _is_exact
from tests.codegen.test_libdevice_exact import ref_round
from workbench.language import dtypes as dt
from workbench.language.extra import libdevice as ld

rng = np.random.default_rng()


def _mp_ref(fn, x):
    mp = pytest.importorskip("mpmath", reason="mpmath gives the reference values")
    mp.mp.dps = 30
    f = {"j0": lambda v: mp.besselj(0, v), "y1": lambda v: mp.bessely(1, v),
         "erfcinv": lambda v: mp.erfinv(1 - v), "tgamma": mp.gamma,
         "normcdfinv": lambda v: -mp.sqrt(2) * mp.erfinv(1 - 2 * v),
         "cyl_bessel_i1": lambda v: mp.besseli(1, v)}[fn]
    return np.array([float(f(mp.mpf(float(v)))) for v in x])


@pytest.mark.parametrize("fn", sorted(link.UNARY))
def test_link_unary_kernels_on_the_interpreter_and_cpu(fn):
    lo, hi = link.UNARY[fn]
    x = rng.uniform(lo, hi, 128).astype(np.float32)
    want = _mp_ref(fn, x[:32])  # mpmath's Bessel functions are slow: check a quarter
    for target in ("interpreter", "cpu") if fn == "erfcinv" else ("interpreter",):
        got = np.full_like(x, np.nan)
        wb.compile(link.unary, x, got, target=target, FN=fn, BLOCK=128)[(1,)](x, got)
        np.testing.assert_allclose(got[:32], want, rtol=2e-6, atol=1e-6, err_msg=target)
        assert np.isfinite(got).all()


@pytest.mark.parametrize("fn", link.BINARY)
def test_link_binary_kernels_on_the_interpreter_and_cpu(fn):
    x = rng.uniform(-50, 50, 64)
    z = rng.uniform(0.5, 7, 64) * rng.choice([-1, 1], 64)
    if fn == "fmod":
        want = np.array([math.fmod(a, b) for a, b in zip(x, z, strict=True)])
    elif fn == "nextafter":
        want = np.nextafter(x, z)
    else:
        op = (lambda a, b: a + b) if fn == "add_rz" else (lambda a, b: a / b)
        want = np.array([ref_round(op(Fraction(a), Fraction(b)), np.float64, fn[-2:])
                         for a, b in zip(x, z, strict=True)])
    for target in ("interpreter", "cpu") if fn == "div_ru" else ("interpreter",):
        got = np.full_like(x, np.nan)
        wb.compile(link.binary, x, z, got, target=target, FN=fn, BLOCK=64)[(1,)](x, z, got)
        np.testing.assert_array_equal(got, want, err_msg=target)


@wb.jit
def apply1(x_ptr, y_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, FN(tl.load(x_ptr + offs)))


@wb.jit
def apply2(x_ptr, z_ptr, y_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, FN(tl.load(x_ptr + offs), tl.load(z_ptr + offs)))


@wb.jit
def apply3(x_ptr, z_ptr, w_ptr, y_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, FN(tl.load(x_ptr + offs), tl.load(z_ptr + offs),
                              tl.load(w_ptr + offs)))


KERNELS = {1: apply1, 2: apply2, 3: apply3}
NP = {dt.float32: np.float32, dt.float64: np.float64, dt.int32: np.int32, dt.int64: np.int64}
#: approximate on the GPU by design (fast_*, rcp64h) or with no signed-dtype entry point
SKIP = {"rcp64h", "fast_sinf", "fast_cosf", "fast_tanf", "fast_log2f", "fast_logf",
        "fast_expf", "fast_exp10f", "fast_log10f", "fast_powf", "fast_dividef"}
BLOCK = 128


def _sample():
    out = []
    for name, entries in sorted(ld.TABLE.items()):
        for args, sym, ret in entries:
            if name in SKIP or len(args) > 3 or any(a not in NP for a in args):
                continue
            out.append((name, sym, args, ret))
    return out


def _args(name, args):
    lo, hi = DOMAIN.get(name, (-10.0, 10.0))
    xs = []
    for a in args:
        if a in (dt.float32, dt.float64):
            xs.append(rng.uniform(lo, hi, BLOCK).astype(NP[a]))
        elif name in ("jn", "yn", "pow", "ldexp", "scalbn"):
            xs.append(rng.integers(0 if name in ("jn", "yn") else -6, 7, BLOCK).astype(NP[a]))
        else:
            info = np.iinfo(NP[a])
            xs.append(rng.integers(info.min, info.max, BLOCK, dtype=NP[a], endpoint=True))
    return xs


def _out(ret):
    return np.zeros(BLOCK, {dt.uint32: np.int32, dt.uint64: np.int64}.get(ret, None)
                    or NP.get(ret, np.int32))


def test_generic_kernels_on_cpu_match_the_interpreter():
    """The CPU backend at O3 (vectorised loops) keeps the error-free transformations exact."""
    for name, sym, args, ret in [e for e in _sample() if e[1] in (
            "__nv_fdiv_rd", "__nv_fma_ru", "__nv_ll2float_rz", "__nv_erfcinvf",
            "__nv_byte_perm")]:
        xs = _args(name, args)
        outs = []
        for target in ("interpreter", "cpu"):
            y = _out(ret)
            fn = getattr(ld, name)
            wb.compile(KERNELS[len(xs)], *xs, y, target=target, FN=fn, BLOCK=BLOCK)[(1,)](*xs, y)
            outs.append(y)
        if _is_exact(name) or ret not in (dt.float32, dt.float64):
            np.testing.assert_array_equal(outs[0], outs[1], err_msg=sym)
        else:
            np.testing.assert_array_max_ulp(outs[0], outs[1], maxulp=2)


@pytest.mark.gpu
@pytest.mark.parametrize("name,sym,args,ret", _sample(), ids=[e[1] for e in _sample()])
def test_cuda_libdevice_matches_the_interpreter(name, sym, args, ret):
    """NVIDIA's libdevice (CUDA backend) against the interpreter: bit-exact for the exact
    families, within a few ulp (the documented bounds plus the interpreter's own rounding)
    for the rest."""
    torch = pytest.importorskip("torch")
    xs = _args(name, args)
    fn = getattr(ld, name)
    want = _out(ret)
    kern = KERNELS[len(xs)]
    wb.compile(kern, *xs, want, target="interpreter", FN=fn, BLOCK=BLOCK)[(1,)](*xs, want)
    got = torch.from_numpy(_out(ret)).cuda()
    kern[(1,)](*[torch.from_numpy(x).cuda() for x in xs], got, FN=fn, BLOCK=BLOCK)
    got = got.cpu().numpy()
    # libdevice's __nv_sqrtf asks __nvvm_reflect("__CUDA_PREC_SQRT"), which is 0 here as in
    # Triton: it is sqrt.approx.ftz.f32 (relative error 2^-23), not the correctly rounded root
    approx_sqrt = sym == "__nv_sqrtf"
    if ret not in (dt.float32, dt.float64) or (_is_exact(name) and not approx_sqrt):
        np.testing.assert_array_equal(got, want, err_msg=sym)
        return
    # the CUDA Math API's largest documented bounds outside the Bessel/gamma functions are 6
    # ulp (fp32) and 8 ulp (fp64, normcdfinv), plus the interpreter's own rounding error
    tol = (7 if ret == dt.float32 else 11) * (4 if name in LOOSE else 1)
    sp = np.spacing(np.abs(want)).astype(np.float64)
    if name in LOOSE:
        sp = np.maximum(sp, np.spacing(want.dtype.type(1)))
    err = np.abs(got.astype(np.float64) - want)
    ok = (got == want) | (np.isnan(got) & np.isnan(want)) | (err <= tol * sp)
    if ret == dt.float32:  # libdevice flushes fp32 subnormals (nvvm-reflect-ftz, as Triton)
        ok |= (got == 0) & (np.abs(want) < np.finfo(np.float32).tiny)
    if name in LOOSE and name not in ("lgamma", "tgamma"):
        # near a zero of a Bessel function the CUDA Math API bounds the absolute error
        # (5e-12 in double, 2.2e-6 in single for y0/y1/j0/j1 with |x| >= 8 and jn/yn)
        ok |= err <= (5e-12 if ret == dt.float64 else 2.2e-6)
    assert ok.all(), (sym, got[~ok][:4], want[~ok][:4])
