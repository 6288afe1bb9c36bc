"""Bounds and exactness of values through each operation (what lets the fuzzer compare most
floating point results bit for bit and keep comparisons and float-to-int casts well defined)."""
from __future__ import annotations

import math

from . import types as ft
from .program import Info


def full(d: str) -> Info:
    """Any value of integer dtype ``d``."""
    lo, hi = ft.int_range(d)
    return Info(d, lo, hi)


def make(d: str, lo, hi, q: int, exact: bool, eps: float) -> Info | None:
    """The Info of a result of dtype ``d`` in lo..hi; ints wrap to the full range, floats
    stay exact while ``bound * 2**q`` fits the mantissa. None: a float result could overflow."""
    if d == "i1":
        return Info("i1", 0, 1)
    if ft.is_int(d):
        tlo, thi = ft.int_range(d)
        return Info(d, lo, hi) if tlo <= lo and hi <= thi else full(d)
    bound = max(abs(lo), abs(hi))
    if ft.is_fp8(d):
        return _make_fp8(d, lo, hi, q, exact, eps)
    if bound > ft.FMAX[d] / 8:
        return None
    if exact and bound * 2.0**q < 2.0**(ft.MANTISSA[d] + 1) and q <= ft.MINQ[d]:
        return Info(d, lo, hi, True, q, 0.0)
    return Info(d, lo, hi, False, q, max(eps, ft.EPS[d]))


def _make_fp8(d: str, lo, hi, q: int, exact: bool, eps: float) -> Info | None:
    """An 8-bit float made from an exact value: rounding (and e4b15's saturation at 1.75) is
    deterministic, so every backend must give the same bits; the bounds grow by at most half
    an ulp (widened here by a whole one; the values stay multiples of ``2**-q``). None for an
    inexact source (its rounding could go either way) and for e4nv/e5 values past the largest
    finite one (no saturation wanted)."""
    m = ft.FMAX[d]
    if not exact or (d != "fp8e4b15" and max(abs(lo), abs(hi)) > m):
        return None
    grow = 1.0 + 2.0**-ft.MANTISSA[d]
    lo = max(lo * grow if lo < 0 else lo, -m)
    hi = min(hi * grow if hi > 0 else hi, m)
    return Info(d, lo, hi, True, q, 0.0)


def as_type(v: Info, d: str) -> Info | None:
    """``v`` converted to ``d`` (implicit promotion or ``.to``); None when undefined or unsafe
    (an inexact float to an int or bool, a float outside the target's range)."""
    if v.dtype == d:
        return v
    if ft.is_fp8(v.dtype) or ft.is_fp8(d):  # 8-bit floats convert to and from floats only
        if not (ft.is_float(v.dtype) or ft.is_fp8(v.dtype)) or \
                not (ft.is_float(d) or ft.is_fp8(d)):
            return None
        return make(d, v.lo, v.hi, v.q, v.exact, v.eps)
    if v.dtype == "i1":
        return make(d, 0, 1, 0, True, 0.0)
    if ft.is_float(v.dtype) and not ft.is_float(d):
        if not v.exact:
            return None
        if d == "i1":
            return Info("i1", 0, 1)
        lo, hi = math.trunc(v.lo), math.trunc(v.hi)
        tlo, thi = ft.int_range(d)
        return Info(d, lo, hi) if tlo <= lo and hi <= thi else None
    if ft.is_float(d):
        return make(d, v.lo, v.hi, v.q, v.exact, v.eps)
    return make(d, v.lo, v.hi, 0, True, 0.0)


def arith(op: str, a: Info, b: Info, d: str) -> Info | None:
    """``a op b`` (op ``+ - *``) computed in ``d``; ``a``, ``b`` already of dtype ``d``."""
    if op == "+":
        lo, hi = a.lo + b.lo, a.hi + b.hi
    elif op == "-":
        lo, hi = a.lo - b.hi, a.hi - b.lo
    else:
        ps = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
        lo, hi = min(ps), max(ps)
    q = a.q + b.q if op == "*" else max(a.q, b.q)
    return make(d, lo, hi, q, a.exact and b.exact, 2 * max(a.eps, b.eps))


def literal(v) -> Info:
    """A Python literal as the tensor ``to_tensor`` makes."""
    d = ft.literal_dtype(v)
    q = 0 if not isinstance(v, float) else _quantum(v)
    return Info(d, v, v, True, q)


def _quantum(v: float) -> int:
    q = 0
    while v * 2**q != math.floor(v * 2**q) and q < 30:
        q += 1
    return q


def union(a: Info, b: Info, d: str) -> Info | None:
    """A value that is ``a`` or ``b`` lane by lane (where, minimum, maximum)."""
    return make(d, min(a.lo, b.lo), max(a.hi, b.hi), max(a.q, b.q), a.exact and b.exact,
                max(a.eps, b.eps))
