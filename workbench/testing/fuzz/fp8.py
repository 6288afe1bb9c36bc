"""The fuzzer's own model of casts to and from the 8-bit float dtypes (values kept in float32
arrays), written from the definitions rather than from the compiler:

- float8e4nv (OCP e4m3fn: bias 7, largest finite 448, no infinities) and float8e5 (e5m2: bias 15,
  largest finite 57344): round to nearest even and saturate to the largest finite value
  (PTX ISA, ``cvt`` with ``.satfinite``, which Triton 3.6 emits on NVIDIA targets); the
  rounding itself is ``ml_dtypes``' (``float8_e4m3fn``, ``float8_e5m2``).
- float8e4b15 (bias 15, largest 1.75, no infinities or NaN): Triton's NVIDIA conversion
  (``language/extra/cuda/utils.py``'s inline PTX): the value goes to float16 first (from
  float32 rounding toward zero; wider or other types pass through float32 by round to nearest
  even), its magnitude is clamped to 1.75 and rounded half away from zero to 3 mantissa bits.
- Widening an 8-bit float to any float type is exact; 8-bit floats do not convert to or from
  integers (Triton 3.6 refuses it; the generator never asks).
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

_ML = {"fp8e4nv": ml_dtypes.float8_e4m3fn, "fp8e5": ml_dtypes.float8_e5m2}
_MAX = {"fp8e4nv": 448.0, "fp8e5": 57344.0}


def _f32_to_f16_rtz(x: np.ndarray) -> np.ndarray:
    """float32 -> float16 rounding toward zero (one step back where round-to-nearest went
    past the value's magnitude; 65504 for anything larger)."""
    h = x.astype(np.float16)
    with np.errstate(invalid="ignore"):
        over = np.abs(h.astype(np.float32)) > np.abs(x)
    bits: Any = h.view(np.uint16)
    return np.where(over, bits - np.uint16(1), bits).astype(np.uint16).view(np.float16)


def to_e4b15(x: np.ndarray, src: str) -> np.ndarray:
    """``x`` (a float dtype ``src``'s array) cast to float8e4b15, as float32 values."""
    if src == "fp16":
        h = x.astype(np.float16)
    else:
        h = _f32_to_f16_rtz(x.astype(np.float32))
    bits = h.view(np.uint16).astype(np.uint32)
    mag = np.minimum(bits & 0x7FFF, 0x3F00)
    byte = ((mag + 0x40) >> 7) | ((bits >> 8) & 0x80)
    wide = ((byte & 0x80) << 8) | ((byte & 0x7F) << 7)
    return wide.astype(np.uint16).view(np.float16).astype(np.float32)


def cast_fp8(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """``x.to(dst)`` where ``src`` or ``dst`` is an 8-bit float (module docstring); results of
    an 8-bit ``dst`` are float32 arrays holding the rounded values. Raises ValueError for an
    integer or bool on either side."""
    if src in ("i1",) or dst in ("i1",) or src.startswith(("i", "u")) or \
            dst.startswith(("i", "u")):
        raise ValueError(f"no cast between {src} and {dst}")
    x = np.asarray(x)
    if not dst.startswith("fp8"):  # widening: exact in every float type
        y = x.astype(np.float32)
        if dst == "bf16":
            return y
        return y.astype({"fp16": np.float16, "fp32": np.float32, "fp64": np.float64}[dst])
    if dst == "fp8e4b15":
        return to_e4b15(x, src)
    wide = x.astype(np.float64) if src == "fp64" else x.astype(np.float32)
    m = _MAX[dst]
    with np.errstate(invalid="ignore"):
        clipped = np.where(np.isnan(wide), wide, np.clip(wide, -m, m))
    return clipped.astype(_ML[dst]).astype(np.float32)
