"""IR types as numpy dtypes, and the exact float conversions the interpreter needs.

Representation of IR values in the interpreter (see :mod:`workbench.backends.interp.compiler`):

- ``i1`` -> ``bool``; ``iN`` -> signed ``intN`` (signless in the IR: ops that care about
  signedness reinterpret the bits with :func:`unsigned`), so arithmetic wraps at each width.
- ``f16``/``f32``/``f64`` -> ``float16``/``float32``/``float64``.
- ``bf16`` -> ``uint16`` holding the high half of an fp32 (bits). Arithmetic on bf16 widens to
  fp32, computes, and rounds back to nearest-even, as GPUs without bf16 ALUs do.
- 8-bit floats (``f8E4M3FN``...) -> ``uint8`` bit patterns; they convert through float32
  (:mod:`.fp8`).
- pointers -> ``int64`` byte addresses.
"""
from __future__ import annotations

import numpy as np

from ...ir.types import FloatType, IntType, PointerType, Type
from . import fp8

_INT: dict[int, np.dtype] = {1: np.dtype(np.bool_), 8: np.dtype(np.int8), 16: np.dtype(np.int16),
                             32: np.dtype(np.int32), 64: np.dtype(np.int64)}
_UINT: dict[int, np.dtype] = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16),
                              32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}
_FLOAT: dict[str, np.dtype] = {"f16": np.dtype(np.float16), "bf16": np.dtype(np.uint16),
                               "f32": np.dtype(np.float32), "f64": np.dtype(np.float64)}
ADDR = np.dtype(np.int64)


def np_dtype(t: Type) -> np.dtype:
    """The numpy dtype holding values of scalar or tensor IR type ``t`` (see module doc).

    Raises TypeError for types the interpreter cannot hold (memdesc, function types)."""
    s = t.scalar
    if isinstance(s, IntType):
        return _INT[s.width]
    if isinstance(s, FloatType):
        return _FLOAT.get(s.name, _UINT[8])
    if isinstance(s, PointerType):
        return ADDR
    raise TypeError(f"the interpreter has no value representation for type {t}")


def mem_dtype(pointee: Type) -> np.dtype:
    """The numpy dtype of memory a ``!tt.ptr<pointee>`` addresses (``i1`` is one byte)."""
    if isinstance(pointee, IntType) and pointee.width == 1:
        return np.dtype(np.int8)
    return np_dtype(pointee)


def is_bf16(t: Type) -> bool:
    return isinstance(t.scalar, FloatType) and t.scalar.name == "bf16"


def unsigned(x: np.ndarray) -> np.ndarray:
    """The same bits as an unsigned integer array (bools stay bools)."""
    if x.dtype == np.bool_:
        return x
    return x.view(_UINT[x.dtype.itemsize * 8])


def signed_i1(x: np.ndarray) -> np.ndarray:
    """An ``i1`` array read as a signed integer: true is -1 (MLIR's signed view of i1)."""
    return -(x.astype(np.int8))


# ---- bf16 -------------------------------------------------------------------------------------
def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """uint16 bf16 bits -> float32 (exact)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> uint16 bf16 bits, rounding to nearest even; NaN stays a (quiet) NaN."""
    x = np.asarray(x, dtype=np.float32)
    b = x.view(np.uint32)
    rounded = (b + np.uint32(0x7FFF) + ((b >> 16) & np.uint32(1))) >> 16
    nan = np.isnan(x)
    if nan.any():
        rounded = np.where(nan, (b >> 16) | np.uint32(0x40), rounded)
    return rounded.astype(np.uint16)


def f64_to_f32_odd(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounding to odd (so a second rounding to a narrower type is exact RNE).
    """
    x = np.asarray(x, dtype=np.float64)
    f = x.astype(np.float32)
    back = f.astype(np.float64)
    inexact = (back != x) & np.isfinite(x)
    if not inexact.any():
        return f
    bits = f.view(np.uint32).copy()
    away = inexact & (np.abs(back) > np.abs(x))  # rounded away from zero: step back
    bits = np.where(away, bits - np.uint32(1), bits)
    bits = np.where(inexact, bits | np.uint32(1), bits)
    return bits.view(np.float32)


def to_bf16(x: np.ndarray) -> np.ndarray:
    """Any float array -> bf16 bits with a single round-to-nearest-even."""
    if x.dtype == np.float64:
        x = f64_to_f32_odd(x)
    return f32_to_bf16(x.astype(np.float32, copy=False))


def truncate_tf32(x: np.ndarray) -> np.ndarray:
    """float32 -> float32 keeping only TF32's 10 mantissa bits, the 13 low bits cleared (round
    toward zero), which is what the tensor cores of sm_80 and sm_90 do with the raw fp32
    registers Triton 3.6 hands to ``mma ... .tf32`` and ``wgmma ... .tf32`` (measured on an
    H200: ``benchmarks/tf32_probe.py``; ``cvt.rna.tf32.f32`` would round to nearest instead).
    NaN and infinities pass through."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32)
    r = b & np.uint32(0xFFFFE000)
    keep = np.isnan(x)
    return np.where(keep, b, r).view(np.float32)


def round_toward_zero(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Narrow float ``x`` to float ``dtype`` (float16/float32) rounding toward zero."""
    r = x.astype(dtype)
    wide = r.astype(x.dtype)
    over = np.isfinite(x) & (np.abs(wide) > np.abs(x))
    if not over.any():
        return r
    ui = _UINT[dtype.itemsize * 8]
    bits = r.view(ui)
    return np.where(over, bits - ui.type(1), bits).view(dtype)


# ---- generic float conversion -----------------------------------------------------------------
def float_value(x: np.ndarray, t: Type) -> np.ndarray:
    """Numeric view of a float value of IR type ``t`` (bf16 and fp8 bits widened to float32)."""
    s = t.scalar
    if isinstance(s, FloatType) and s.is_fp8:
        return fp8.to_f32(x, fp8.fmt_of(s.name))
    return bf16_to_f32(x) if is_bf16(t) else x


def from_float(x: np.ndarray, t: Type) -> np.ndarray:
    """Round a numeric float array (any precision) to the representation of float type ``t``."""
    if is_bf16(t):
        return to_bf16(x)
    s = t.scalar
    if isinstance(s, FloatType) and s.is_fp8:
        if x.dtype == np.float64:
            x = f64_to_f32_odd(x)
        return fp8.from_f32(x.astype(np.float32, copy=False), fp8.fmt_of(s.name))
    dt = np_dtype(t)
    if x.dtype == np.float64 and dt == np.float16:
        return f64_to_f32_odd(x).astype(np.float16)
    return x.astype(dt, copy=False)


def constant_array(value, t: Type) -> np.ndarray:
    """A Python int/float/bool constant as a 1-element array of type ``t``'s representation.

    Ints wrap to the width (e.g. ``0xFFFFFFFF`` as ``i32`` is -1)."""
    s = t.scalar
    if isinstance(s, FloatType):
        return from_float(np.array([float(value)], dtype=np.float64), s)
    if isinstance(s, IntType):
        if s.width == 1:
            return np.array([bool(value)])
        v = int(value) & ((1 << s.width) - 1)
        return np.array([v], dtype=_UINT[s.width]).view(_INT[s.width])
    if isinstance(s, PointerType):
        return np.array([int(value)], dtype=ADDR)
    raise TypeError(f"cannot make a constant of type {t}")
