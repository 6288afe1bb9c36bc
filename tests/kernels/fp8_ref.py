"""Reference fp8 conversions for the tests, from ml_dtypes (the four MLIR formats) and from
first principles (float8e4b15, which ml_dtypes does not have)."""
from __future__ import annotations

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes gives numpy its fp8 dtypes")

# tl dtype name -> ml_dtypes dtype
ML = {"float8e4nv": ml_dtypes.float8_e4m3fn, "float8e5": ml_dtypes.float8_e5m2,
      "float8e4b8": ml_dtypes.float8_e4m3fnuz, "float8e5b16": ml_dtypes.float8_e5m2fnuz}


def saturating(x: np.ndarray, name: str, rtz: bool = False) -> np.ndarray:
    """uint8 codes of ``x`` (float32/float64) in format ``name``: ml_dtypes' round to nearest
    even after clamping to +-max (the workbench saturates; ml_dtypes overflows to inf/NaN);
    ``rtz`` steps results that rounded away from zero one code back toward zero."""
    mlt = ML[name]
    mx = float(ml_dtypes.finfo(mlt).max)
    xc = np.clip(x.astype(np.float64), -mx, mx)
    codes = xc.astype(mlt).view(np.uint8).copy()
    if rtz:
        back = codes.view(mlt).astype(np.float64)
        away = np.abs(back) > np.abs(xc)
        mag = (codes & 0x7F).astype(np.int16) - away
        sign = codes & 0x80
        fnuz = name in ("float8e4b8", "float8e5b16")
        stepped = np.where((mag == 0) & fnuz, 0, mag | sign).astype(np.uint8)
        codes = np.where(away, stepped, codes)
    return codes


def same_codes(got: np.ndarray, want: np.ndarray, name: str) -> np.ndarray:
    """Elementwise: equal codes, or both NaN in format ``name``."""
    g, w = got.view(np.uint8), want.view(np.uint8)
    mlt = ML[name]
    return (g == w) | (np.isnan(g.view(mlt).astype(np.float32))
                       & np.isnan(w.view(mlt).astype(np.float32)))


def e4b15_value(codes: np.ndarray) -> np.ndarray:
    """float64 values of float8e4b15 codes: sign, 4 exponent bits (bias 15), 3 mantissa bits,
    no inf or NaN."""
    c = codes.astype(np.int64)
    e, m = (c >> 3) & 0xF, c & 7
    mag = np.where(e == 0, m / 8.0 * 2.0 ** -14, (1 + m / 8.0) * 2.0 ** (e - 15.0))
    return np.where(c & 0x80, -mag, mag)


def e4b15_from_f16(h: np.ndarray) -> np.ndarray:
    """Codes of Triton's fp16 -> float8e4b15 conversion: |x| clamped to 1.75 (NaN and inf
    too), then the nearest code with ties away from zero; the sign bit is kept."""
    a = np.abs(h.astype(np.float64))
    a = np.where(np.isnan(a) | (a > 1.75), 1.75, a)
    grid = e4b15_value(np.arange(0x7F))  # magnitudes 0 .. 1.875
    dist = np.abs(a[:, None] - grid[None, :])
    best = dist.min(axis=1, keepdims=True)
    mag = np.where(dist == best, np.arange(0x7F)[None, :], -1).max(axis=1)  # ties: the larger
    sign = (h.view(np.uint16) >> 8) & 0x80
    return (mag | sign).astype(np.uint8)
