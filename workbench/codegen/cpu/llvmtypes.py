"""IR types to LLVM types for the host, and the value <-> memory conversions.

Every IR scalar type has a *value* type (what an SSA value holds in LLVM) and a *storage* type
(what one element occupies in memory, in user arrays and in the scratch arena):

============  ===========  ============  ===============================================
IR type       value        storage       note
============  ===========  ============  ===============================================
i1            i1           i8            bools are 1 byte in memory (numpy ``bool``)
iN            iN           iN
f16           half         half          IEEE binary16 through LLVM ``half``
bf16          float        i16           upper 16 bits of an f32; stores round to nearest even
f32 / f64     float/double same
f8E4M3FN...   i8           i8            the bit pattern; converted by ``codegen.fp8``
!tt.ptr<T>    i64          i64           an absolute address (bounds checks compare i64s)
============  ===========  ============  ===============================================

bf16 values are kept in f32 registers but every op producing a bf16 re-rounds its result to
bf16 (:func:`round_bf16`), so arithmetic matches a true bf16 unit (round to nearest even,
IEEE 754-2008 section 4.3.1).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.fp8 import const_code as fp8_const
from ...ir.types import FloatType, IntType, PointerType, TensorType, Type
from ..fp8 import f64_to_f32_odd

I1, I8, I16, I32, I64 = (ir.IntType(w) for w in (1, 8, 16, 32, 64))
HALF, FLOAT, DOUBLE = ir.HalfType(), ir.FloatType(), ir.DoubleType()
PTR = ir.PointerType()  # opaque pointer


def value_type(t: Type) -> ir.Type:
    """The LLVM type of an SSA value of IR scalar type ``t`` (the element type for tensors).
    Raises UnsupportedError for types the CPU backend cannot hold."""
    t = t.scalar
    if isinstance(t, IntType):
        return ir.IntType(t.width)
    if isinstance(t, FloatType):
        return {"f16": HALF, "bf16": FLOAT, "f32": FLOAT, "f64": DOUBLE}.get(t.name, I8)
    if isinstance(t, PointerType):
        return I64
    raise UnsupportedError(f"the CPU backend cannot hold values of type {t}")


def storage_type(t: Type) -> ir.Type:
    """The LLVM type of one element of IR scalar type ``t`` in memory."""
    t = t.scalar
    if isinstance(t, IntType) and t.width == 1:
        return I8
    if isinstance(t, FloatType) and t.name == "bf16":
        return I16
    return value_type(t)


def storage_size(t: Type) -> int:
    """Bytes one element of IR scalar type ``t`` occupies in memory (i1 -> 1, bf16 -> 2)."""
    t = t.scalar
    if isinstance(t, PointerType):
        return 8
    if isinstance(t, IntType):
        return max(1, t.width // 8)
    if isinstance(t, FloatType):
        return t.width // 8
    raise UnsupportedError(f"the CPU backend cannot store values of type {t}")


def is_bf16(t: Type) -> bool:
    return isinstance(t.scalar, FloatType) and t.scalar.name == "bf16"


def round_bf16(b: ir.IRBuilder, v):
    """Round an f32 value to the nearest bf16 (ties to even), returned as f32; NaN stays a
    quiet NaN. Formula: bits + 0x7FFF + ((bits >> 16) & 1), then clear the low 16 bits."""
    bits = b.bitcast(v, I32)
    lsb = b.and_(b.lshr(bits, ir.Constant(I32, 16)), ir.Constant(I32, 1))
    rounded = b.add(b.add(bits, ir.Constant(I32, 0x7FFF)), lsb)
    rounded = b.and_(rounded, ir.Constant(I32, 0xFFFF0000 - (1 << 32)))
    isnan = b.fcmp_unordered("uno", v, v)
    quiet = b.or_(bits, ir.Constant(I32, 0x00400000))
    quiet = b.and_(quiet, ir.Constant(I32, 0xFFFF0000 - (1 << 32)))
    return b.bitcast(b.select(isnan, quiet, rounded), FLOAT)


def fptrunc(b: ir.IRBuilder, v, ty: ir.Type):
    """``fptrunc`` to ``ty`` with one round to nearest even, also double -> half: LLVM lowers
    that to the ``__truncdfhf2`` runtime call, which MCJIT cannot resolve in this process, so
    the double is first narrowed to float *rounding to odd* (exact for a second rounding to a
    format with at most 22 significand bits; Boldo and Melquiond, IEEE TC 2008), then to half
    (F16C ``vcvtps2ph``)."""
    if not (v.type == DOUBLE and ty == HALF):
        return b.fptrunc(v, ty)
    return b.fptrunc(f64_to_f32_odd(b, v), HALF)


def to_storage(b: ir.IRBuilder, v, t: Type):
    """Convert an SSA value of IR type ``t`` to its storage representation."""
    t = t.scalar
    if isinstance(t, IntType) and t.width == 1:
        return b.zext(v, I8)
    if is_bf16(t):
        return b.trunc(b.lshr(b.bitcast(round_bf16(b, v), I32), ir.Constant(I32, 16)), I16)
    return v


def from_storage(b: ir.IRBuilder, v, t: Type):
    """Convert a loaded storage element of IR type ``t`` to its SSA value (i8 -> i1 is
    ``!= 0``; bf16 bits -> f32 by shifting into the upper half)."""
    t = t.scalar
    if isinstance(t, IntType) and t.width == 1:
        return b.icmp_unsigned("!=", v, ir.Constant(I8, 0))
    if is_bf16(t):
        return b.bitcast(b.shl(b.zext(v, I32), ir.Constant(I32, 16)), FLOAT)
    return v


def const(t: Type, value) -> ir.Constant:
    """An LLVM constant of IR scalar type ``t`` holding the Python ``value``; integers wrap to
    the width (two's complement), floats round to the type (bf16 to nearest even)."""
    t = t.scalar
    if isinstance(t, IntType):
        w = t.width
        v = int(value) % (1 << w)
        if w > 1 and v >= 1 << (w - 1):
            v -= 1 << w
        return ir.Constant(ir.IntType(w), v)
    if isinstance(t, FloatType):
        x = float(value)
        if t.is_fp8:
            code = fp8_const(t.name, x)
            return ir.Constant(I8, code - 256 if code >= 128 else code)
        if t.name == "f16":
            return ir.Constant(HALF, float(np.float16(x)))
        if t.name == "bf16":
            bits = int(np.array(x, np.float32).view(np.uint32))
            if np.isnan(x):
                bits = 0x7FC00000
            else:
                bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000) & 0xFFFFFFFF
            return ir.Constant(FLOAT, float(np.array(bits, np.uint32).view(np.float32)))
        if t.name == "f32":
            return ir.Constant(FLOAT, float(np.float32(x)))
        return ir.Constant(DOUBLE, x)
    if isinstance(t, PointerType):
        return ir.Constant(I64, int(value))
    raise UnsupportedError(f"no constant of type {t}")


def elem_type(t: Type) -> Type:
    """The element type of a tensor type, or ``t`` for a scalar."""
    return t.element if isinstance(t, TensorType) else t
