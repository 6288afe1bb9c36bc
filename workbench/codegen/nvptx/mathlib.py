"""Math functions the CUDA backend computes itself (no libdevice): ``erf`` in f32 and ``exp``,
``exp2``, ``log``, ``log2`` in f64 (``sin``, ``cos``, ``tan`` in f64: :mod:`.trig_f64`).

* ``erf(x)`` (f32): for ``|x| < 1``, ``x * P(x^2)`` with a degree-6 polynomial; for
  ``1 <= |x| < 4``, ``1 - exp(Q(|x|))`` with ``Q`` a degree-10 polynomial fitted to
  ``log(erfc(t))``; ``sign(x)`` beyond 4 (erf(4) rounds to 1 in f32). Coefficients are our own
  least-squares fits on Chebyshev nodes (relative error weighted); measured against
  ``math.erf`` on [-5, 5] in f32 arithmetic: max abs error 1.2e-7, max rel error 1.9e-7.
  Polynomials are evaluated with ``fma`` (Horner); ``exp`` is ``ex2.approx.f32`` (PTX ISA
  9.7.3.22).
* ``exp(x)`` (f64): ``2^k * e^r`` with ``k = rint(x / ln 2)`` and ``r = x - k ln2`` (ln 2 in
  two parts, Cody-Waite), ``e^r`` by its Taylor series to degree 13 (|r| <= 0.35, truncation
  < 5e-18), and ``2^k`` applied as two exponent-field scalings so subnormal results come out
  right; overflow -> inf, underflow -> 0, NaN -> NaN.
* ``log(x)`` (f64): ``x = m 2^e`` with ``m`` in [sqrt(1/2), sqrt(2)); ``log m = 2 atanh(s)``,
  ``s = (m - 1)/(m + 1)`` (|s| < 0.172) by its odd series to s^23; ``e ln 2`` in two parts.
  Subnormal inputs are scaled by 2^54 first; ``x < 0`` -> NaN, ``0`` -> -inf, ``inf`` -> inf.
"""
from __future__ import annotations

import math

from llvmlite import ir

from .trig_llvm import trig_f64_llvm
from .types import F32, F64, I32, I64

ERF_SMALL = [7.898210606072098e-05, -0.0008024353883229196, 0.00519005348905921,
             -0.026854809373617172, 0.11283612251281738, -0.3761262893676758,
             1.128379225730896]
ERF_LARGE = [-5.805675584724668e-08, 1.3800269016428501e-06, -1.2782323210558388e-05,
             4.104879917576909e-05, 0.00026026915293186903, -0.0038914934266358614,
             0.024907950311899185, -0.10832062363624573, -0.6331322193145752,
             -1.1296740770339966, 0.00021515064872801304]
LN2_HI = 6.93147180369123816490e-01   # upper bits of ln 2 (k * LN2_HI is exact for |k| < 2^11)
LN2_LO = 1.90821492927058770002e-10


def _fma(kl, a, b, c):
    t = a.type
    name = "llvm.fma.f32" if t == F32 else "llvm.fma.f64"
    return kl.b.call(kl.intrinsic(name, t, [t, t, t]), [a, b, c])


def horner(kl, coeffs, x):
    """``sum(coeffs[i] * x^(n-1-i))`` with fma (coefficients highest degree first)."""
    t = x.type
    r = ir.Constant(t, coeffs[0])
    for c in coeffs[1:]:
        r = _fma(kl, r, x, ir.Constant(t, c))
    return r


def erf_f32(kl, x):
    """erf of an f32 LLVM value (see the module docstring)."""
    b = kl.b
    ax = b.call(kl.intrinsic("llvm.fabs.f32", F32, [F32]), [x])
    small = b.fmul(horner(kl, ERF_SMALL, b.fmul(x, x)), x)
    q = horner(kl, ERF_LARGE, ax)
    e = b.call(kl.intrinsic("llvm.nvvm.ex2.approx.f32", F32, [F32]),
               [b.fmul(q, ir.Constant(F32, 1.4426950408889634))])
    large = b.fsub(ir.Constant(F32, 1.0), e)
    large = b.select(b.fcmp_ordered(">=", ax, ir.Constant(F32, 4.0)), ir.Constant(F32, 1.0),
                     large)
    large = b.call(kl.intrinsic("llvm.copysign.f32", F32, [F32, F32]), [large, x])
    return b.select(b.fcmp_unordered("<", ax, ir.Constant(F32, 1.0)), small, large)


def _pow2_f64(kl, k):
    """2.0^k (f64) for an i32 ``k`` in [-1022, 1023]."""
    b = kl.b
    bits = b.shl(b.zext(b.add(k, I32(1023)), I64), I64(52))
    return b.bitcast(bits, F64)


def exp_f64(kl, x):
    """e^x of an f64 LLVM value."""
    b = kl.b
    kf = b.call(kl.intrinsic("llvm.rint.f64", F64, [F64]),
                [b.fmul(x, ir.Constant(F64, 1.0 / math.log(2.0)))])
    kf = b.call(kl.intrinsic("llvm.maxnum.f64", F64, [F64, F64]),
                [b.call(kl.intrinsic("llvm.minnum.f64", F64, [F64, F64]),
                        [kf, ir.Constant(F64, 1100.0)]), ir.Constant(F64, -1100.0)])
    r = _fma(kl, kf, ir.Constant(F64, -LN2_HI), x)
    r = _fma(kl, kf, ir.Constant(F64, -LN2_LO), r)
    coeffs = [1.0 / math.factorial(n) for n in range(13, -1, -1)]
    p = horner(kl, coeffs, r)
    k = b.fptosi(kf, I32)
    half = b.ashr(k, I32(1))
    rest = b.sub(k, half)
    half = _clamp_i32(kl, half, -1022, 1023)
    rest = _clamp_i32(kl, rest, -1022, 1023)
    y = b.fmul(b.fmul(p, _pow2_f64(kl, half)), _pow2_f64(kl, rest))
    y = b.select(b.fcmp_ordered(">", x, ir.Constant(F64, 709.782712893384)),
                 ir.Constant(F64, math.inf), y)
    y = b.select(b.fcmp_ordered("<", x, ir.Constant(F64, -745.2)), ir.Constant(F64, 0.0), y)
    return b.select(b.fcmp_unordered("uno", x, x), x, y)


def _clamp_i32(kl, v, lo, hi):
    b = kl.b
    v = b.select(b.icmp_signed("<", v, I32(lo)), I32(lo), v)
    return b.select(b.icmp_signed(">", v, I32(hi)), I32(hi), v)


def log_f64(kl, x):
    """Natural log of an f64 LLVM value."""
    b = kl.b
    tiny = b.fcmp_ordered("<", x, ir.Constant(F64, 2.2250738585072014e-308))
    xs = b.select(tiny, b.fmul(x, ir.Constant(F64, 2.0 ** 54)), x)
    bits = b.bitcast(xs, I64)
    e = b.sub(b.trunc(b.and_(b.lshr(bits, I64(52)), I64(0x7FF)), I32), I32(1023))
    e = b.select(tiny, b.sub(e, I32(54)), e)
    m = b.bitcast(b.or_(b.and_(bits, I64((1 << 52) - 1)), I64(1023 << 52)), F64)
    big = b.fcmp_ordered(">", m, ir.Constant(F64, math.sqrt(2.0)))
    m = b.select(big, b.fmul(m, ir.Constant(F64, 0.5)), m)
    e = b.select(big, b.add(e, I32(1)), e)
    s = b.fdiv(b.fsub(m, ir.Constant(F64, 1.0)), b.fadd(m, ir.Constant(F64, 1.0)))
    s2 = b.fmul(s, s)
    coeffs = [2.0 / n for n in range(23, 0, -2)]  # 2/23 s^22 + ... + 2
    lm = b.fmul(horner(kl, coeffs, s2), s)
    ef = b.sitofp(e, F64)
    y = _fma(kl, ef, ir.Constant(F64, LN2_HI), _fma(kl, ef, ir.Constant(F64, LN2_LO), lm))
    y = b.select(b.fcmp_ordered("==", x, ir.Constant(F64, math.inf)), x, y)
    y = b.select(b.fcmp_ordered("==", x, ir.Constant(F64, 0.0)),
                 ir.Constant(F64, -math.inf), y)
    nan = ir.Constant(F64, math.nan)
    return b.select(b.fcmp_unordered("<", x, ir.Constant(F64, 0.0)), nan, y)


def f64_math(kl, base, x):
    """f64 ``exp``, ``exp2``, ``log``, ``log2``, ``sin``, ``cos``, ``tan``
    (:mod:`.trig_f64`); None for other functions."""
    b = kl.b
    if base in ("sin", "cos", "tan"):
        return trig_f64_llvm(kl, base, x)
    if base == "exp":
        return exp_f64(kl, x)
    if base == "exp2":
        return exp_f64(kl, b.fmul(x, ir.Constant(F64, math.log(2.0))))
    if base == "log":
        return log_f64(kl, x)
    if base == "log2":
        return b.fmul(log_f64(kl, x), ir.Constant(F64, 1.0 / math.log(2.0)))
    return None


__all__ = ["erf_f32", "exp_f64", "log_f64", "f64_math", "horner", "ERF_SMALL", "ERF_LARGE"]
