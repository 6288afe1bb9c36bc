"""``tt.fp_to_fp`` with an 8-bit float side on NVIDIA GPUs.

fp8 values are carried as ``i8`` bits. On sm_89 and later (so sm_90) the e4m3 and e5m2 formats
convert with PTX ``cvt`` (PTX ISA section 9.7.9.21, "cvt": ``cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32``
narrows two f32 to a packed pair, ``cvt.rn.f16x2.{e4m3x2,e5m2x2}`` widens a pair to f16x2; both
need sm_89 and PTX 7.8), as Triton does on sm_90. Everything else (sm_80, the fnuz formats,
rounding toward zero, which ``cvt`` lacks for fp8) runs the integer code of
:mod:`workbench.codegen.fp8`, whose results are the same bits.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.types import FloatType
from .. import fp8
from .types import F16, F32, I8, I16, I32

_CVT_NAME = {"f8E4M3FN": "e4m3x2", "f8E5M2": "e5m2x2"}


def _to_f32(b, x, t: FloatType):
    """An f32 of a non-fp8 float value (bf16 is i16 bits; f64 handled by the caller)."""
    if t.name == "bf16":
        return b.bitcast(b.shl(b.zext(x, I32), I32(16)), F32)
    if t.name == "f16":
        return b.fpext(x, F32)
    return x


def _from_f32(b, x, t: FloatType):
    """A value of float type ``t`` from an f32 holding an fp8 value (exact for every target
    type: f16, bf16 and f64 hold every fp8 value)."""
    if t.name == "bf16":
        return b.trunc(b.lshr(b.bitcast(x, I32), I32(16)), I16)
    if t.name == "f16":
        return b.fptrunc(x, F16)
    if t.name == "f64":
        return b.fpext(x, ir.DoubleType())
    return x


def _native(arch: int, name: str) -> bool:
    return arch >= 89 and name in _CVT_NAME


def _widen(b, x, t: FloatType, arch: int):
    if _native(arch, t.name):
        asm = ir.InlineAsm(ir.FunctionType(I32, [I16]),
                           f"cvt.rn.f16x2.{_CVT_NAME[t.name]} $0, $1;", "=r,h")
        pair = b.call(asm, [b.zext(x, I16)])
        return b.fpext(b.bitcast(b.trunc(pair, I16), F16), F32)
    return fp8.to_f32(b, x, fp8.fmt_of(t.name))


def _narrow(b, x, t: FloatType, arch: int, rtz: bool):
    if _native(arch, t.name) and not rtz:
        asm = ir.InlineAsm(ir.FunctionType(I16, [F32, F32]),
                           f"cvt.rn.satfinite.{_CVT_NAME[t.name]}.f32 $0, $1, $2;", "=h,f,f")
        return b.trunc(b.call(asm, [x, x]), I8)
    return fp8.from_f32(b, x, fp8.fmt_of(t.name), rtz)


def fp8_cast(kl, x, src: FloatType, dst: FloatType, rounding: str | None):
    """Convert one register ``x`` from ``src`` to ``dst`` (one of them fp8) through f32,
    which holds every fp8 value; an f64 source narrows to f32 rounding to odd (or toward zero)
    so the second rounding is the correct single one."""
    b, arch = kl.b, kl.arch
    rtz = rounding == "rtz"
    if src.is_fp8:
        v = _widen(b, x, src, arch)
        return _narrow(b, v, dst, arch, False) if dst.is_fp8 else _from_f32(b, v, dst)
    if src.name == "f64":
        v = fp8.f64_to_f32_rtz(b, x) if rtz else fp8.f64_to_f32_odd(b, x)
    else:
        v = _to_f32(b, x, src)
    return _narrow(b, v, dst, arch, rtz)
