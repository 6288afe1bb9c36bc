"""8-bit float conversions as LLVM instructions on one scalar, shared by the CPU and the NVPTX
lowerings (the NVPTX one uses ``cvt`` instead where the target has it). The formats and the
semantics are in :mod:`workbench.ir.fp8`; :mod:`workbench.backends.interp.fp8` is the same
algorithm in numpy, and the tests hold the three to the same bits.

Narrowing (float32 -> code): clamp the magnitude's bits to the largest finite value's (floats of
one sign order as their bits, so infinities clamp too), round the float32 bits to the format's
mantissa width (ties to even, or truncate for rtz; a carry moves into the exponent), rebias;
below the smallest normal the code is ``rint(|x| * 2**(mbits - 1 + bias))`` (exact scaling);
then the sign, and NaN gives the NaN code. Widening is exact: rebias the bits of a normal
code, scale a subnormal one, and map the NaN/infinity codes.
"""
from __future__ import annotations

import struct

from llvmlite import ir

from ..ir.fp8 import FORMATS, Fp8Format

I8, I32 = ir.IntType(8), ir.IntType(32)
F32, F64 = ir.FloatType(), ir.DoubleType()


def fmt_of(name: str) -> Fp8Format:
    """The format of an IR fp8 type name (``"f8E4M3FN"``...)."""
    return FORMATS[name]


def _bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def _c(v: int) -> ir.Constant:
    return ir.Constant(I32, v if v < 1 << 31 else v - (1 << 32))


def _intrinsic(b: ir.IRBuilder, name: str):
    return b.module.declare_intrinsic(name, [F32], ir.FunctionType(F32, [F32]))


def from_f32(b: ir.IRBuilder, x, f: Fp8Format, rtz: bool = False):
    """An ``i8`` code of format ``f`` for the float32 value ``x`` (module doc)."""
    bits = b.bitcast(x, I32)
    sign = b.and_(b.lshr(bits, _c(24)), _c(0x80))
    mag = b.and_(bits, _c(0x7FFFFFFF))
    top = _c(_bits(f.max_value))
    mag = b.select(b.icmp_unsigned(">", mag, top), top, mag)
    shift = 23 - f.mbits
    if rtz:
        normal = b.lshr(mag, _c(shift))
    else:
        odd = b.and_(b.lshr(mag, _c(shift)), _c(1))
        normal = b.lshr(b.add(b.add(mag, _c((1 << (shift - 1)) - 1)), odd), _c(shift))
    normal = b.sub(normal, _c((127 - f.bias) << f.mbits))
    scaled = b.fmul(b.bitcast(mag, F32), ir.Constant(F32, f.subnormal_scale))
    sub = b.fptoui(b.call(_intrinsic(b, "llvm.trunc" if rtz else "llvm.rint"), [scaled]), I32)
    is_sub = b.icmp_unsigned("<", mag, _c(_bits(f.min_normal)))
    code = b.select(is_sub, sub, normal)
    signed = b.or_(code, sign)
    if f.fnuz:
        signed = b.select(b.icmp_unsigned("==", code, _c(0)), code, signed)
    isnan = b.fcmp_unordered("uno", x, x)
    return b.trunc(b.select(isnan, _c(f.nan_code), signed), I8)


def to_f32(b: ir.IRBuilder, code, f: Fp8Format):
    """The float32 value of the ``i8`` code ``code`` of format ``f`` (exact; module doc)."""
    c = b.zext(code, I32)
    mag = b.and_(c, _c(0x7F))
    normal = b.add(b.shl(mag, _c(23 - f.mbits)), _c((127 - f.bias) << 23))
    sub = b.bitcast(b.fmul(b.uitofp(mag, F32), ir.Constant(F32, 1.0 / f.subnormal_scale)), I32)
    out = b.select(b.icmp_unsigned("<", mag, _c(1 << f.mbits)), sub, normal)
    neg = b.icmp_unsigned("!=", b.and_(c, _c(0x80)), _c(0))
    out = b.select(neg, b.or_(out, _c(0x80000000)), out)
    nan = _c(0x7FC00000)
    if f.fnuz:
        out = b.select(b.icmp_unsigned("==", c, _c(0x80)), nan, out)
    elif f.has_inf:
        top = 0x7F ^ ((1 << f.mbits) - 1)
        inf = b.or_(_c(0x7F800000), b.shl(b.and_(c, _c(0x80)), _c(24)))
        out = b.select(b.icmp_unsigned("==", mag, _c(top)), inf, out)
        out = b.select(b.icmp_unsigned(">", mag, _c(top)), nan, out)
    else:
        out = b.select(b.icmp_unsigned("==", mag, _c(0x7F)), nan, out)
    return b.bitcast(out, F32)


def f64_to_f32_odd(b: ir.IRBuilder, v):
    """double -> float rounding to odd: a second rounding of the result to a format with at
    most 22 significand bits is then the correct single rounding (Boldo and Melquiond, IEEE TC
    2008)."""
    r = b.fptrunc(v, F32)
    back = b.fpext(r, F64)
    fabs = b.module.declare_intrinsic("llvm.fabs", [F64], ir.FunctionType(F64, [F64]))
    away = b.fcmp_ordered(">", b.call(fabs, [back]), b.call(fabs, [v]))
    bits = b.bitcast(r, I32)
    bits = b.select(away, b.sub(bits, _c(1)), bits)
    inexact = b.fcmp_ordered("!=", back, v)
    bits = b.select(inexact, b.or_(bits, _c(1)), bits)
    return b.bitcast(bits, F32)


def f64_to_f32_rtz(b: ir.IRBuilder, v):
    """double -> float rounding toward zero (finite values; infinities and NaN pass)."""
    r = b.fptrunc(v, F32)
    back = b.fpext(r, F64)
    fabs = b.module.declare_intrinsic("llvm.fabs", [F64], ir.FunctionType(F64, [F64]))
    ax = b.call(fabs, [v])
    away = b.and_(b.fcmp_ordered(">", b.call(fabs, [back]), ax),
                  b.fcmp_ordered("<", ax, ir.Constant(F64, float("inf"))))
    bits = b.bitcast(r, I32)
    return b.bitcast(b.select(away, b.sub(bits, _c(1)), bits), F32)
