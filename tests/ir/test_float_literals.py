"""Float constants print so that they read back as the same value of their type.

Six digits after the point (``1.000000e+00``) are kept when they are enough; otherwise MLIR
writes LLVM's shortest safe form (``1.22070313E-4``) or the bit pattern. A lossy literal
would make a kernel reloaded from its printed ttir (the interpreter's disk-cache entry)
compute with a different constant than the kernel that was compiled.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.ir.attrs import format_float
from workbench.ir.parser_lex import float_from_text
from workbench.ir.types import FloatType


def _bits_to_values(name: str, bits: np.ndarray) -> list[float]:
    """Finite values of float type ``name`` with the given random bit patterns."""
    with np.errstate(invalid="ignore"):  # NaN patterns, dropped below
        if name == "f64":
            vals = bits.astype(np.uint64).view(np.float64)
        elif name == "f32":
            vals = bits.astype(np.uint32).view(np.float32).astype(np.float64)
        elif name == "f16":
            vals = bits.astype(np.uint16).view(np.float16).astype(np.float64)
        else:  # bf16: the high half of an f32
            vals = (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return [float(v) for v in vals if np.isfinite(v)]


@pytest.mark.parametrize("name,width", [("f64", 64), ("f32", 32), ("f16", 16), ("bf16", 16)])
def test_random_values_read_back_bit_identical(name, width):
    rng = np.random.default_rng()
    hi = np.iinfo(np.uint64).max if width == 64 else (1 << width) - 1
    bits = rng.integers(0, hi, size=3000, dtype=np.uint64, endpoint=True)
    t = FloatType(name)
    for v in _bits_to_values(name, bits):
        text = format_float(v, t)
        back = float_from_text(text, t)
        if name == "f64":
            same = struct.pack("<d", back) == struct.pack("<d", v)
        elif name == "f32":
            same = np.float32(back) == np.float32(v)
        elif name == "f16":
            same = np.float16(back) == np.float16(v)
        else:
            b = struct.unpack("<I", struct.pack("<f", back))[0]
            b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
            same = struct.unpack("<f", struct.pack("<I", b))[0] == v
        assert same, (name, v, text)


def test_literals_take_mlirs_forms():
    f32, f64 = FloatType("f32"), FloatType("f64")
    assert format_float(1.5, f32) == "1.500000e+00"  # six digits suffice
    assert format_float(0.1, f32) == "1.000000e-01"  # ... in the constant's own type
    assert format_float(2.0 ** -13, f32) == "1.22070313E-4"  # nine digits, 'E'
    assert format_float(1.0 / 3.0, f32) == "0.333333343"  # plain when little padding
    assert format_float(1.0 / 3.0, f64) == "0.33333333333333331"  # seventeen for f64
    assert format_float(2.0 ** 24, f32) == "0x4B800000"  # no decimal point: the bits


@wb.jit
def _scale_shift(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x * (0.5 ** 13) + 1.0 / 3.0
    y += 0x800000  # rounds to an integer in f32 ...
    y -= 0x800000  # ... so a constant off by one ulp shows
    tl.store(out_ptr + offs, y, mask=mask)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_kernel_reloaded_from_the_disk_cache_keeps_its_constants(tmp_path, monkeypatch,
                                                                  target):
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("WORKBENCH_DISK_CACHE", raising=False)
    monkeypatch.delenv("WORKBENCH_ALWAYS_COMPILE", raising=False)
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1" if target == "interpreter" else "0")
    rng = np.random.default_rng()
    n = 3000
    # values whose scaled, shifted sum sits near a half: any error in a constant flips it
    x = (rng.integers(0, 1 << 20, n) * 8192.0 + 4096.0 - 8192.0 / 3).astype(np.float32)
    want = x * np.float32(2.0 ** -13) + np.float32(1.0 / 3.0)
    want = (want + np.float32(0x800000)) - np.float32(0x800000)
    for expect in ("miss", "hit"):
        out = np.full(n, np.nan, np.float32)
        ck = wb.jit(_scale_shift.fn)[(wb.cdiv(n, 512),)](x, out, n, BLOCK=512)
        assert ck.extra["disk_cache"] == expect
        np.testing.assert_array_equal(out, want)
