"""libdevice's rounding-mode arithmetic and rounding conversions are exact on the interpreter
and the CPU backend: fresh random operands (wide exponent range, subnormal results,
cancellation, overflow) against a reference written independently here, which rounds the exact
rational result by scaling it to an integer count of ulps (IEEE 754-2008 section 4.3)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tests.codegen import libdevice_jit as J

rng = np.random.default_rng()
MODES = ("rn", "rz", "rd", "ru")
FMT = {np.float32: (24, -126, 127), np.float64: (53, -1022, 1023)}


def ref_round(q: Fraction, fmt, mode: str) -> float:
    """The rational ``q`` rounded to ``fmt`` in ``mode`` (zero results unsigned here)."""
    if q == 0:
        return 0.0
    p, emin, emax = FMT[fmt]
    neg, a = q < 0, abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    ulp = Fraction(2) ** (max(e, emin) - p + 1)
    n = a / ulp
    fl = math.floor(n)
    rem = n - fl
    away = {"rz": False, "rd": neg, "ru": not neg}.get(mode)
    if away is None:  # nearest, ties to even
        k = fl + (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1))
    else:
        k = fl + (1 if away and rem > 0 else 0)
    v = k * ulp
    top = Fraction(2) ** (emax + 1)
    if v >= top:
        v = top - Fraction(2) ** (emax - p + 1)  # the largest finite
        if mode == "rn" or away:
            return -math.inf if neg else math.inf
    return float(-v if neg else v)


def _floats(fmt, n, lo, hi):
    """Random finite ``fmt`` values, random sign, exponents uniform in [lo, hi)."""
    p = FMT[fmt][0]
    mant = 1 + rng.integers(0, 2 ** (p - 1), n) / 2 ** (p - 1)
    x = np.ldexp(mant, rng.integers(lo, hi, n)) * rng.choice([-1.0, 1.0], n)
    return x.astype(fmt)


def _operands(op, fmt, n=48):
    big = 120 if fmt is np.float32 else 1000
    a = _floats(fmt, n, -big, big)
    b = _floats(fmt, n, -big, big)
    c = _floats(fmt, n, -big, big)
    k = n // 4
    b[:k] = (a[:k].astype(np.float64) * (1 + rng.uniform(-1e-6, 1e-6, k))).astype(fmt)
    b[:4] = a[:4]                                       # exact cancellation (zero sums)
    a[k:2 * k] = _floats(fmt, k, -30, 30)
    b[k:2 * k] = _floats(fmt, k, -30, 30)
    c[k:2 * k] = (-(a[k:2 * k].astype(np.float64) * b[k:2 * k])).astype(fmt)  # fma: c ~ -a*b
    if op == "sqrt":
        a = np.abs(a)
    return a, b, c


def _exact(op, xs):
    q = [Fraction(float(x)) for x in xs]
    return {"add": lambda: q[0] + q[1], "sub": lambda: q[0] - q[1], "mul": lambda: q[0] * q[1],
            "div": lambda: q[0] / q[1], "rcp": lambda: 1 / q[0],
            "fma": lambda: q[0] * q[1] + q[2]}[op]()


def _ref_sqrt(x: float, fmt, mode: str) -> float:
    r = float(np.sqrt(np.float64(x)))  # bracket sqrt(x) exactly between neighbours of r
    fx = Fraction(x)
    cands = [float(np.nextafter(fmt(r), fmt(d))) for d in (-np.inf, np.inf)] + [float(fmt(r))]
    lo = max(c for c in cands if Fraction(c) ** 2 <= fx)
    if Fraction(lo) ** 2 == fx:
        return lo
    hi = float(np.nextafter(fmt(lo), fmt(np.inf)))
    if mode in ("rz", "rd"):
        return lo
    if mode == "ru":
        return hi
    mid = (Fraction(lo) + Fraction(hi)) / 2
    return hi if mid * mid < fx else lo


def _check(got, want, label):
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    nz = w != 0
    same &= ~nz | (np.signbit(g) == np.signbit(w))
    assert same.all(), (label, np.nonzero(~same)[0][:5], g[~same][:5], w[~same][:5])


OPS = [("add", 2), ("sub", 2), ("mul", 2), ("div", 2), ("rcp", 1), ("sqrt", 1), ("fma", 3)]


@pytest.mark.parametrize("fmt", [np.float32, np.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("op,arity", OPS, ids=[o for o, _ in OPS])
def test_rounding_mode_arithmetic_is_exact(op, arity, fmt):
    xs = _operands(op, fmt)[:arity]
    for mode in MODES:
        if op == "fma":
            sym = f"__nv_fma{'f' if fmt is np.float32 else ''}_{mode}"
        else:
            sym = f"__nv_{'f' if fmt is np.float32 else 'd'}{op}_{mode}"
        if op == "sqrt":
            want = [_ref_sqrt(float(x), fmt, mode) for x in xs[0]]
        else:
            want = [ref_round(_exact(op, v), fmt, mode) for v in zip(*xs, strict=True)]
        for target in (J.cpu, J.interp):
            _check(target(sym, *xs), want, (sym, target.__name__))


@pytest.mark.parametrize("target", [J.cpu, J.interp], ids=["cpu", "interpreter"])
def test_exact_zero_sums_and_special_values(target):
    f = np.float32
    a = np.array([1.5, 0.0, -0.0, 0.0, np.inf, np.inf, np.nan, 3e38], f)
    b = np.array([-1.5, 0.0, -0.0, -0.0, 1.0, -np.inf, 1.0, 3e38], f)
    rd = target("__nv_fadd_rd", a, b)
    ru = target("__nv_fadd_ru", a, b)
    np.testing.assert_array_equal(np.signbit(rd[:4]), [True, False, True, True])
    np.testing.assert_array_equal(np.signbit(ru[:4]), [False, False, True, False])
    assert rd[4] == np.inf and np.isnan(rd[5]) and np.isnan(rd[6])
    assert rd[7] == np.finfo(f).max and ru[7] == np.inf
    assert target("__nv_fadd_rz", a, b)[7] == np.finfo(f).max
    d = target("__nv_fdiv_rd", np.array([1.0, -1.0, 0.0], f), np.array([0.0, 0.0, 0.0], f))
    assert d[0] == np.inf and d[1] == -np.inf and np.isnan(d[2])
    s = target("__nv_fsqrt_ru", np.array([-0.0, -1.0, np.inf], f))
    assert s[0] == 0 and np.signbit(s[0]) and np.isnan(s[1]) and s[2] == np.inf


def test_rsqrt_rn_is_correctly_rounded():
    x = np.concatenate([_floats(np.float32, 40, -140, 120).__abs__(),
                        np.array([1.0, 4.0, 0.25], np.float32)])
    want = []
    for v in x:
        fx = Fraction(float(v))
        r = np.float32(1.0 / np.sqrt(np.float64(v)))
        cands = [np.nextafter(r, np.float32(-np.inf)), r, np.nextafter(r, np.float32(np.inf))]
        # the candidate c minimising |1/sqrt(x) - c|: compare squared distances exactly
        # through (c - y)^2 ordering on c^2 x versus 1, i.e. pick by the midpoints
        best = cands[0]
        for lo, hi in zip(cands, cands[1:], strict=False):
            mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2
            if mid * mid * fx > 1:  # 1/sqrt(x) < mid
                break
            best = hi
        want.append(float(best))
    for target in (J.cpu, J.interp):
        _check(target("__nv_frsqrt_rn", x), want, target.__name__)


CONV_SRC = {"float": np.float32, "double": np.float64, "int": np.int32, "uint": np.uint32,
            "ll": np.int64, "ull": np.uint64}


def _conv_inputs(src):
    if src in ("float", "double"):
        fmt = CONV_SRC[src]
        x = _floats(fmt, 40, -3, 66) if src == "double" else _floats(fmt, 40, -3, 66)
        halves = (rng.integers(-50, 50, 8) + 0.5).astype(fmt)
        extra = np.array([np.nan, np.inf, -np.inf, -0.0, 2.5, -2.5, 3e9, -3e9], fmt)
        if src == "double":
            extra = np.concatenate([extra, _floats(fmt, 16, -160, 140)])
        return np.concatenate([x, halves, extra])
    info = np.iinfo(CONV_SRC[src])
    return rng.integers(info.min, info.max, 60, dtype=CONV_SRC[src], endpoint=True)


def _ref_to_int(x, dst, mode):
    ity = {"int": np.int32, "uint": np.uint32, "ll": np.int64, "ull": np.uint64}[dst]
    info = np.iinfo(ity)
    out = []
    for v in x:
        v = float(v)
        if math.isnan(v):
            out.append(0)
            continue
        if math.isinf(v):
            out.append(info.max if v > 0 else info.min)
            continue
        q = Fraction(v)
        n = {"rz": int(q), "rd": math.floor(q), "ru": math.ceil(q), "rn": round(q)}[mode]
        out.append(min(max(n, int(info.min)), int(info.max)))
    return np.array(out, dtype=object).astype(ity)


CONVS = [c for c in ("double2float double2int double2uint float2int float2uint int2float "
                     "uint2float float2ll float2ull double2ll double2ull ll2float ull2float "
                     "ll2double ull2double").split()]


@pytest.mark.parametrize("conv", CONVS)
def test_rounding_conversions_are_exact(conv):
    src, dst = conv.split("2")
    x = _conv_inputs(src)
    for mode in MODES:
        sym = f"__nv_{conv}_{mode}"
        if dst in ("float", "double"):
            fmt = CONV_SRC[dst]
            want = [float(fmt(v)) if isinstance(v, (float, np.floating)) and not np.isfinite(v)
                    else ref_round(Fraction(v.item()), fmt, mode) for v in x]
            wz = [w == 0 and np.signbit(v) for v, w in zip(x, want, strict=True)]
            want = [-0.0 if z else w for w, z in zip(want, wz, strict=True)]
            for target in (J.cpu, J.interp):
                _check(target(sym, x), want, (sym, target.__name__))
        else:
            want = _ref_to_int(x, dst, mode)
            for target in (J.cpu, J.interp):
                got = target(sym, x)
                np.testing.assert_array_equal(got.view(want.dtype), want, err_msg=sym)


@pytest.mark.parametrize("fmt", [np.float32, np.float64], ids=["fp32", "fp64"])
def test_fma_on_a_midpoint_rounds_once(fmt):
    # a*b lies exactly halfway between two neighbours of fmt; a tiny c decides the nearest
    # (rounding a*b + c first to a wider format and then to fmt would tie to even instead)
    k = 12 if fmt is np.float32 else 26
    a = np.full(8, 1 + 2.0 ** -k, fmt)
    b = np.full(8, 1 + 2.0 ** -(k if fmt is np.float32 else k + 1), fmt)
    tiny = 2.0 ** (-70 if fmt is np.float32 else -100)
    c = np.array([tiny, -tiny, 0, tiny, -tiny, 0, 2 * tiny, -2 * tiny], fmt)
    a[3:6], b[3:6] = -a[3:6], b[3:6]
    for mode in MODES:
        sym = f"__nv_fma{'f' if fmt is np.float32 else ''}_{mode}"
        want = [ref_round(_exact("fma", v), fmt, mode) for v in zip(a, b, c, strict=True)]
        for target in (J.cpu, J.interp):
            _check(target(sym, a, b, c), want, (sym, target.__name__))
            if mode == "rn":
                plain = "__nv_fmaf" if fmt is np.float32 else "__nv_fma"
                _check(target(plain, a, b, c), want, (plain, target.__name__))
