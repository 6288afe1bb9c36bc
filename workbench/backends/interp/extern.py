"""``tt.extern_elementwise``: libdevice (``__nv_*``) math functions by name, with numpy.

Float functions compute in float64 and round once to the result type (so they are at least as
accurate as libdevice); integer and predicate functions work on the integer bits. Symbols are
matched after dropping the ``__nv_`` prefix and, for the single-precision spellings, a trailing
``f`` (``__nv_powf`` -> ``pow``; the double predicates drop a ``d``: ``__nv_isnand``).
Symbols beyond the C library's names (rounding-mode arithmetic and conversions, the inverse
error functions, integer intrinsics, bit reinterpretations) live in :mod:`.extern_round` and
:mod:`.extern_more`. Unknown symbols raise NotImplementedError at compile time.
"""
from __future__ import annotations

import math

import numpy as np

from ...codegen.cpu.bessel import bessel_i_numpy
from ...ir.types import FloatType, IntType, Type
from . import extern_more, extern_round
from .dtypes import float_value, from_float, np_dtype, unsigned


def _vec(f):
    u = np.frompyfunc(f, 1, 1)
    return lambda x: u(x).astype(np.float64)


def _rint(x):
    return np.rint(x)  # numpy rounds half to even, like rintf / nearbyintf


def _odd(n):
    return np.fmod(n, 2.0) != 0.0


def _sinpi(x):
    """sin(pi x) with x reduced exactly to r = x - rint(x) in [-1/2, 1/2] first, so results
    near the zeros keep their relative accuracy (as libdevice's sinpi)."""
    n = np.rint(x)
    s = np.sin(np.pi * (x - n))
    s = np.where(_odd(n), -s, s)
    return np.where(s == 0.0, np.copysign(0.0, x), s)  # sinPi(+-n) = +-0 (IEEE 754-2019)


def _cospi(x):
    """cos(pi x) from r = |x - rint(x)|: cos(pi r) below 1/4, else sin(pi (1/2 - r)), whose
    argument is exact (Sterbenz), so results near the zeros stay accurate."""
    n = np.rint(x)
    r = np.abs(x - n)
    c = np.where(r < 0.25, np.cos(np.pi * r), np.sin(np.pi * (0.5 - r)))
    c = np.where(_odd(n), -c, c)
    return np.where(c == 0.0, 0.0, c)  # cosPi(n + 1/2) = +0


def _round(x):  # C round(): half away from zero (exact: no x + 0.5, which rounds up
    t = np.trunc(x)  # 0.49999999999999994 to 1)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


FLOAT_FUNCS = {
    "pow": np.power, "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x),
    "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "atan2": np.arctan2, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "cbrt": np.cbrt, "rcbrt": lambda x: 1.0 / np.cbrt(x),
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": _round, "rint": _rint,
    "nearbyint": _rint, "fabs": np.abs, "fmax": np.fmax, "fmin": np.fmin, "fmod": np.fmod,
    "hypot": np.hypot, "copysign": np.copysign,
    "fdim": lambda a, b: np.where(a <= b, 0.0, a - b),  # NaN in, NaN out (C fdim)
    "erf": _vec(math.erf),
    "erfc": _vec(math.erfc),
    "lgamma": _vec(math.lgamma), "tgamma": _vec(math.gamma), "fma": lambda a, b, c: a * b + c,
    "div_rn": np.divide, "fdiv_rn": np.divide, "sqrt_rn": np.sqrt, "rcp": lambda x: 1.0 / x,
    "saturate": lambda x: np.clip(x, 0.0, 1.0), "sinpi": _sinpi,
    "cospi": _cospi, "fast_exp": np.exp, "fast_log": np.log,
    "ldexp": lambda x, e: np.ldexp(x, e), "scalbn": lambda x, e: np.ldexp(x, e),
}


def _libm1(name: str, nargs: int = 1):
    """The C library's double function ``name`` of ``nargs`` arguments, elementwise."""
    import ctypes
    import ctypes.util
    fn = getattr(ctypes.CDLL(ctypes.util.find_library("m")), name)
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double] * nargs
    u = np.frompyfunc(fn, nargs, 1)
    return lambda *xs: u(*xs).astype(np.float64)


FLOAT_FUNCS["remainder"] = _libm1("remainder", 2)  # IEEE remainder, as the CPU backend's
for _n in ("j0", "j1", "y0", "y1", "tgamma", "lgamma"):  # the same libm as the CPU backend
    FLOAT_FUNCS[_n] = _libm1(_n)
FLOAT_FUNCS["cyl_bessel_i0"] = lambda x: bessel_i_numpy(0, x)
FLOAT_FUNCS["cyl_bessel_i1"] = lambda x: bessel_i_numpy(1, x)

PRED_FUNCS = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
              "finite": np.isfinite, "signbit": np.signbit}


def _popc(x):
    return np.bitwise_count(unsigned(x))


def _clz(x):
    u = unsigned(x)
    width = u.dtype.itemsize * 8
    n = np.zeros(u.shape, dtype=np.int32)
    y = u.copy()
    shift = width // 2
    while shift:
        top = (y >> u.dtype.type(width - shift)) == 0
        n += np.where(top, shift, 0).astype(np.int32)
        y = np.where(top, y << u.dtype.type(shift), y)
        shift //= 2
    return np.where(u == 0, width, n).astype(np.int32)


def _brev(x):
    u = unsigned(x)
    width = u.dtype.itemsize * 8
    out = np.zeros_like(u)
    for i in range(width):
        out |= ((u >> u.dtype.type(i)) & u.dtype.type(1)) << u.dtype.type(width - 1 - i)
    return out.view(x.dtype)


INT_FUNCS = {
    "abs": np.abs, "llabs": np.abs, "min": np.minimum, "max": np.maximum, "llmin": np.minimum,
    "llmax": np.maximum, "umin": lambda a, b: np.minimum(unsigned(a), unsigned(b)).view(a.dtype),
    "umax": lambda a, b: np.maximum(unsigned(a), unsigned(b)).view(a.dtype),
    "ullmin": lambda a, b: np.minimum(unsigned(a), unsigned(b)).view(a.dtype),
    "ullmax": lambda a, b: np.maximum(unsigned(a), unsigned(b)).view(a.dtype),
    "popc": _popc, "popcll": _popc, "clz": _clz, "clzll": _clz, "brev": _brev, "brevll": _brev,
}


def _lookup(symbol: str, table: dict):
    name = symbol[5:] if symbol.startswith("__nv_") else symbol
    if name in table:
        return table[name]
    if name.endswith("f") and name[:-1] in table:
        return table[name[:-1]]
    if table is PRED_FUNCS and name.endswith("d") and name[:-1] in table:
        return table[name[:-1]]  # the double-precision predicates: __nv_isnand, __nv_signbitd
    return None


def extern_fn(symbol: str, in_types: list, out: Type):
    """A numpy function for libdevice ``symbol`` with IR operand types ``in_types`` and result
    type ``out``. Raises NotImplementedError for symbols not in the tables above.

    Symbols spelled as libdevice's rounding-mode arithmetic and conversions go to
    :mod:`.extern_round`, those in :data:`.extern_more.FUNCS` (matched by full name) there."""
    name = symbol[5:] if symbol.startswith("__nv_") else symbol
    exact = extern_round.lookup(name) or extern_more.FUNCS.get(name)
    if exact is not None:
        odt_ = np_dtype(out)
        return lambda *xs: np.asarray(exact(*xs)).astype(odt_, copy=False)
    is_float_in = bool(in_types) and isinstance(in_types[0].scalar, FloatType)
    odt = np_dtype(out)
    if is_float_in:
        f = _lookup(symbol, PRED_FUNCS)
        if f is not None:
            return lambda *xs: f(*[float_value(x, t)
                                   for x, t in zip(xs, in_types, strict=False)]).astype(odt)
        f = _lookup(symbol, FLOAT_FUNCS)
        if f is not None:
            def run(*xs):
                args = [float_value(x, t).astype(np.float64) if isinstance(t.scalar, FloatType)
                        else x for x, t in zip(xs, in_types, strict=False)]
                r = np.asarray(f(*args))
                if isinstance(out.scalar, FloatType):
                    return from_float(r.astype(np.float64), out)
                return r.astype(odt)
            return run
    elif in_types and isinstance(in_types[0].scalar, IntType):
        f = _lookup(symbol, INT_FUNCS)
        if f is not None:
            return lambda *xs: np.asarray(f(*xs)).astype(odt, copy=False)
    raise NotImplementedError(
        f"the interpreter does not know the extern function {symbol!r}")
