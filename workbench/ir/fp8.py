"""The 8-bit float formats of the IR (MLIR's names, as Triton 3.6 prints them) and the
numbers that define each: mantissa bits, exponent bias, largest finite code, NaN code.

=============  ==============  =====  ====  ==========  ========  ===========================
MLIR type      tl dtype        bits   bias  max finite  NaN code  notes
=============  ==============  =====  ====  ==========  ========  ===========================
f8E4M3FN       float8e4nv      e4m3   7     448 (0x7E)  0x7F      OCP FP8 E4M3, no infinity
f8E5M2         float8e5        e5m2   15    57344       0x7F      OCP FP8 E5M2, IEEE-like, inf
f8E4M3FNUZ     float8e4b8      e4m3   8     240 (0x7F)  0x80      no inf, no -0 (AMD/Graphcore)
f8E5M2FNUZ     float8e5b16     e5m2   16    57344       0x80      no inf, no -0
=============  ==============  =====  ====  ==========  ========  ===========================

``tl.float8e4b15`` (e4m3, bias 15, no inf or NaN) has no MLIR type: Triton 3.6 types it ``i8``
in the IR and converts it with integer code, and so does the workbench.

Conversions (the workbench's semantics on every backend; the ones of PTX ``cvt`` with
``.satfinite`` on sm_90, PTX ISA section 9.7.9.21): a narrowing conversion rounds to nearest even
(or toward zero with ``fp_downcast_rounding="rtz"``), saturates finite values beyond the largest
finite value *and infinities* to that value (sign kept), and turns NaN into the NaN code;
a widening conversion is exact (an e5m2 infinity stays infinite).
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Fp8Format:
    """One 8-bit float format: ``mbits`` mantissa bits, exponent ``bias``, ``max_code`` (the
    largest finite magnitude's bits), ``nan_code`` (the NaN a conversion produces),
    ``has_inf`` (e5m2: 0x7C is infinity), ``fnuz`` (no negative zero; 0x80 is the only NaN)."""

    name: str
    mbits: int
    bias: int
    max_code: int
    nan_code: int
    has_inf: bool
    fnuz: bool

    @property
    def ebits(self) -> int:
        return 7 - self.mbits

    @property
    def max_value(self) -> float:
        """The largest finite value (448.0 for f8E4M3FN)."""
        e, m = self.max_code >> self.mbits, self.max_code & ((1 << self.mbits) - 1)
        return (1.0 + m / (1 << self.mbits)) * 2.0 ** (e - self.bias)

    @property
    def min_normal(self) -> float:
        """The smallest normal value, ``2**(1 - bias)``."""
        return 2.0 ** (1 - self.bias)

    @property
    def subnormal_scale(self) -> float:
        """``2**(mbits - 1 + bias)``: a subnormal's mantissa is ``value * subnormal_scale``."""
        return 2.0 ** (self.mbits - 1 + self.bias)


FORMATS = {
    "f8E4M3FN": Fp8Format("f8E4M3FN", 3, 7, 0x7E, 0x7F, False, False),
    "f8E5M2": Fp8Format("f8E5M2", 2, 15, 0x7B, 0x7F, True, False),
    "f8E4M3FNUZ": Fp8Format("f8E4M3FNUZ", 3, 8, 0x7F, 0x80, False, True),
    "f8E5M2FNUZ": Fp8Format("f8E5M2FNUZ", 2, 16, 0x7F, 0x80, False, True),
}


def is_fp8_name(name: str) -> bool:
    """True for the IR float type names of :data:`FORMATS`."""
    return name in FORMATS


def const_code(name: str, value: float) -> int:
    """The code (0..255) of the Python float ``value`` in format ``name``, rounded to nearest
    even with the module's saturation and NaN rules (for constants in the IR)."""
    f = FORMATS[name]
    if math.isnan(value):
        return f.nan_code
    sign = 0x80 if math.copysign(1.0, value) < 0 else 0
    a = min(abs(value), f.max_value)
    best, best_err = 0, math.inf
    for code in range(0x80):
        v = code_value(f, code)
        if v != v or v > f.max_value:
            continue
        err = abs(v - a)
        if err < best_err or (err == best_err and code % 2 == 0):
            best, best_err = code, err
    if f.fnuz and best == 0:
        return 0
    return best | sign


def code_value(f: Fp8Format, code: int) -> float:
    """The value of the code ``code`` (0..255) of format ``f`` (NaN for NaN codes)."""
    mag, neg = code & 0x7F, code & 0x80
    if f.fnuz and code == 0x80:
        return math.nan
    e, m = mag >> f.mbits, mag & ((1 << f.mbits) - 1)
    if f.has_inf and e == (1 << f.ebits) - 1:
        v = math.inf if m == 0 else math.nan
    elif not f.has_inf and not f.fnuz and mag == 0x7F:
        v = math.nan
    elif e == 0:
        v = m / f.subnormal_scale
    else:
        v = (1.0 + m / (1 << f.mbits)) * 2.0 ** (e - f.bias)
    return -v if neg else v
