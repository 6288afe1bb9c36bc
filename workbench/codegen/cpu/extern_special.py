"""The error-function family libdevice has and the C library lacks, written once for both
targets: ``erfcx``, ``erfinv``, ``erfcinv``, ``normcdf``, ``normcdfinv`` in float64.

Each algorithm is a straight-line sequence of IEEE operations on an *ops* object: the
interpreter passes :class:`NumpyOps` (numpy arrays), the CPU backend ``extern_more.IrOps``
(llvmlite values, one element). Both therefore compute the same double-precision result up to
the C library's ``erf``/``erfc``/``exp``/``log``, which both call (the interpreter through
ctypes): they agree bit for bit.

Formulas:

* ``erfcx(x) = exp(x**2) * erfc(x)`` with ``x**2`` as an exact double-double (Dekker's
  product, Veltkamp's split), for ``x < 25``; beyond, the asymptotic series
  ``erfcx(x) = 1/(x sqrt(pi)) * sum_k (-1)^k (2k-1)!! / (2x^2)^k`` (Abramowitz and Stegun
  7.1.23), twelve terms (relative error below 1e-25 at x = 25).
* ``erfcinv(y)``: for ``y`` in [0.5, 1.5] it is ``erfinv(1 - y)`` (``1 - y`` exact); for
  ``y < 0.5`` four Newton steps on ``log erfc(x) = log erfcx(x) - x**2`` from the rational
  approximation of the normal quantile of Abramowitz and Stegun 26.2.23 (error < 4.5e-4);
  ``y > 1.5`` by ``erfcinv(y) = -erfcinv(2 - y)``.
* ``erfinv(y)`` for ``|y| < 0.5``: four Newton steps on ``erf`` from the series
  ``sqrt(pi)/2 (y + pi y^3/12 + 7 pi^2 y^5/480)``; otherwise ``sign(y) erfcinv(1 - |y|)``.
* ``normcdf(x) = erfc(-x/sqrt 2) / 2`` with ``x/sqrt 2`` as a double-double, the low part
  applied through ``erfc' = -2/sqrt(pi) exp(-t**2)``; ``normcdfinv(p) = -sqrt 2 erfcinv(2p)``.

Accuracy (measured against mpmath in ``tests/codegen/test_libdevice_all.py``): within 3 ulp
in float64, so fp32 results are correctly rounded or 1 ulp off; CUDA documents 2 (fp32) and
5-8 (fp64) ulp for these functions.
"""
from __future__ import annotations

import math

import numpy as np

SQRT_PI_2 = math.sqrt(math.pi) / 2
INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
INV_SQRT2_HI = 0.7071067811865476
INV_SQRT2_LO = -4.833646656726457e-17  # 1/sqrt(2) - INV_SQRT2_HI
_DFACT = [1, 3, 15, 105, 945, 10395, 135135, 2027025, 34459425, 654729075, 13749310575,
          316234143225]


class NumpyOps:
    """The ops interface on numpy float64 arrays (see the module docstring)."""

    def c(self, v):
        return np.float64(v)

    def add(self, a, b):
        return a + b

    def sub(self, a, b):
        return a - b

    def mul(self, a, b):
        return a * b

    def div(self, a, b):
        return a / b

    def call(self, name, x):
        fn = {"exp": _EXP, "log": _LOG, "sqrt": np.sqrt, "fabs": np.abs,
              "erf": _ERF, "erfc": _ERFC}[name]
        return np.asarray(fn(x), dtype=np.float64)

    def lt(self, a, b):
        return np.less(a, b)

    def eq(self, a, b):
        return np.equal(a, b)

    def or_(self, a, b):
        return np.logical_or(a, b)

    def where(self, cond, a, b):
        return np.where(cond, a, b)


def _libm_vec(name):
    import ctypes
    import ctypes.util
    fn = getattr(ctypes.CDLL(ctypes.util.find_library("m")), name)
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double]
    u = np.frompyfunc(fn, 1, 1)
    return lambda x: u(np.asarray(x, dtype=np.float64)).astype(np.float64)


_ERF, _ERFC, _EXP, _LOG = (_libm_vec(n) for n in ("erf", "erfc", "exp", "log"))


def two_prod(o, a, b):
    """(p, e) with p + e = a*b exactly (Dekker, Veltkamp's split; |a|, |b| < 1e150)."""
    def split(x):
        t = o.mul(o.c(134217729.0), x)
        hi = o.sub(t, o.sub(t, x))
        return hi, o.sub(x, hi)
    ah, al = split(a)
    bh, bl = split(b)
    p = o.mul(a, b)
    e = o.add(o.add(o.add(o.sub(o.mul(ah, bh), p), o.mul(ah, bl)), o.mul(al, bh)),
              o.mul(al, bl))
    return p, e


def erfcx(o, x):
    """exp(x^2) erfc(x), float64 (see the module docstring)."""
    h, lo = two_prod(o, x, x)
    near = o.mul(o.mul(o.call("exp", h), o.add(o.c(1.0), lo)), o.call("erfc", x))
    u = o.div(o.c(0.5), o.mul(x, x))
    s = o.c(0.0)
    for k in range(len(_DFACT), 0, -1):  # Horner: 1 + u (c1 + u (c2 + ...)), c_k = (-1)^k (2k-1)!!
        s = o.mul(u, o.add(o.c(float((-1) ** k * _DFACT[k - 1])), s))
    far = o.div(o.add(o.c(1.0), s), o.mul(x, o.c(1.0 / INV_SQRT_PI)))
    return o.where(o.lt(x, o.c(25.0)), near, far)


def _erfinv_small(o, y):
    """erfinv(y) for |y| <= 0.5."""
    y2 = o.mul(y, y)
    x = o.mul(o.mul(o.c(SQRT_PI_2), y), o.add(o.c(1.0), o.mul(y2, o.add(
        o.c(math.pi / 12), o.mul(y2, o.c(7 * math.pi ** 2 / 480))))))
    for _ in range(4):
        r = o.sub(o.call("erf", x), y)
        x = o.sub(x, o.mul(o.mul(r, o.c(SQRT_PI_2)), o.call("exp", o.mul(x, x))))
    return x


def _erfcinv_tail(o, z):
    """erfcinv(z) for 0 < z < 0.5."""
    t = o.call("sqrt", o.mul(o.c(-2.0), o.call("log", o.mul(z, o.c(0.5)))))
    num = o.add(o.c(2.515517), o.mul(t, o.add(o.c(0.802853), o.mul(t, o.c(0.010328)))))
    den = o.add(o.c(1.0), o.mul(t, o.add(o.c(1.432788), o.mul(t, o.add(
        o.c(0.189269), o.mul(t, o.c(0.001308)))))))
    x = o.mul(o.sub(t, o.div(num, den)), o.c(INV_SQRT2_HI))
    logz = o.call("log", z)
    for _ in range(4):
        cx = erfcx(o, x)
        h, lo = two_prod(o, x, x)
        g = o.sub(o.sub(o.sub(o.call("log", cx), h), lo), logz)
        x = o.add(x, o.mul(o.mul(g, o.c(SQRT_PI_2)), cx))
    return x


def erfcinv(o, y):
    """The inverse of erfc on [0, 2], float64 (NaN outside, +inf at 0, -inf at 2)."""
    upper = o.lt(o.c(1.0), y)
    z = o.where(upper, o.sub(o.c(2.0), y), y)
    tail = _erfcinv_tail(o, o.where(o.lt(z, o.c(0.5)), z, o.c(0.25)))
    mid = _erfinv_small(o, o.sub(o.c(1.0), o.where(o.lt(z, o.c(0.5)), o.c(0.75), z)))
    x = o.where(o.lt(z, o.c(0.5)), tail, mid)
    x = o.where(o.eq(z, o.c(0.0)), o.c(math.inf), x)
    x = o.where(upper, o.sub(o.c(0.0), x), x)
    bad = o.or_(o.lt(y, o.c(0.0)), o.lt(o.c(2.0), y))
    return o.where(bad, o.c(math.nan), x)


def erfinv(o, y):
    """The inverse of erf on [-1, 1], float64 (NaN outside, +-inf at +-1)."""
    ay = o.call("fabs", y)
    small = o.lt(ay, o.c(0.5))
    a = _erfinv_small(o, o.where(small, y, o.c(0.0)))
    b = erfcinv(o, o.sub(o.c(1.0), o.where(small, o.c(1.0), ay)))
    b = o.where(o.lt(y, o.c(0.0)), o.sub(o.c(0.0), b), b)
    return o.where(small, a, b)


def normcdf(o, x):
    """The standard normal distribution function, float64."""
    t, e = two_prod(o, o.sub(o.c(0.0), x), o.c(INV_SQRT2_HI))
    lo = o.add(e, o.mul(o.sub(o.c(0.0), x), o.c(INV_SQRT2_LO)))
    corr = o.mul(o.mul(o.c(2 * INV_SQRT_PI), o.call("exp", o.sub(o.c(0.0), o.mul(t, t)))), lo)
    big = o.lt(o.c(40.0), o.call("fabs", x))
    corr = o.where(big, o.c(0.0), corr)
    return o.mul(o.c(0.5), o.sub(o.call("erfc", t), corr))


def normcdfinv(o, p):
    """The inverse of :func:`normcdf` on [0, 1], float64."""
    return o.mul(o.c(-1.0 / INV_SQRT2_HI), erfcinv(o, o.mul(o.c(2.0), p)))


FUNCS = {"erfcx": erfcx, "erfinv": erfinv, "erfcinv": erfcinv, "normcdf": normcdf,
         "normcdfinv": normcdfinv}
