"""Modified Bessel functions of the first kind ``I0`` and ``I1`` (libdevice's
``cyl_bessel_i0``/``cyl_bessel_i1``) in double precision, as LLVM IR for the CPU backend and as
numpy for the interpreter (one formula, two emitters).

For ``a = |x| <= SWITCH`` the power series (Abramowitz and Stegun 9.6.10)
``I_nu(a) = sum_k (a/2)^(2k+nu) / (k! (k+nu)!)``, whose terms are all positive (no
cancellation), summed to ``SERIES_TERMS`` terms (the last term is below 1e-22 of the sum at
``a = 30``). Above, the large-argument expansion (A&S 9.7.1)
``I_nu(a) ~ e^a / sqrt(2 pi a) * sum_k c_k`` with ``c_0 = 1`` and
``c_k = -c_(k-1) (4 nu^2 - (2k - 1)^2) / (8 k a)``, to ``ASYMPTOTIC_TERMS`` terms (its
terms still shrink there, by at most 0.5 a step at ``a = 30``). ``I0`` is even and ``I1``
odd. The libm ``j0``/``j1``/``y0``/``y1`` cover the Bessel functions of the first and second
kind.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir

SWITCH = 30.0
SERIES_TERMS = 60
ASYMPTOTIC_TERMS = 30
ORDERS = {"cyl_bessel_i0": 0, "cyl_bessel_i1": 1}


def bessel_i_numpy(nu: int, x: np.ndarray) -> np.ndarray:
    """``I_nu(x)`` (nu 0 or 1) of a float64 array, by the module's formula."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    small = np.minimum(a, SWITCH)
    q = small * small / 4.0
    t = np.ones_like(a) if nu == 0 else small / 2.0
    s = t.copy()
    for k in range(1, SERIES_TERMS + 1):  # the IR emitter's operation order, step for step
        t = t * (q * (1.0 / (k * (k + nu))))
        s = s + t
    big = np.maximum(a, SWITCH)
    inv = 1.0 / big
    c = np.ones_like(a)
    acc = c.copy()
    for k in range(1, ASYMPTOTIC_TERMS + 1):
        c = c * (inv * (-(4 * nu * nu - (2 * k - 1) ** 2) / (8.0 * k)))
        acc = acc + c
    with np.errstate(over="ignore"):
        asym = np.exp(big) / np.sqrt(big * (2.0 * math.pi)) * acc
    r = np.where(a <= SWITCH, s, asym)
    return np.copysign(r, x) if nu == 1 else r


def emit_bessel_i(b: ir.IRBuilder, module: ir.Module, nu: int, x):
    """LLVM IR for ``I_nu(x)`` of a double ``x`` (straight-line: both branches, one select)."""
    d = ir.DoubleType()

    def c(v):
        return ir.Constant(d, float(v))

    def intr(name, n=1):
        return module.declare_intrinsic(name, [d], ir.FunctionType(d, [d] * n))
    a = b.call(intr("llvm.fabs"), [x])
    small = b.call(intr("llvm.minnum", 2), [a, c(SWITCH)])
    q = b.fmul(b.fmul(small, small), c(0.25))
    t = c(1.0) if nu == 0 else b.fmul(small, c(0.5))
    s = t
    for k in range(1, SERIES_TERMS + 1):
        t = b.fmul(t, b.fmul(q, c(1.0 / (k * (k + nu)))))
        s = b.fadd(s, t)
    big = b.call(intr("llvm.maxnum", 2), [a, c(SWITCH)])
    inv = b.fdiv(c(1.0), big)
    term = c(1.0)
    acc = term
    for k in range(1, ASYMPTOTIC_TERMS + 1):
        coef = -(4 * nu * nu - (2 * k - 1) ** 2) / (8.0 * k)
        term = b.fmul(term, b.fmul(inv, c(coef)))
        acc = b.fadd(acc, term)
    scale = b.fdiv(b.call(intr("llvm.exp"), [big]),
                   b.call(intr("llvm.sqrt"), [b.fmul(big, c(2.0 * math.pi))]))
    asym = b.fmul(scale, acc)
    r = b.select(b.fcmp_ordered("<=", a, c(SWITCH)), s, asym)
    if nu == 1:
        r = b.call(intr("llvm.copysign", 2), [r, x])
    return b.select(b.fcmp_unordered("uno", x, x), x, r)  # NaN in, NaN out
