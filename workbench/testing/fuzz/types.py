"""The fuzzer's own model of the language's dtypes: numpy storage, promotion and rounding.

Written independently of :mod:`workbench.language` so that the reference evaluation does not
share code with the compiler it checks. Rules follow Triton 3.6's ``triton-semantics.rst``
(tensor/tensor promotion, scalar/tensor promotion) and ``language/semantic.py`` (casts).
A dtype is its Triton short name: ``"i1"`` (bool), ``"i8"``..``"i64"``, ``"u8"``..``"u64"``,
``"fp16"``, ``"bf16"``, ``"fp32"``, ``"fp64"``, and the 8-bit floats ``"fp8e4nv"`` (e4m3fn),
``"fp8e5"`` (e5m2) and ``"fp8e4b15"``. bf16 values live in float32 arrays and are rounded to
bf16 (round to nearest even) after every operation that makes one; 8-bit float values live in
float32 arrays too (:mod:`.fp8` rounds them) and only move (casts, trans, reshape, join/split).
"""
from __future__ import annotations

from typing import Any

import numpy as np

INTS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOATS = ("fp16", "bf16", "fp32", "fp64")
FP8 = ("fp8e4nv", "fp8e5", "fp8e4b15")
TL_NAME = {"fp8e4nv": "tl.float8e4nv", "fp8e5": "tl.float8e5", "fp8e4b15": "tl.float8e4b15",
           "i1": "tl.int1", "i8": "tl.int8", "i16": "tl.int16", "i32": "tl.int32",
           "i64": "tl.int64", "u8": "tl.uint8", "u16": "tl.uint16", "u32": "tl.uint32",
           "u64": "tl.uint64", "fp16": "tl.float16", "bf16": "tl.bfloat16",
           "fp32": "tl.float32", "fp64": "tl.float64"}
NP = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
      "fp16": np.float16, "bf16": np.float32, "fp32": np.float32, "fp64": np.float64,
      "fp8e4nv": np.float32, "fp8e5": np.float32, "fp8e4b15": np.float32}
MANTISSA = {"fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52, "fp8e4nv": 3, "fp8e5": 2,
            "fp8e4b15": 3}
FMAX = {"fp16": 65504.0, "bf16": 3.0e38, "fp32": 3.0e38, "fp64": 1.0e300, "fp8e4nv": 448.0,
        "fp8e5": 57344.0, "fp8e4b15": 1.75}
EPS = {"fp16": 2.0**-10, "bf16": 2.0**-7, "fp32": 2.0**-23, "fp64": 2.0**-52, "fp8e4nv": 2.0**-3,
       "fp8e5": 2.0**-2, "fp8e4b15": 2.0**-3}
#: the smallest positive (subnormal) value is ``2**-MINQ[d]``: a multiple of ``2**-q`` is held
#: exactly only when ``q <= MINQ[d]``
MINQ = {"fp16": 24, "bf16": 133, "fp32": 149, "fp64": 1074, "fp8e4nv": 9, "fp8e5": 16,
        "fp8e4b15": 17}


def is_float(d: str) -> bool:
    """True for fp16, bf16, fp32, fp64."""
    return d in FLOATS


def is_fp8(d: str) -> bool:
    """True for the 8-bit float dtypes."""
    return d in FP8


def is_int(d: str) -> bool:
    """True for the signed and unsigned integer dtypes (not bool)."""
    return d in INTS


def signed(d: str) -> bool:
    """True for i8..i64."""
    return d.startswith("i") and d != "i1"


def bits(d: str) -> int:
    """Bit width of an integer or bool dtype."""
    return 1 if d == "i1" else int(d[1:])


def int_range(d: str) -> tuple:
    """(lo, hi) of an integer or bool dtype."""
    w = bits(d)
    if d == "i1":
        return 0, 1
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed(d) else (0, (1 << w) - 1)


def int_promote(a: str, b: str) -> str:
    """C's usual conversions between two integer (or bool) dtypes."""
    sa, sb = signed(a), signed(b)
    if sa == sb:
        return a if bits(a) >= bits(b) else b
    u, s = (b, a) if sa else (a, b)
    return u if bits(u) >= bits(s) else s


def promote(a: str, b: str) -> str:
    """The dtype two tensors are computed in (not for / or %)."""
    for f in ("fp64", "fp32", "fp16"):
        if f in (a, b):
            return f
    if a == b == "bf16":
        return "bf16"
    if "bf16" in (a, b):
        return "fp32"
    return int_promote(a, b)


def promote_scalar(t: str, lit) -> str:
    """The dtype of ``tensor(t) <op> lit`` for a Python int or float literal."""
    if isinstance(lit, float) and not is_float(t):
        return "fp32"
    return t


def literal_dtype(lit) -> str:
    """The dtype ``to_tensor`` gives a small Python literal."""
    return "fp32" if isinstance(lit, float) else "i32"


def round_bf16(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bf16 (ties to even), kept in float32."""
    x = np.asarray(x, np.float32)
    u: Any = x.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def cast(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """``x.to(dst)``: ints wrap or extend by the source's signedness, floats round to nearest,
    float to int truncates toward zero (only used on values in range), anything to bool is
    ``!= 0``."""
    x = np.asarray(x)
    if src == dst:
        return x
    if is_fp8(src) or is_fp8(dst):
        from .fp8 import cast_fp8
        return cast_fp8(x, src, dst)
    if dst == "i1":
        return x != 0
    if src == "i1":
        x = x.astype(np.int8)
    with np.errstate(all="ignore"):
        if is_float(dst):
            y = x.astype(np.float64) if src == "fp64" or is_int(src) else x
            if is_int(src):
                # ints round once to the target (sitofp/uitofp)
                y = x.astype(NP[dst]) if dst != "bf16" else round_bf16(_int_to_f32_exact(x))
                return y
            return round_bf16(y.astype(np.float32)) if dst == "bf16" else y.astype(NP[dst])
        if is_float(src):
            wide: Any = np.int64 if signed(dst) else np.uint64
            return np.trunc(x).astype(wide).astype(NP[dst])
        return x.astype(NP[dst])


def _int_to_f32_exact(x: np.ndarray) -> np.ndarray:
    # only small ints reach a bf16 cast (the generator keeps them exact), so float32 is exact
    return x.astype(np.float32)


def store(x: np.ndarray, d: str) -> np.ndarray:
    """A value of dtype ``d`` as the numpy array kept in the evaluation."""
    x = np.asarray(x)
    if d == "bf16":
        return round_bf16(x.astype(np.float32))
    if is_fp8(d):
        from .fp8 import cast_fp8
        return cast_fp8(x.astype(np.float32), "fp32", d)
    return x.astype(NP[d])
