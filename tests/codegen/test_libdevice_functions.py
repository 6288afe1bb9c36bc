"""libdevice functions beyond the C library on the interpreter and the CPU backend, against
references on fresh random inputs: the error-function family against mpmath with the CUDA Math
API's documented ulp bounds, integer intrinsics against Python integers, and nextafter, ilogb,
logb, llrint, llround, norm*, rhypot, jn/yn, powi, saturatef and the bit casts exactly or
within their bounds."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.codegen import libdevice_jit as J

rng = np.random.default_rng()
TARGETS = [J.cpu, J.interp]


def _ulps(got, want, fmt):
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    sp = np.spacing(np.abs(w).astype(fmt)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        err = np.where(g == w, 0.0, np.abs(g - w) / sp)
    return np.where(np.isnan(g) & np.isnan(w), 0.0, err)


#: (symbol stem, CUDA Math API max ulp fp32, fp64, input sampler, mpmath reference)
def _erfcinv_in(n):
    return np.concatenate([rng.uniform(0.002, 1.998, n), 10.0 ** rng.uniform(-30, -3, n // 4)])


SPECIAL = [
    ("erfinv", 2, 5, lambda n: np.concatenate([rng.uniform(-0.999, 0.999, n),
                                               10.0 ** rng.uniform(-30, -1, n // 4)]),
     lambda mp, x: mp.erfinv(x)),
    ("erfcinv", 4, 6, _erfcinv_in, lambda mp, x: mp.findroot(lambda t: mp.erfc(t) - x,
                                                             mp.erfinv(1 - mp.mpf(x)))
     if x > 1e-12 else None),
    ("erfcx", 4, 4, lambda n: np.concatenate([rng.uniform(-8, 30, n), rng.uniform(20, 1e4, 8)]),
     lambda mp, x: mp.erfc(x) * mp.exp(x * x)),
    ("normcdf", 5, 5, lambda n: rng.uniform(-30, 8, n), lambda mp, x: mp.ncdf(x)),
    ("normcdfinv", 5, 8, lambda n: np.concatenate([rng.uniform(0.001, 0.999, n),
                                                   10.0 ** rng.uniform(-30, -3, n // 4)]),
     lambda mp, x: mp.findroot(lambda t: mp.ncdf(t) - x, -mp.sqrt(2) * mp.erfinv(
         1 - 2 * mp.mpf(x))) if x > 1e-12 else None),
]


@pytest.mark.parametrize("fmt", [np.float32, np.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("stem,b32,b64,sample,ref", SPECIAL, ids=[s[0] for s in SPECIAL])
def test_error_functions_within_the_documented_ulps(stem, b32, b64, sample, ref, fmt):
    mp = pytest.importorskip("mpmath", reason="mpmath gives the reference values")
    mp.mp.dps = 40
    x = sample(24).astype(fmt)
    want = []
    for v in x:
        r = ref(mp, mp.mpf(float(v)))
        want.append(np.nan if r is None else float(r))
    want = np.array(want)
    keep = ~np.isnan(want)
    sym = f"__nv_{stem}{'f' if fmt is np.float32 else ''}"
    for target in TARGETS:
        err = _ulps(target(sym, x)[keep], want[keep], fmt)
        assert err.max() <= (b32 if fmt is np.float32 else b64), (sym, target.__name__,
                                                                   err.max())


@pytest.mark.parametrize("target", TARGETS, ids=["cpu", "interpreter"])
def test_error_function_edges(target):
    e = target("__nv_erfcinv", np.array([0.0, 2.0, -0.1, 2.1, 1.0, np.nan]))
    assert e[0] == np.inf and e[1] == -np.inf and np.isnan(e[2:4]).all() and e[4] == 0
    assert np.isnan(e[5])
    f = target("__nv_erfinvf", np.array([1.0, -1.0, 0.0, 1.5], np.float32))
    assert f[0] == np.inf and f[1] == -np.inf and f[2] == 0 and np.isnan(f[3])
    n = target("__nv_normcdfinvf", np.array([0.0, 1.0, 0.5], np.float32))
    assert n[0] == -np.inf and n[1] == np.inf and n[2] == 0


def _i32(n):
    return rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32)


def _i64(n):
    return rng.integers(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)


def _u(v, bits):
    return int(v) & (2 ** bits - 1)


def _s(v, bits):
    v &= 2 ** bits - 1
    return v - 2 ** bits if v >= 2 ** (bits - 1) else v


def _byte_perm(x, y, s):
    both = _u(x, 32) | _u(y, 32) << 32
    return _s(sum(((both >> 8 * ((_u(s, 32) >> 4 * i) & 7)) & 0xFF) << 8 * i
                  for i in range(4)), 32)


def _s24(v):
    return _s(_u(v, 32) & 0xFFFFFF, 24)


INT_CASES = [
    ("__nv_ffs", 1, lambda x: (_u(x, 32) & -_u(x, 32)).bit_length()),
    ("__nv_ffsll", 1, lambda x: (_u(x, 64) & -_u(x, 64)).bit_length()),
    ("__nv_byte_perm", 3, _byte_perm),
    ("__nv_mulhi", 2, lambda a, b: (int(a) * int(b)) >> 32),
    ("__nv_umulhi", 2, lambda a, b: _s((_u(a, 32) * _u(b, 32)) >> 32, 32)),
    ("__nv_mul64hi", 2, lambda a, b: (int(a) * int(b)) >> 64),
    ("__nv_umul64hi", 2, lambda a, b: _s((_u(a, 64) * _u(b, 64)) >> 64, 64)),
    ("__nv_mul24", 2, lambda a, b: _s(_s24(a) * _s24(b), 32)),
    ("__nv_umul24", 2, lambda a, b: _s((_u(a, 32) & 0xFFFFFF) * (_u(b, 32) & 0xFFFFFF), 32)),
    ("__nv_hadd", 2, lambda a, b: (int(a) + int(b)) >> 1),
    ("__nv_rhadd", 2, lambda a, b: (int(a) + int(b) + 1) >> 1),
    ("__nv_uhadd", 2, lambda a, b: _s((_u(a, 32) + _u(b, 32)) >> 1, 32)),
    ("__nv_urhadd", 2, lambda a, b: _s((_u(a, 32) + _u(b, 32) + 1) >> 1, 32)),
    ("__nv_sad", 3, lambda a, b, c: _s(abs(int(a) - int(b)) + _u(c, 32), 32)),
    ("__nv_usad", 3, lambda a, b, c: _s(abs(_u(a, 32) - _u(b, 32)) + _u(c, 32), 32)),
    ("__nv_popc", 1, lambda x: bin(_u(x, 32)).count("1")),
    ("__nv_clzll", 1, lambda x: 64 - _u(x, 64).bit_length()),
    ("__nv_brevll", 1, lambda x: _s(int(f"{_u(x, 64):064b}"[::-1], 2), 64)),
]


@pytest.mark.parametrize("sym,arity,ref", INT_CASES, ids=[c[0] for c in INT_CASES])
def test_integer_intrinsics(sym, arity, ref):
    wide = J.SYMBOLS[sym][1][0] in (J.dt.int64, J.dt.uint64)
    xs = [(_i64 if wide else _i32)(64) for _ in range(arity)]
    for x in xs:
        x[:3] = [0, -1, 1]
    want = np.array([ref(*v) for v in zip(*xs, strict=True)], dtype=object)
    for target in TARGETS:
        got = target(sym, *xs)
        assert [int(g) for g in got] == [int(w) for w in want], (sym, target.__name__)


def test_float_helpers_exact():
    f = np.float32
    x = np.array([1.0, 0.0, -0.0, np.inf, 3.0, np.nan, 1e-45, -2.5], f)
    y = np.array([2.0, -1.0, 1.0, 0.0, 3.0, 1.0, 0.0, -np.inf], f)
    for t in TARGETS:
        np.testing.assert_array_equal(t("__nv_nextafterf", x, y), np.nextafter(x, y))
        d = rng.standard_normal(32) * 10.0 ** rng.integers(-300, 300, 32)
        d2 = rng.standard_normal(32)
        np.testing.assert_array_equal(t("__nv_nextafter", d, d2), np.nextafter(d, d2))
        il = t("__nv_ilogbf", x)
        assert list(il[[1, 2, 3, 5]]) == [-2 ** 31, -2 ** 31, 2 ** 31 - 1, -2 ** 31]
        assert il[0] == 0 and il[4] == 1 and il[6] == -149 and il[7] == 1
        np.testing.assert_array_equal(t("__nv_logb", d), np.floor(np.log2(np.abs(d))))
        lb = t("__nv_logbf", x)
        assert lb[1] == -np.inf and lb[3] == np.inf and np.isnan(lb[5]) and lb[6] == -149
        h = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, 1e30, -1e30, np.nan], f)
        np.testing.assert_array_equal(t("__nv_llrintf", h)[:6], [0, 2, 2, 0, -2, 0])
        np.testing.assert_array_equal(t("__nv_llroundf", h)[:6], [1, 2, 3, -1, -3, 0])
        assert list(t("__nv_llround", h.astype(np.float64))[6:]) == [2 ** 63 - 1, -2 ** 63, 0]
        s = t("__nv_saturatef", np.array([-1, 0.25, 2, np.nan, -0.0], f))
        np.testing.assert_array_equal(s, [0, 0.25, 1, 0, 0])
        bits = rng.integers(-2 ** 31, 2 ** 31, 16, dtype=np.int64).astype(np.int32)
        np.testing.assert_array_equal(t("__nv_int_as_float", bits).view(np.int32), bits)
        dd = rng.standard_normal(16)
        hi, lo = t("__nv_double2hiint", dd), t("__nv_double2loint", dd)
        np.testing.assert_array_equal(t("__nv_hiloint2double", hi, lo), dd)
        np.testing.assert_array_equal(t("__nv_double_as_longlong", dd), dd.view(np.int64))


@pytest.mark.parametrize("target", TARGETS, ids=["cpu", "interpreter"])
def test_norms_bessel_powi_fast(target):
    mp = pytest.importorskip("mpmath", reason="mpmath gives the reference values")
    mp.mp.dps = 40
    a, b, c, d = (rng.standard_normal(16) * 10.0 ** rng.integers(-150, 150, 16)
                  for _ in range(4))
    for sym, args, ref in (("__nv_norm3d", (a, b, c), lambda *v: mp.sqrt(sum(t * t for t in v))),
                           ("__nv_rnorm4d", (a, b, c, d),
                            lambda *v: 1 / mp.sqrt(sum(t * t for t in v))),
                           ("__nv_rhypot", (a, b), lambda *v: 1 / mp.sqrt(v[0] ** 2 + v[1] ** 2))):
        want = [float(ref(*[mp.mpf(float(t)) for t in v])) for v in zip(*args, strict=True)]
        assert _ulps(target(sym, *args), want, np.float64).max() <= 3, sym
    big = np.array([1e300, 1e300, 1e300], np.float64)
    assert target("__nv_norm3d", big, big, big)[0] == pytest.approx(math.sqrt(3) * 1e300)
    inf = target("__nv_norm3df", np.array([np.inf], np.float32), np.array([np.nan], np.float32),
                 np.array([1.0], np.float32))
    assert inf[0] == np.inf
    n = rng.integers(0, 6, 16).astype(np.int32)
    x = rng.uniform(0.5, 20, 16)
    want = [float(mp.besselj(int(k), v)) for k, v in zip(n, x, strict=True)]
    got = target("__nv_jn", n, x)
    assert np.allclose(got, want, rtol=1e-12, atol=1e-14)
    want = [float(mp.bessely(int(k), v)) for k, v in zip(n, x, strict=True)]
    assert np.allclose(target("__nv_ynf", n, x.astype(np.float32)), want, rtol=2e-6, atol=1e-6)
    e = rng.integers(-8, 9, 16).astype(np.int32)
    xs = rng.uniform(0.5, 2, 16)
    assert _ulps(target("__nv_powi", xs, e), [float(mp.mpf(v) ** int(k)) for v, k in
                                              zip(xs, e, strict=True)], np.float64).max() <= 2
    xf = rng.uniform(-3, 3, 16).astype(np.float32)
    for sym, fn in (("__nv_fast_sinf", np.sin), ("__nv_fast_exp10f", lambda v: 10.0 ** v),
                    ("__nv_fast_log2f", lambda v: np.log2(np.abs(v)))):
        arg = np.abs(xf) if "log" in sym else xf
        assert _ulps(target(sym, arg), fn(arg.astype(np.float64)), np.float32).max() <= 1
