"""wgmma shared-memory matrix descriptors (PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format")
and the operand geometry against the nvmma_shared layout: pure Python, no GPU."""
from __future__ import annotations

import itertools

import pytest

from workbench.codegen.nvptx.smem_access import nvmma_offset_py
from workbench.codegen.nvptx.wgmma import OperandGeometry, matrix_descriptor
from workbench.layouts import NVMMASharedLayout
from workbench.layouts.convert import nvmma_shared_to_linear


def test_descriptor_fields_by_hand():
    # start 0x400 >> 4 = 0x40 (bits 0-13); LBO 16 >> 4 = 1 (bits 16-29); SBO 1024 >> 4 = 64
    # (bits 32-45); 128-byte swizzle = mode 1 (bits 62-63)
    assert matrix_descriptor(0x400, 16, 1024, 128) == 0x4000_0040_0001_0040
    # PTX ISA example "MN-major, 64B swizzling, bf16": LBO = 256 * 2 B (encoded 32),
    # SBO = 512 * 2 B (encoded 64); 64-byte swizzle = mode 2
    assert matrix_descriptor(0, 512, 1024, 64) == (32 << 16) | (64 << 32) | (2 << 62)
    assert matrix_descriptor(0, 512, 1024, 64) == 0x8000_0040_0020_0000
    # PTX ISA example "K-major, 32B swizzling, tf32": LBO assumed 1, SBO = 64 * 4 B (16); mode 3
    assert matrix_descriptor(0, 16, 256, 32) == 0xC000_0010_0001_0000
    # no swizzle: mode 0; the largest start address the 14-bit field holds
    assert matrix_descriptor(0x3FFF0, 128, 256, 0) == 0x3FFF | (8 << 16) | (16 << 32)


@pytest.mark.parametrize("bad", [(8, 16, 16, 128), (0, 24, 16, 128), (0, 16, 1 << 18, 128),
                                 (0, 16, 16, 96)])
def test_descriptor_rejects_bad_fields(bad):
    with pytest.raises(ValueError):
        matrix_descriptor(*bad)


def test_geometry_of_the_matmul_tiles():
    a = OperandGeometry(NVMMASharedLayout(128, False, 16), (128, 64), 0, 2)
    assert (a.k_major, a.trans, a.lbo, a.sbo) == (True, 0, 16, 1024)
    assert a.offset(64, 16) == 64 * 128 + 32
    assert a.high_bits() == matrix_descriptor(0, 16, 1024, 128)
    b = OperandGeometry(NVMMASharedLayout(128, False, 16), (64, 128), 1, 2)  # N contiguous
    assert (b.k_major, b.trans, b.lbo, b.sbo) == (False, 1, 64 * 128, 1024)
    assert b.offset(64, 16) == 64 * 128 + 16 * 128
    bt = OperandGeometry(NVMMASharedLayout(128, True, 16), (64, 64), 1, 2)  # K contiguous (K^T)
    assert (bt.k_major, bt.trans) == (True, 0)


@pytest.mark.parametrize("swz,transposed,shape", [
    (128, False, (64, 128)), (128, True, (64, 64)), (64, False, (32, 64)), (32, True, (16, 32)),
    (128, False, (128, 64)), (64, True, (64, 32))])
def test_offset_formula_is_the_layout(swz, transposed, shape):
    enc = NVMMASharedLayout(swz, transposed, 16)
    ll = nvmma_shared_to_linear(enc, shape)
    for off in range(shape[0] * shape[1]):
        coord = ll.apply(offset=off)
        assert nvmma_offset_py(enc, shape, coord) == off


def _swizzle(addr: int, swz: int) -> int:
    """The hardware swizzle: 16-byte chunk bits 4.. XOR-ed with address bits 7.. (CuTe
    Swizzle<B, 4, 3>, B = log2(swz / 16); PTX ISA 9.7.15.5.1.2.1)."""
    bits = (swz // 16).bit_length() - 1
    return addr ^ (((addr >> 7) & ((1 << bits) - 1)) << 4)


def _hw_byte(geo, start, mn, k):
    """Where wgmma reads element (mn, k) of its tile: the PTX ISA canonical layouts
    (K-major: ((8,m),(T,2k)):((8T,SBO),(1,T)); MN-major: ((T,S/16,m),(8,k)):((1,T,LBO),
    (S/16 T,SBO)), in 16-byte units T), then the swizzle on the absolute address."""
    s, eb = geo.swizzle, geo.eb
    if geo.k_major:
        lin = (mn % 8) * s + (mn // 8) * geo.sbo + k * eb
    else:
        lin = (mn % geo.tc) * eb + (mn // geo.tc) * geo.lbo + (k % 8) * s + (k // 8) * geo.sbo
    return _swizzle(start + lin, s)


@pytest.mark.parametrize("op_idx,swz,transposed,shape,mn_ext", [
    (0, 128, False, (128, 64), 64),   # A, K-major, 128 B
    (0, 128, True, (128, 64), 64),    # A, M-major (transposed A)
    (1, 128, False, (64, 128), 128),  # B, N-major (the usual row-major B)
    (1, 128, False, (64, 256), 256),
    (1, 128, True, (64, 64), 64),     # B, K-major (attention's K^T)
    (1, 64, False, (32, 64), 32),     # B, N-major, 64 B swizzle, n32 instructions
    (1, 128, False, (32, 64), 32),    # B, N-major, 128 B swizzle, n32: starts inside an atom
    (1, 128, False, (32, 128), 32),   # (attention's V on 8 warps, warpsPerCTA [4, 2])
    (1, 128, False, (64, 128), 16),
    (0, 64, False, (64, 32), 64),     # A, K = 32: 64 B swizzle
    (1, 32, True, (16, 16), 16)])     # B, K = 16: 32 B swizzle
def test_descriptors_address_the_layout(op_idx, swz, transposed, shape, mn_ext):
    """Every element a wgmma reads through our descriptors is the element the nvmma_shared
    layout put there (buffer at a 1024-byte aligned base)."""
    enc = NVMMASharedLayout(swz, transposed, 16)
    geo = OperandGeometry(enc, shape, op_idx, 2)
    base = 3 * 1024
    k_dim = 1 if op_idx == 0 else 0
    K, MN = shape[k_dim], shape[1 - k_dim]
    for mn0, k0 in itertools.product(range(0, MN, mn_ext), range(0, K, 16)):
        start = base + geo.offset(mn0, k0)
        for mn, k in itertools.product(range(mn_ext), range(16)):
            coord = [0, 0]
            coord[k_dim], coord[1 - k_dim] = k0 + k, mn0 + mn
            want = base + 2 * nvmma_offset_py(enc, shape, coord)
            assert _hw_byte(geo, start, mn, k) == want, (mn0, k0, mn, k)


class _IntBuilder:
    """Evaluates the i32 arithmetic of :meth:`OperandGeometry.origin` on Python ints."""

    @staticmethod
    def _v(x):
        return int(getattr(x, "constant", x))

    def mul(self, a, b):
        return self._v(a) * self._v(b)

    def add(self, a, b):
        return self._v(a) + self._v(b)

    def udiv(self, a, b):
        return self._v(a) // self._v(b)

    def urem(self, a, b):
        return self._v(a) % self._v(b)


class _KL:
    b = _IntBuilder()


@pytest.mark.parametrize("op_idx,swz,transposed,shape,step", [
    (1, 128, False, (32, 64), 32), (1, 128, False, (32, 128), 32), (1, 64, False, (32, 128), 16),
    (0, 128, False, (128, 64), 64), (0, 128, True, (128, 64), 64), (1, 128, True, (64, 64), 32)])
def test_run_time_origin_is_the_offset(op_idx, swz, transposed, shape, step):
    """A warp group's run-time M/N origin (inside a swizzle atom's row or not) gives the
    byte offset the per-instruction offsets are taken from."""
    geo = OperandGeometry(NVMMASharedLayout(swz, transposed, 16), shape, op_idx, 2)
    mn_ext = shape[1] if op_idx == 1 else shape[0]
    for mn in range(0, mn_ext, step):
        assert geo.origin(_KL(), mn) == geo.offset(mn, 0), mn


@pytest.mark.parametrize("op_idx,swz,shape,mn_ext", [
    (0, 128, (128, 128), 64),   # A, K = 128 fp8: 128 B rows
    (0, 64, (64, 64), 64),      # A, K = 64: 64 B swizzle
    (0, 32, (64, 32), 64),      # A, K = 32: 32 B swizzle
    (1, 128, (128, 256), 256),  # B (transposed = true: K contiguous), n256 instructions
    (1, 64, (64, 128), 128),
    (1, 64, (64, 64), 32),      # B, two warp groups along N: n32 instructions
    (1, 32, (32, 64), 64)])
def test_fp8_descriptors_address_the_layout(op_idx, swz, shape, mn_ext):
    """fp8 wgmma (k32, both operands K-major): every byte an instruction reads through our
    descriptors is the element the 8-bit nvmma_shared layout put there."""
    enc = NVMMASharedLayout(swz, op_idx == 1, 8)
    geo = OperandGeometry(enc, shape, op_idx, 1)
    assert (geo.k_major, geo.trans) == (True, 0)
    ll = nvmma_shared_to_linear(enc, shape)
    for off in range(0, shape[0] * shape[1], 7):
        assert nvmma_offset_py(enc, shape, ll.apply(offset=off)) == off
    base = 5 * 1024
    k_dim = 1 if op_idx == 0 else 0
    K, MN = shape[k_dim], shape[1 - k_dim]
    for mn0, k0 in itertools.product(range(0, MN, mn_ext), range(0, K, 32)):
        start = base + geo.offset(mn0, k0)
        for mn, k in itertools.product(range(mn_ext), range(32)):
            coord = [0, 0]
            coord[k_dim], coord[1 - k_dim] = k0 + k, mn0 + mn
            assert _hw_byte(geo, start, mn, k) == base + nvmma_offset_py(enc, shape, coord)
