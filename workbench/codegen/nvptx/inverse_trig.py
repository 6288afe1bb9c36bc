"""``atan``, ``atan2``, ``asin``, ``acos`` in float64 for the CUDA backend's libdevice names
(our own code; float32 arguments are computed in float64 and rounded once).

``atan``: on ``a = |x|``, ``t = 1/a`` above 1 (then ``pi/2 - atan(t)``); ``t`` above
``tan(pi/12)`` is moved to ``u = (t sqrt(3) - 1) / (t + sqrt(3))`` with ``atan(t) = pi/6 +
atan(u)`` (the tangent subtraction formula), so ``|u| <= tan(pi/12) = 0.268`` where the Taylor
series ``u - u^3/3 + u^5/5 - ...`` is summed to ``TERMS`` terms (the first left out is below
``0.268^33 / 33 < 1e-20``); the sign of ``x`` is copied last. Then (C99 Annex F identities)
``asin(x) = atan(x / sqrt((1 - x)(1 + x)))`` (``±1`` gives ``±pi/2`` through ``atan(±inf)``),
``acos(x) = 2 atan(sqrt((1 - x) / (1 + x)))`` (no cancellation near 1) and
``atan2(y, x) = atan(y / x)``, plus ``pi`` with the sign of ``y`` when ``x < 0``, and C99
Annex F (F.10.1.4) where ``y / x`` is NaN or has the sign of a zero ``x``: ``atan2(y, ±0) =
±pi/2`` by the sign of ``y != 0``, ``atan2(±0, +0) = ±0``, ``atan2(±0, -0) = ±pi``,
``atan2(±inf, +inf) = ±pi/4``, ``atan2(±inf, -inf) = ±3pi/4``.
Arguments outside the domains give NaN.
"""
from __future__ import annotations

import math

from llvmlite import ir

from .types import F64

NAMES = frozenset({"atan", "atan2", "asin", "acos"})
TERMS = 16
_TAN_PI_12 = 2.0 - math.sqrt(3.0)


def _c(v):
    return ir.Constant(F64, v)


def _intr(kl, name, args):
    return kl.b.call(kl.intrinsic(f"llvm.{name}.f64", F64, [F64] * len(args)), args)


def atan(kl, x):
    """float64 ``atan(x)`` (module docstring)."""
    b = kl.b
    a = _intr(kl, "fabs", [x])
    inv = b.fcmp_ordered(">", a, _c(1.0))
    t = b.select(inv, b.fdiv(_c(1.0), a), a)
    far = b.fcmp_ordered(">", t, _c(_TAN_PI_12))
    s3 = _c(math.sqrt(3.0))
    u = b.select(far, b.fdiv(b.fsub(b.fmul(t, s3), _c(1.0)), b.fadd(t, s3)), t)
    u2 = b.fmul(u, u)
    p = _c((-1) ** (TERMS - 1) / (2 * TERMS - 1))
    for k in range(TERMS - 2, -1, -1):  # Horner in u^2
        p = b.fadd(b.fmul(p, u2), _c((-1) ** k / (2 * k + 1)))
    r = b.fadd(b.select(far, _c(math.pi / 6), _c(0.0)), b.fmul(u, p))
    r = b.select(inv, b.fsub(_c(math.pi / 2), r), r)
    return _intr(kl, "copysign", [r, x])


def inverse(kl, name, xs):
    """float64 ``name`` (one of :data:`NAMES`) of float64 LLVM values ``xs``."""
    b = kl.b
    x = xs[0]
    one = _c(1.0)
    if name == "atan":
        return atan(kl, x)
    if name == "asin":
        d = _intr(kl, "sqrt", [b.fmul(b.fsub(one, x), b.fadd(one, x))])
        return atan(kl, b.fdiv(x, d))
    if name == "acos":
        q = _intr(kl, "sqrt", [b.fdiv(b.fsub(one, x), b.fadd(one, x))])
        return b.fmul(_c(2.0), atan(kl, q))
    return _atan2(kl, xs[0], xs[1])


def _atan2(kl, y, x):
    """float64 ``atan2(y, x)`` with C99 Annex F's zeros and infinities (module docstring)."""
    b = kl.b
    r = atan(kl, b.fdiv(y, x))
    turn = _intr(kl, "copysign", [_c(math.pi), y])
    r = b.select(b.fcmp_ordered("<", x, _c(0.0)), b.fadd(r, turn), r)
    negative_x = b.icmp_signed("<", b.bitcast(x, ir.IntType(64)), ir.Constant(ir.IntType(64), 0))
    zeros = b.and_(b.fcmp_ordered("==", y, _c(0.0)), b.fcmp_ordered("==", x, _c(0.0)))
    at_zero = _intr(kl, "copysign", [b.select(negative_x, _c(math.pi), _c(0.0)), y])
    inf = _c(math.inf)
    infs = b.and_(b.fcmp_ordered("==", _intr(kl, "fabs", [y]), inf),
                  b.fcmp_ordered("==", _intr(kl, "fabs", [x]), inf))
    at_inf = _intr(kl, "copysign", [b.select(negative_x, _c(3 * math.pi / 4),
                                             _c(math.pi / 4)), y])
    x_zero = b.fcmp_ordered("==", x, _c(0.0))      # y / -0 has the wrong sign for y != 0
    r = b.select(x_zero, _intr(kl, "copysign", [_c(math.pi / 2), y]), r)
    return b.select(zeros, at_zero, b.select(infs, at_inf, r))
