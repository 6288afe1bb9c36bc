"""Constant evaluation for canonicalize: integer and float arithmetic as the hardware does it.

Integers are signless two's-complement bit patterns of ``width`` bits (MLIR ``arith``):
constants are stored signed (``-1 : i32``), ``i1`` as ``bool``. Division and remainder
truncate toward zero (C semantics, as ``arith.divsi``/``remsi`` and Triton's ``//``, ``%`` on
ints); ``+ - *`` and shifts wrap around. Cases that are undefined in LLVM (division by zero,
``INT_MIN / -1``, shift by >= width, out-of-range float -> int) are not folded (``None``).
Floats are rounded to their type after each operation (numpy float16/float32/float64; bf16
by round-to-nearest-even of the float32 result). Sources: MLIR ``arith`` dialect folders
(``ArithOps.cpp``), LLVM LangRef (sdiv/srem/shl poison rules), IEEE 754 min/max semantics.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.fp8 import FORMATS as FP8_FORMATS
from ..ir.fp8 import code_value, const_code, is_fp8_name
from ..ir.types import FloatType, IntType, Type

_NP: dict[str, type[np.floating]] = {"f16": np.float16, "f32": np.float32, "f64": np.float64,
                                     "bf16": np.float32}


def signed(v, width: int) -> int:
    """The signed value of the low ``width`` bits of ``v``."""
    x = int(v) & ((1 << width) - 1)
    return x - (1 << width) if x >> (width - 1) else x


def unsigned(v, width: int) -> int:
    """The unsigned value of the low ``width`` bits of ``v``."""
    return int(v) & ((1 << width) - 1)


def int_const(v, width: int):
    """Canonical stored form of an integer constant: signed int, or bool for ``i1``."""
    if width == 1:
        return bool(int(v) & 1)
    return signed(v, width)


def round_float(v: float, name: str) -> float:
    """``v`` rounded to float type ``name`` (f16, bf16, f32, f64, or an 8-bit float of
    :data:`workbench.ir.fp8.FORMATS`: nearest even, saturating as its constants do), as a
    Python float."""
    if is_fp8_name(name):
        return code_value(FP8_FORMATS[name], const_code(name, v))
    with np.errstate(all="ignore"):
        x = _NP[name](v)
        if name == "bf16":
            if math.isnan(float(x)):
                return float("nan")
            bits = int(np.array(x, np.float32).view(np.uint32))
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
            return float(np.array(bits, np.uint32).view(np.float32))
        return float(x)


def _fbin(name: str, a: float, b: float, ftype: str):
    t = _NP[ftype]
    x, y = t(a), t(b)
    with np.errstate(all="ignore"):
        if name == "addf":
            r = x + y
        elif name == "subf":
            r = x - y
        elif name == "mulf":
            r = x * y
        elif name == "divf":
            r = np.divide(x, y)
        elif name == "remf":
            r = np.fmod(x, y)
        elif name == "maxnumf":
            r = np.fmax(x, y)
        elif name == "minnumf":
            r = np.fmin(x, y)
        elif name == "maximumf":
            r = np.maximum(x, y)
        elif name == "minimumf":
            r = np.minimum(x, y)
        else:
            return None
    return round_float(float(r), ftype)


# Integer ops that always fold: f(signed a, signed b, unsigned a, unsigned b) before wrapping.
_IBIN_TOTAL = {
    "addi": lambda sa, sb, ua, ub: sa + sb,
    "subi": lambda sa, sb, ua, ub: sa - sb,
    "muli": lambda sa, sb, ua, ub: sa * sb,
    "andi": lambda sa, sb, ua, ub: ua & ub,
    "ori": lambda sa, sb, ua, ub: ua | ub,
    "xori": lambda sa, sb, ua, ub: ua ^ ub,
    "maxsi": lambda sa, sb, ua, ub: max(sa, sb),
    "minsi": lambda sa, sb, ua, ub: min(sa, sb),
    "maxui": lambda sa, sb, ua, ub: max(ua, ub),
    "minui": lambda sa, sb, ua, ub: min(ua, ub),
}


def _ibin(name: str, a, b, w: int):
    sa, sb, ua, ub = signed(a, w), signed(b, w), unsigned(a, w), unsigned(b, w)
    if name in _IBIN_TOTAL:
        r = _IBIN_TOTAL[name](sa, sb, ua, ub)
    elif name in ("divsi", "remsi"):
        if sb == 0 or (sa == -(1 << (w - 1)) and sb == -1 and w > 1):
            return None
        q = abs(sa) // abs(sb)
        if (sa < 0) != (sb < 0):
            q = -q
        r = q if name == "divsi" else sa - sb * q
    elif name in ("divui", "remui"):
        if ub == 0:
            return None
        r = ua // ub if name == "divui" else ua % ub
    elif name in ("shli", "shrsi", "shrui"):
        if ub >= w:
            return None
        r = ua << ub if name == "shli" else (sa >> ub if name == "shrsi" else ua >> ub)
    else:
        return None
    return int_const(r, w)


def fold_binary(name: str, a, b, elem: Type):
    """Fold ``arith.<name>`` (e.g. ``"addi"``) on scalar constants ``a``, ``b`` of element type
    ``elem``; returns the stored constant value or None when it cannot or must not fold."""
    if isinstance(elem, IntType):
        return _ibin(name, a, b, elem.width)
    if isinstance(elem, FloatType):
        return _fbin(name, float(a), float(b), elem.name)
    return None


_ICMP = {
    "eq": lambda s, u: s[0] == s[1], "ne": lambda s, u: s[0] != s[1],
    "slt": lambda s, u: s[0] < s[1], "sle": lambda s, u: s[0] <= s[1],
    "sgt": lambda s, u: s[0] > s[1], "sge": lambda s, u: s[0] >= s[1],
    "ult": lambda s, u: u[0] < u[1], "ule": lambda s, u: u[0] <= u[1],
    "ugt": lambda s, u: u[0] > u[1], "uge": lambda s, u: u[0] >= u[1],
}
_FCMP = {"eq": lambda a, b: a == b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
         "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "ne": lambda a, b: a != b}


def fold_cmp(name: str, predicate: str, a, b, elem: Type):
    """Fold ``arith.cmpi``/``arith.cmpf`` with ``predicate`` on constants; returns bool or None.
    ``cmpf``: ``o..`` predicates are false when either side is NaN, ``u..`` true."""
    if name == "arith.cmpi" and isinstance(elem, IntType):
        w = elem.width
        f = _ICMP.get(predicate)
        if f is None:
            return None
        return bool(f((signed(a, w), signed(b, w)), (unsigned(a, w), unsigned(b, w))))
    if name == "arith.cmpf":
        a, b = float(a), float(b)
        nan = math.isnan(a) or math.isnan(b)
        if predicate in ("false", "true"):
            return predicate == "true"
        if predicate == "ord":
            return not nan
        if predicate == "uno":
            return nan
        f = _FCMP.get(predicate[1:])
        if f is None or predicate[0] not in "ou":
            return None
        if nan:
            return predicate[0] == "u"
        return bool(f(a, b))
    return None


def fold_cast(name: str, v, src: Type, dst: Type):
    """Fold ``arith.<name>`` conversions (extsi, extui, trunci, sitofp, uitofp, fptosi, fptoui,
    extf, truncf) of a scalar constant ``v``; None when not foldable."""
    if name in ("extsi", "extui", "trunci", "sitofp", "uitofp") and isinstance(src, IntType):
        x = unsigned(v, src.width) if name in ("extui", "uitofp") else signed(v, src.width)
        if name in ("sitofp", "uitofp"):
            return round_float(float(x), dst.name) if isinstance(dst, FloatType) else None
        return int_const(x, dst.width) if isinstance(dst, IntType) else None
    if name in ("fptosi", "fptoui") and isinstance(dst, IntType):
        f = float(v)
        if not math.isfinite(f):
            return None
        x = math.trunc(f)
        lo, hi = ((-(1 << (dst.width - 1)), (1 << (dst.width - 1)) - 1) if name == "fptosi"
                  else (0, (1 << dst.width) - 1))
        return int_const(x, dst.width) if lo <= x <= hi else None
    if name in ("extf", "truncf") and isinstance(dst, FloatType):
        return round_float(float(v), dst.name)
    return None
