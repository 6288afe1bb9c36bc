"""8-bit float conversions for the interpreter, in numpy, bit for bit what the compiled
backends emit (:mod:`workbench.codegen.fp8`); the formats and the semantics (round to nearest
even or toward zero, saturation, NaN) are in :mod:`workbench.ir.fp8`.

fp8 values are held as ``uint8`` bit patterns, as bf16 values are held as ``uint16``.
"""
from __future__ import annotations

import numpy as np

from ...ir.fp8 import FORMATS, Fp8Format

_U32 = np.uint32


def fmt_of(name: str) -> Fp8Format:
    """The :class:`Fp8Format` of an IR type name (``"f8E4M3FN"``...)."""
    return FORMATS[name]


def _f32_bits(v: float) -> int:
    return int(np.array(v, np.float32).view(np.uint32))


def from_f32(x: np.ndarray, f: Fp8Format, rtz: bool = False) -> np.ndarray:
    """float32 array -> uint8 codes of format ``f``: round to nearest even (``rtz``: toward
    zero), saturate finite overflow and infinities to the largest finite value, NaN -> the NaN
    code. Normal results round the float32 bits to ``f.mbits`` mantissa bits (the carry moves
    into the exponent); subnormal results are ``rint(|x| * 2**(mbits - 1 + bias))``."""
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(_U32)
    sign = (bits >> _U32(24)) & _U32(0x80)
    mag = np.minimum(bits & _U32(0x7FFFFFFF), _U32(_f32_bits(f.max_value)))
    shift = 23 - f.mbits
    if rtz:
        normal = mag >> _U32(shift)
    else:
        normal = (mag + _U32((1 << (shift - 1)) - 1) + ((mag >> _U32(shift)) & _U32(1))) \
            >> _U32(shift)
    normal = normal - _U32((127 - f.bias) << f.mbits)
    a = mag.view(np.float32) * np.float32(f.subnormal_scale)
    sub = (np.trunc(a) if rtz else np.rint(a)).astype(_U32)
    code = np.where(mag < _U32(_f32_bits(f.min_normal)), sub, normal)
    if f.fnuz:
        code = np.where(code == 0, code, code | sign)
    else:
        code = code | sign
    code = np.where(np.isnan(x), _U32(f.nan_code), code)
    return code.astype(np.uint8)


def to_f32(code: np.ndarray, f: Fp8Format) -> np.ndarray:
    """uint8 codes of format ``f`` -> float32 (exact): NaN codes give NaN, e5m2's 0x7C/0xFC
    give infinities, fnuz formats' 0x80 is their NaN."""
    c = np.asarray(code).view(np.uint8).astype(_U32)
    mag = c & _U32(0x7F)
    normal = ((mag << _U32(23 - f.mbits)) + _U32((127 - f.bias) << 23)).view(np.float32)
    sub = (mag.astype(np.float32) / np.float32(f.subnormal_scale))
    out = np.where(mag < _U32(1 << f.mbits), sub, normal)
    out = np.where(c & _U32(0x80), -out, out)
    if f.fnuz:
        nan = c == _U32(0x80)
    elif f.has_inf:
        top = _U32(0x7F) ^ _U32((1 << f.mbits) - 1)  # exponent all ones
        inf = mag == top
        out = np.where(inf, np.where(c & _U32(0x80), -np.inf, np.inf), out)
        nan = mag > top
    else:
        nan = mag == _U32(0x7F)
    return np.where(nan, np.float32(np.nan), out).astype(np.float32)
