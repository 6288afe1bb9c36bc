"""libdevice symbols beyond the C library's names, by their full libdevice spelling.

Every entry takes the operand arrays as the interpreter holds them (fp32/fp64 arrays, int32 /
int64 arrays, unsigned operands in the signed dtype of their width) and returns the result
array. Semantics from the CUDA Math API reference ("Mathematical Functions", "Integer
Intrinsics", "Type Casting Intrinsics"):

* the error-function family (``erfinv``, ``erfcinv``, ``erfcx``, ``normcdf``,
  ``normcdfinv``) is :mod:`workbench.codegen.cpu.extern_special` in float64, rounded once;
* ``nextafter`` steps in the operands' own precision; ``ilogb`` gives INT_MIN for 0 and NaN and
  INT_MAX for infinities, ``logb`` -inf/+inf/NaN; ``llrint``/``llround`` round (half to even /
  half away from zero) and saturate, NaN -> 0 as PTX ``cvt`` does;
* ``norm3d``/``norm4d``/``rhypot``/``rnorm*`` scale by a power of two of the largest magnitude
  before summing squares (no spurious overflow), any infinite operand gives +inf;
* ``fast_*`` compute the accurate function (libdevice's are approximations within the
  documented error); ``saturatef`` clamps to [0, 1] with NaN and -0 -> +0; ``rcp64h`` is the
  reciprocal of the operand with its low 32 bits cleared, low 32 bits of the result cleared;
* integer intrinsics on the bits: ``ffs`` (1-based lowest set bit, 0 for 0), ``byte_perm``,
  ``mulhi``/``mul64hi`` (high half of the full product), ``mul24`` (low 32 bits of the product
  of the sign- or zero-extended low 24 bits), ``hadd``/``rhadd`` (``(x + y (+ 1)) >> 1`` without
  overflow), ``sad`` (``|x - y| + z``), and the bit reinterpretations ``*_as_*``,
  ``double2loint``/``double2hiint``/``hiloint2double``.
"""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from ...codegen.cpu import extern_special as special
from .extern_round import arith_fn

_OPS = special.NumpyOps()


def _f64(fn):
    """fn on float64, rounded once to the dtype of the first operand."""
    def run(*xs):
        with np.errstate(all="ignore"):
            r = fn(*[np.asarray(x, np.float64) for x in xs])
        return np.asarray(r, np.float64).astype(np.asarray(xs[0]).dtype)
    return run


def _ilogb(x):
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)
    out = (e - 1).astype(np.int64)
    out = np.where(np.isinf(x), 2 ** 31 - 1, out)
    return np.where((x == 0) | np.isnan(x), -(2 ** 31), out).astype(np.int32)


def _logb(x):
    r = _ilogb(x).astype(x.dtype)
    r = np.where(x == 0, -np.inf, r)
    return np.where(np.isinf(x), np.inf, np.where(np.isnan(x), x, r)).astype(x.dtype)


def _to_ll(r):
    out = np.zeros(r.shape, np.int64)
    ok = ~np.isnan(r)
    big = r >= 2.0 ** 63
    small = r <= -(2.0 ** 63)
    mid = ok & ~big & ~small
    out[mid] = r[mid].astype(np.int64)
    out[big] = np.iinfo(np.int64).max
    out[small] = np.iinfo(np.int64).min
    return out


def _norm(reciprocal: bool):
    def run(*xs):
        a = [np.abs(np.asarray(x, np.float64)) for x in xs]
        m = np.maximum.reduce(a)
        with np.errstate(all="ignore"):
            _, e = np.frexp(m)
            s = sum(np.ldexp(v, -e) ** 2 for v in a)
            r = np.ldexp(np.sqrt(s), e)
            r = np.where(m == 0, 0.0, r)
            r = np.where(np.logical_or.reduce([np.isinf(v) for v in a]), np.inf, r)
            if reciprocal:
                r = 1.0 / r
        return r.astype(np.asarray(xs[0]).dtype)
    return run


def _libm_int_double(name):
    fn = getattr(ctypes.CDLL(ctypes.util.find_library("m")), name)
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_int, ctypes.c_double]
    u = np.frompyfunc(fn, 2, 1)

    def run(n, x):
        return u(np.asarray(n, np.int64), np.asarray(x, np.float64)).astype(
            np.asarray(x).dtype)
    return run


def _rcp64h(x):
    hi = np.asarray(x, np.float64).view(np.uint64) & np.uint64(0xFFFFFFFF00000000)
    with np.errstate(all="ignore"):
        r = 1.0 / hi.view(np.float64)
    return (r.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)


def _u(x):
    x = np.asarray(x)
    return x.view(np.uint32 if x.dtype.itemsize == 4 else np.uint64)


def _mulhi(signed: bool, bits: int):
    def run(a, b):
        if bits == 32:
            t = np.int64 if signed else np.uint64
            src = (lambda v: v) if signed else _u
            p = src(a).astype(t) * src(b).astype(t)
            return (p >> t(32)).astype(np.int64).astype(np.int32 if signed else np.uint32)
        conv = (lambda v: int(v)) if signed else (lambda v: int(v) & (2 ** 64 - 1))
        out = [(conv(x) * conv(y)) >> 64 for x, y in zip(np.ravel(a), np.ravel(b),
                                                           strict=True)]
        wrapped = [(v + 2 ** 63) % 2 ** 64 - 2 ** 63 for v in out]
        return np.array(wrapped, np.int64).reshape(np.shape(a))
    return run


def _mul24(signed: bool):
    def run(a, b):
        def low24(v):
            v = _u(v).astype(np.int64) & 0xFFFFFF
            return np.where(v >= 2 ** 23, v - 2 ** 24, v) if signed else v
        return (low24(a) * low24(b)).astype(np.int64).astype(np.uint64).astype(
            np.uint32).view(np.int32)
    return run


def _hadd(signed: bool, rounding: int):
    def run(a, b):
        conv = (lambda v: np.asarray(v).astype(np.int64)) if signed else (
            lambda v: _u(v).astype(np.int64))
        return ((conv(a) + conv(b) + rounding) >> 1).astype(np.int32 if signed
                                                            else np.uint32)
    return run


def _sad(signed: bool):
    def run(a, b, c):
        conv = (lambda v: np.asarray(v).astype(np.int64)) if signed else (
            lambda v: _u(v).astype(np.int64))
        r = np.abs(conv(a) - conv(b)) + _u(c).astype(np.int64)
        return (r & 0xFFFFFFFF).astype(np.uint32)
    return run


def _ffs(x):
    u = _u(x).astype(np.uint64)
    low = u & (~u + np.uint64(1))  # lowest set bit
    with np.errstate(all="ignore"):
        pos = np.where(u == 0, 0, np.log2(np.where(u == 0, 1, low).astype(np.float64)) + 1)
    return pos.astype(np.int32)


def _byte_perm(x, y, s):
    both = _u(x).astype(np.uint64) | (_u(y).astype(np.uint64) << np.uint64(32))
    out = np.zeros(np.shape(x), np.uint64)
    sel = _u(s).astype(np.uint64)
    for i in range(4):
        k = (sel >> np.uint64(4 * i)) & np.uint64(7)
        byte = (both >> (k * np.uint64(8))) & np.uint64(0xFF)
        out |= byte << np.uint64(8 * i)
    return out.astype(np.uint32).view(np.int32)


def _view(dtype):
    return lambda x: np.asarray(x).view(dtype)


def _hiloint(hi, lo):
    bits = (_u(hi).astype(np.uint64) << np.uint64(32)) | _u(lo).astype(np.uint64)
    return bits.view(np.float64)


def _nextafter(x, y):
    return np.nextafter(x, np.asarray(y, np.asarray(x).dtype))


def _saturate(x):
    with np.errstate(invalid="ignore"):  # NaN and -0 give +0
        return np.where(x > 0, np.minimum(x, 1), 0).astype(np.asarray(x).dtype)


FUNCS: dict = {
    "nextafterf": _nextafter, "nextafter": _nextafter, "ilogbf": _ilogb, "ilogb": _ilogb,
    "logbf": _logb, "logb": _logb,
    "llrintf": lambda x: _to_ll(np.rint(np.asarray(x, np.float64))),
    "llrint": lambda x: _to_ll(np.rint(np.asarray(x, np.float64))),
    "llroundf": lambda x: _to_ll(_round(x)), "llround": lambda x: _to_ll(_round(x)),
    "jnf": _libm_int_double("jn"), "jn": _libm_int_double("jn"),
    "ynf": _libm_int_double("yn"), "yn": _libm_int_double("yn"),
    "powif": _f64(lambda x, n: np.power(x, n)), "powi": _f64(lambda x, n: np.power(x, n)),
    "rhypotf": _norm(True), "rhypot": _norm(True), "saturatef": _saturate,
    "rcp64h": _rcp64h, "fast_fdividef": _f64(np.divide),
    "fast_sinf": _f64(np.sin), "fast_cosf": _f64(np.cos), "fast_tanf": _f64(np.tan),
    "fast_log2f": _f64(np.log2), "fast_log10f": _f64(np.log10),
    "fast_exp10f": _f64(lambda x: np.power(10.0, x)), "fast_powf": _f64(np.power),
    "ffs": _ffs, "ffsll": _ffs, "byte_perm": _byte_perm,
    "mulhi": _mulhi(True, 32), "umulhi": _mulhi(False, 32), "mul64hi": _mulhi(True, 64),
    "umul64hi": _mulhi(False, 64), "mul24": _mul24(True), "umul24": _mul24(False),
    "hadd": _hadd(True, 0), "uhadd": _hadd(False, 0), "rhadd": _hadd(True, 1),
    "urhadd": _hadd(False, 1), "sad": _sad(True), "usad": _sad(False),
    "int_as_float": _view(np.float32), "uint_as_float": _view(np.float32),
    "float_as_int": _view(np.int32), "float_as_uint": _view(np.int32),
    "longlong_as_double": _view(np.float64), "double_as_longlong": _view(np.int64),
    "double2loint": lambda x: _u(np.asarray(x, np.float64)).astype(np.uint32).view(np.int32),
    "double2hiint": lambda x: (_u(np.asarray(x, np.float64)) >> np.uint64(32)).astype(
        np.uint32).view(np.int32),
    "hiloint2double": _hiloint,
    "fmaf": arith_fn("fma", np.float32, "rn"), "fma": arith_fn("fma", np.float64, "rn"),
}


def _round(x):
    """C ``round``: to nearest, halves away from zero (exact: no ``x + 0.5``)."""
    x = np.asarray(x, np.float64)
    t = np.trunc(x)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


for _n, _fn in special.FUNCS.items():
    FUNCS[_n + "f"] = FUNCS[_n] = _f64(lambda x, _fn=_fn: _fn(_OPS, x))
for _n in ("norm3d", "norm4d"):
    FUNCS[_n + "f"] = FUNCS[_n] = _norm(False)
    FUNCS["r" + _n + "f"] = FUNCS["r" + _n] = _norm(True)
