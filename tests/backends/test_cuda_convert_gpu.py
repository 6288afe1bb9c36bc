"""Layout conversions through Triton's conversion buffer on the GPU (rounds, XOR-ed segments,
16-byte st/ld.shared, ldmatrix and ldmatrix.trans on the load side): transposes of every
element width and matmul epilogues, bit-exact against numpy with fresh random inputs and
outputs poisoned first. Marked ``gpu``; compile-only checks of the same kernels run here."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl

DTYPES = {"i8": np.int8, "fp16": np.float16, "fp32": np.float32, "fp64": np.float64}


@wb.jit
def transpose_tile(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(out_ptr + rn[:, None] * BM + rm[None, :], tl.trans(x))


@wb.jit
def mm_tile(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
            OUT16: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    acc = tl.dot(a, b)
    if OUT16:
        tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))
    else:
        tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def _sig(dt):
    return (f"*{dt}:16", f"*{dt}:16")


@pytest.mark.parametrize("dt", list(DTYPES))
def test_transpose_ptx_goes_through_the_planned_buffer(dt):
    c = wb.compile(transpose_tile, *_sig(dt), target="cuda:90", num_warps=4, BM=64, BN=64)
    ptx = c.asm["ptx"]
    assert "st.shared" in ptx and ("ld.shared" in ptx or "ldmatrix" in ptx)
    assert c.metadata.shared <= 64 * 64 * np.dtype(DTYPES[dt]).itemsize


def test_epilogue_ptx_stores_16_byte_vectors():
    c = wb.compile(mm_tile, "*fp16:16", "*fp16:16", "*fp16:16", target="cuda:90",
                   num_warps=4, BM=64, BN=64, BK=32, OUT16=True)
    ptx = c.asm["ptx"]
    # the wgmma accumulator's fp16 halves, 8 per st.shared (4 of them, after the operands'
    # 4 copies into their wgmma buffers), loaded back with ldmatrix.x4 as Triton 3.6 does
    assert len(re.findall(r"st\.shared\.v4\.b32", ptx)) == 8
    assert len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16", ptx)) == 4


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _dev(torch, a):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def _random(rng, shape, dt):
    if dt == "i8":
        return rng.integers(-128, 128, shape).astype(np.int8)
    return rng.standard_normal(shape).astype(DTYPES[dt])


@pytest.mark.gpu
@pytest.mark.parametrize("dt", list(DTYPES))
@pytest.mark.parametrize("warps", [4, 8])
@pytest.mark.parametrize("bm,bn", [(64, 64), (32, 128), (128, 16)])
def test_transpose_on_gpu(torch, dt, warps, bm, bn):
    rng = np.random.default_rng()
    x = _random(rng, (bm, bn), dt)
    out = _dev(torch, np.zeros((bn, bm), DTYPES[dt]) - 1)
    transpose_tile[(1,)](_dev(torch, x), out, BM=bm, BN=bn, num_warps=warps)
    np.testing.assert_array_equal(out.cpu().numpy(), x.T)


@pytest.mark.gpu
@pytest.mark.parametrize("warps", [4, 8])
@pytest.mark.parametrize("out16", [True, False])
@pytest.mark.parametrize("bm,bn", [(64, 64), (128, 128), (64, 128)])
def test_epilogue_on_gpu(torch, warps, out16, bm, bn):
    rng = np.random.default_rng()
    bk = 32
    a = rng.integers(-4, 5, (bm, bk)).astype(np.float16)  # exact in fp16 and fp32
    b = rng.integers(-4, 5, (bk, bn)).astype(np.float16)
    dt = np.float16 if out16 else np.float32
    c = _dev(torch, np.full((bm, bn), np.nan, dt))
    mm_tile[(1,)](_dev(torch, a), _dev(torch, b), c, BM=bm, BN=bn, BK=bk, OUT16=out16,
                  num_warps=warps)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(dt)
    np.testing.assert_array_equal(c.cpu().numpy(), want)
