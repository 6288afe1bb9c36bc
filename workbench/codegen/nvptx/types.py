"""Mapping of IR scalar types to NVPTX LLVM types, and constants.

``bf16`` is carried as ``i16`` bits (llvmlite has no ``bfloat`` type): arithmetic on it widens
to f32 (exact: the bits shifted left by 16) and narrows with ``cvt.rn.bf16.f32`` (PTX ISA 9.7.9.21,
sm_80+), which is what Triton does on sm_80 too. ``i1`` lives in memory as one byte. 8-bit
floats are carried as ``i8`` bits (:mod:`.fp8cvt` converts them).
"""
from __future__ import annotations

import struct

import numpy as np
from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.fp8 import const_code as fp8_const
from ...ir.types import FloatType, IntType, PointerType

I1, I8, I16, I32, I64 = (ir.IntType(w) for w in (1, 8, 16, 32, 64))
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
GLOBAL_PTR = ir.PointerType(addrspace=1)
SHARED_PTR = ir.PointerType(addrspace=3)


def is_bf16(t) -> bool:
    return isinstance(t, FloatType) and t.name == "bf16"


def llvm_type(t) -> ir.Type:
    """LLVM type of a scalar IR type (f16 -> half, bf16 -> i16 bits, pointers -> ptr addrspace(1)).

    Raises UnsupportedError for other types."""
    if isinstance(t, IntType):
        return ir.IntType(t.width)
    if isinstance(t, FloatType):
        return {"f16": F16, "bf16": I16, "f32": F32, "f64": F64}.get(t.name, I8)
    if isinstance(t, PointerType):
        return GLOBAL_PTR
    raise UnsupportedError(f"type {t} is not supported by the CUDA backend")


def memory_type(t) -> ir.Type:
    """LLVM type of one element in global or shared memory (i1 -> i8, pointers -> i64)."""
    if isinstance(t, IntType) and t.width == 1:
        return I8
    if isinstance(t, PointerType):
        return I64
    return llvm_type(t)


def byte_size(t) -> int:
    """Bytes of one element of scalar type ``t`` in memory (i1 -> 1, pointers -> 8)."""
    if isinstance(t, PointerType):
        return 8
    return max(t.width // 8, 1)


def bf16_bits(value: float) -> int:
    """bf16 bit pattern of ``value``, rounded to nearest even (NaN stays NaN)."""
    bits = struct.unpack("<I", struct.pack("<f", float(np.float32(value))))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        return 0x7FC0
    bits += 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16) & 0xFFFF


def constant(t, value) -> ir.Constant:
    """LLVM constant of IR scalar type ``t`` holding the Python ``value``."""
    lt = llvm_type(t)
    if isinstance(t, IntType):
        v = int(value)
        if t.width == 1:
            return ir.Constant(I1, 1 if v else 0)
        v &= (1 << t.width) - 1
        if v >= 1 << (t.width - 1):
            v -= 1 << t.width
        return ir.Constant(lt, v)
    if is_bf16(t):
        b = bf16_bits(value)
        return ir.Constant(I16, b - (1 << 16) if b >= 1 << 15 else b)
    if isinstance(t, FloatType) and t.is_fp8:
        code = fp8_const(t.name, value)
        return ir.Constant(I8, code - 256 if code >= 128 else code)
    if isinstance(t, FloatType) and t.name == "f16":
        return ir.Constant(F16, float(np.float16(value)))
    if isinstance(t, FloatType) and t.name == "f32":
        return ir.Constant(F32, float(np.float32(value)))
    return ir.Constant(lt, float(value))
