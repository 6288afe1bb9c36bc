"""More libdevice functions for :mod:`.libdevice`, computed in float64 from our own ``exp`` and
``log`` (:mod:`.mathlib`, about 1 ulp) and rounded once to the result type.

For float32 arguments the float64 intermediate makes the result correctly rounded in nearly
every case; for float64 arguments the error is a few ulp (no extra-precise steps). Small
arguments avoid cancellation:

* ``expm1(x) = (u - 1) x / log u`` with ``u = e^x`` (Kahan), ``x`` when ``u = 1``
* ``log1p(x) = log(u) x / (u - 1)`` with ``u = 1 + x`` (Goldberg 1991, "What every computer
  scientist should know about floating-point arithmetic", thm. 4), ``x`` when ``u = 1``
* ``sinh = (expm1(x) - expm1(-x)) / 2``, ``cosh = (e^x + e^-x) / 2`` (above |x| = 20,
  ``±(e^(|x|/2) / 2) e^(|x|/2)``, finite up to the true overflow at 710.4758),
  ``tanh = expm1(2x) / (expm1(2x) + 2)`` (``|x| > 20``: ``sign(x)``)
* ``asinh = sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2)))``,
  ``acosh = log(x + sqrt(x^2 - 1))``, ``atanh = (log1p(x) - log1p(-x)) / 2``
* ``cbrt = sign(x) exp(log|x| / 3)``, ``rcbrt = 1 / cbrt``, ``hypot = sqrt(x^2 + y^2)`` (in
  float64 for float32 arguments only), ``ldexp``/``scalbn`` (two exact power-of-two scalings)
* ``pow(x, y) = exp(y log|x|)`` with C's special cases (``y = 0`` or ``x = 1``: 1; ``x < 0``:
  NaN unless ``y`` is an integer, negative when ``y`` is odd); float32 only.
"""
from __future__ import annotations

import math

from llvmlite import ir

from . import inverse_trig
from .mathlib import exp_f64, log_f64
from .types import F64, I32, I64

F64_NAMES = frozenset({"expm1", "log1p", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                       "cbrt", "rcbrt", "ldexp", "scalbn"}) | inverse_trig.NAMES
F32_ONLY_NAMES = frozenset({"hypot", "pow"})


def _c(v):
    return ir.Constant(F64, v)


def _call(kl, name, args):
    return kl.b.call(kl.intrinsic(f"llvm.{name}.f64", F64, [F64] * len(args)), args)


def expm1(kl, x):
    """Kahan's ``(u - 1) * x / log(u)`` with ``u = e^x`` (cancels the rounding of ``u``).

    Above ``x = 40`` ``e^x > 2^53``, so ``e^x - 1`` rounds to ``e^x``: the result is ``u``
    there, which also keeps ``(u - 1) * x`` from overflowing between ``x = 703`` and the true
    overflow at 709.78."""
    b = kl.b
    u = exp_f64(kl, x)
    um1 = b.fsub(u, _c(1.0))
    r = b.fdiv(b.fmul(um1, x), log_f64(kl, u))
    r = b.select(b.fcmp_ordered(">", x, _c(40.0)), u, r)
    r = b.select(b.fcmp_ordered("==", um1, _c(-1.0)), _c(-1.0), r)
    r = b.select(b.fcmp_ordered("==", u, _c(math.inf)), u, r)
    return b.select(b.fcmp_ordered("==", u, _c(1.0)), x, r)


def log1p(kl, x):
    """Goldberg's ``log(u) * x / (u - 1)`` with ``u = 1 + x`` (cancels the rounding of ``u``)."""
    b = kl.b
    u = b.fadd(x, _c(1.0))
    r = b.fmul(log_f64(kl, u), b.fdiv(x, b.fsub(u, _c(1.0))))
    r = b.select(b.fcmp_ordered("==", u, _c(math.inf)), u, r)
    r = b.select(b.fcmp_ordered("==", u, _c(0.0)), _c(-math.inf), r)
    return b.select(b.fcmp_ordered("==", u, _c(1.0)), x, r)


def _sign(kl, y, x):
    return _call(kl, "copysign", [y, x])


def special(kl, name, xs):
    """float64 ``name`` of float64 LLVM values ``xs`` (``ldexp``/``scalbn``: an integer
    second argument). Raises KeyError for a name not in :data:`F64_NAMES`."""
    b = kl.b
    x = xs[0]
    if name == "expm1":
        return expm1(kl, x)
    if name == "log1p":
        return log1p(kl, x)
    if name in ("sinh", "cosh"):
        return _sinh_cosh(kl, name, x)
    if name == "tanh":
        return _tanh(kl, x)
    if name == "asinh":
        return _asinh(kl, x)
    if name == "acosh":
        return _acosh(kl, x)
    if name == "atanh":
        return b.fmul(b.fsub(log1p(kl, x), log1p(kl, b.fneg(x))), _c(0.5))
    if name in ("cbrt", "rcbrt"):
        return _cbrt(kl, name, x)
    if name == "hypot":
        return _hypot(kl, x, xs[1])
    if name in ("ldexp", "scalbn"):
        return _ldexp(kl, x, xs[1])
    if name == "pow":
        return _pow(kl, x, xs[1])
    if name in inverse_trig.NAMES:
        return inverse_trig.inverse(kl, name, xs)
    raise KeyError(name)


def _sinh_cosh(kl, name, x):
    b = kl.b
    if name == "sinh":
        r = b.fmul(b.fsub(expm1(kl, x), expm1(kl, b.fneg(x))), _c(0.5))
    else:
        r = b.fmul(b.fadd(exp_f64(kl, x), exp_f64(kl, b.fneg(x))), _c(0.5))
    # above |x| = 20, e^-|x| is below half an ulp of e^|x|, so the result is e^|x| / 2,
    # computed as (e^(|x|/2) / 2) * e^(|x|/2) (the halvings exact): finite up to the true
    # overflow at 710.4758, where e^|x| alone (and expm1's (u - 1) x) overflow earlier
    ax = _call(kl, "fabs", [x])
    h = exp_f64(kl, b.fmul(ax, _c(0.5)))
    big = b.fmul(b.fmul(h, _c(0.5)), h)
    if name == "sinh":
        big = _sign(kl, big, x)
    return b.select(b.fcmp_ordered(">", ax, _c(20.0)), big, r)


def _tanh(kl, x):
    b = kl.b
    e = expm1(kl, b.fmul(x, _c(2.0)))
    t = b.fdiv(e, b.fadd(e, _c(2.0)))
    big = b.fcmp_ordered(">", _call(kl, "fabs", [x]), _c(20.0))
    return b.select(big, _sign(kl, _c(1.0), x), t)


def _asinh(kl, x):
    b = kl.b
    a = _call(kl, "fabs", [x])
    a2 = b.fmul(a, a)
    t = b.fadd(a, b.fdiv(a2, b.fadd(_c(1.0), _call(kl, "sqrt", [b.fadd(_c(1.0), a2)]))))
    r = log1p(kl, t)
    huge = b.fcmp_ordered(">", a, _c(1e150))  # a^2 overflows: log(2a)
    r = b.select(huge, b.fadd(log_f64(kl, a), _c(math.log(2.0))), r)
    return _sign(kl, r, x)


def _acosh(kl, x):
    b = kl.b
    s = _call(kl, "sqrt", [b.fmul(b.fsub(x, _c(1.0)), b.fadd(x, _c(1.0)))])
    r = log_f64(kl, b.fadd(x, s))
    huge = b.fcmp_ordered(">", x, _c(1e150))
    r = b.select(huge, b.fadd(log_f64(kl, x), _c(math.log(2.0))), r)
    return b.select(b.fcmp_ordered("<", x, _c(1.0)), _c(math.nan), r)


def _cbrt(kl, name, x):
    b = kl.b
    a = _call(kl, "fabs", [x])
    r = exp_f64(kl, b.fmul(log_f64(kl, a), _c(1.0 / 3.0)))
    # one Newton step on r^3 = a (r > 0 finite): r -= (r - a / r^2) / 3
    newton = b.fsub(r, b.fmul(b.fsub(r, b.fdiv(a, b.fmul(r, r))), _c(1.0 / 3.0)))
    finite = b.and_(b.fcmp_ordered(">", r, _c(0.0)), b.fcmp_ordered("<", r, _c(math.inf)))
    r = _sign(kl, b.select(finite, newton, r), x)
    return r if name == "cbrt" else b.fdiv(_c(1.0), r)


def _hypot(kl, x, y):
    b = kl.b
    r = _call(kl, "sqrt", [b.fadd(b.fmul(x, x), b.fmul(y, y))])
    inf = b.or_(b.fcmp_ordered("==", _call(kl, "fabs", [x]), _c(math.inf)),
                b.fcmp_ordered("==", _call(kl, "fabs", [y]), _c(math.inf)))
    return b.select(inf, _c(math.inf), r)


def _ldexp(kl, x, e):
    b = kl.b
    e = b.sext(e, I32) if e.type.width < 32 else (b.trunc(e, I32) if e.type.width > 32
                                                   else e)
    e = b.select(b.icmp_signed("<", e, I32(-2200)), I32(-2200), e)
    e = b.select(b.icmp_signed(">", e, I32(2200)), I32(2200), e)
    half = b.ashr(e, I32(1))
    out = x
    for part in (half, b.sub(e, half)):  # each |part| <= 1100: two scalings of <= 2^1100
        q = b.ashr(part, I32(1))
        for p in (q, b.sub(part, q)):
            bits = b.shl(b.zext(b.add(p, I32(1023)), I64), I64(52))
            out = b.fmul(out, b.bitcast(bits, F64))
    return out


def _pow(kl, x, y):
    b = kl.b
    a = _call(kl, "fabs", [x])
    r = exp_f64(kl, b.fmul(y, log_f64(kl, a)))
    y_int = b.fcmp_ordered("==", _call(kl, "trunc", [y]), y)
    half = b.fmul(y, _c(0.5))
    y_odd = b.and_(y_int, b.fcmp_ordered("!=", _call(kl, "trunc", [half]), half))
    neg = b.and_(b.fcmp_ordered("<", x, _c(0.0)), b.fcmp_ordered("!=", x, _c(-math.inf)))
    r = b.select(b.and_(neg, b.not_(y_int)), _c(math.nan), r)
    r = b.select(b.and_(y_odd, b.fcmp_ordered("<", _sign(kl, _c(1.0), x), _c(0.0))),
                 b.fneg(r), r)
    one = b.or_(b.fcmp_ordered("==", y, _c(0.0)), b.fcmp_ordered("==", x, _c(1.0)))
    one = b.or_(one, b.and_(b.fcmp_ordered("==", x, _c(-1.0)),
                            b.fcmp_ordered("==", _call(kl, "fabs", [y]), _c(math.inf))))
    return b.select(one, _c(1.0), r)


__all__ = ["special", "expm1", "log1p", "F64_NAMES", "F32_ONLY_NAMES"]
