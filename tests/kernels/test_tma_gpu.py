"""Tensor descriptors through the TMA unit on an sm_90 GPU, against numpy: tile copies for
each swizzle width and box split, tiles hanging over every edge (TMA zero-fills loads and
clips stores), NaN padding, a tutorial-09-style TMA matmul on wgmma, device-side descriptors
(tensor maps built in global scratch, with and without ``set_allocator``), and the
``WORKBENCH_CUDA_TMA=0`` fallback giving the same results. Skipped without a GPU."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu


def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(np.ascontiguousarray(a))


def _sync():
    from workbench.backends import cuda_driver
    cuda_driver.synchronize()


@wb.jit
def tile_plus_one(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    out_desc.store([m, n], in_desc.load([m, n]) + 1)


@wb.jit
def tile_at(in_desc, out_ptr, o0, o1, BM: tl.constexpr, BN: tl.constexpr):
    t = in_desc.load([o0, o1])
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    tl.store(out_ptr + rows * BN + cols, t)


@wb.jit
def tma_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


def _random(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-100, 100, shape).astype(dtype)


@pytest.mark.parametrize("dtype, block", [
    (np.float32, (32, 64)),    # 128-byte swizzle, 2 boxes along the columns
    (np.float16, (512, 16)),   # 32-byte swizzle, 2 boxes of 256 rows
    (np.float16, (64, 128)),   # 128-byte swizzle, 2 boxes along the columns
    (np.int8, (16, 256)),      # 128-byte swizzle of bytes, 2 boxes
    (np.float32, (4, 64)),     # fewer than 8 rows: no swizzle
])
def test_tma_tile_copy_with_ragged_edges(dtype, block):
    rng = np.random.default_rng()
    bm, bn = block
    m = bm * 2 + int(rng.integers(1, bm))
    n = bn + int(rng.integers(1, bn)) // 16 * 16 + 16
    pad = 16  # columns and rows around the tensor that the stores must not touch
    x = _random(rng, (m, n), dtype)
    fill = np.full((m + pad, n + pad), 99, dtype)
    dx, dy = _dev(x), _dev(fill)
    a = TensorDescriptor(dx, [m, n], [n, 1], list(block))
    b = TensorDescriptor(dy, [m, n], [n + pad, 1], list(block))
    k = tile_plus_one[(-(-m // bm), -(-n // bn))](a, b, BM=bm, BN=bn)
    _sync()
    assert "cp.async.bulk.tensor.2d" in k.asm["ptx"]
    got = dy.to_numpy()
    want = fill.copy()
    want[:m, :n] = x + np.asarray(1, dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("padding", ["zero", "nan"])
@pytest.mark.parametrize("where", ["block", "past_the_end", "before_the_start", "inside"])
def test_tma_load_fills_out_of_bounds_elements(padding, where):
    rng = np.random.default_rng()
    m, n, bm, bn = 45, 72, 16, 32
    x = rng.standard_normal((m, n)).astype(np.float32)
    dx = _dev(x)
    a = TensorDescriptor(dx, [m, n], [n, 1], [bm, bn], padding=padding)
    pad = 0.0 if padding == "zero" else np.nan
    # any row; the innermost offset a multiple of 16 bytes (4 fp32), as Triton documents for
    # descriptor loads: on an H200 an offset of 63 or -7 elements faults (illegal instruction)
    offsets = {"block": (32, 64), "past_the_end": (m - 5, n - 8), "before_the_start": (-3, -8),
               "inside": (int(rng.integers(0, m - bm)), 40)}
    for o0, o1 in (offsets[where],):
        out = _dev(np.full((bm, bn), 7.0, np.float32))
        k = tile_at[(1,)](a, out, o0, o1, BM=bm, BN=bn)
        _sync()
        assert "cp.async.bulk.tensor.2d" in k.asm["ptx"]
        want = np.full((bm, bn), pad, np.float32)
        r = np.arange(bm)[:, None] + o0
        c = np.arange(bn)[None, :] + o1
        ok = (r >= 0) & (r < m) & (c >= 0) & (c < n)
        want[ok] = x[np.clip(r, 0, m - 1), np.clip(c, 0, n - 1)][ok]
        np.testing.assert_array_equal(out.to_numpy(), want)


@pytest.mark.parametrize("m, n, k", [(256, 256, 192), (200, 136, 200)])
def test_tma_matmul_matches_numpy(m, n, k):
    rng = np.random.default_rng()
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    da, db = _dev(a), _dev(b)
    dc = _dev(np.full((m, n), np.nan, np.float16))
    bm, bn, bk = 128, 128, 64
    ad = TensorDescriptor(da, [m, k], [k, 1], [bm, bk])
    bd = TensorDescriptor(db, [k, n], [n, 1], [bk, bn])
    cd = TensorDescriptor(dc, [m, n], [n, 1], [bm, bn])
    kern = tma_matmul[(-(-m // bm), -(-n // bn))](ad, bd, cd, k, BM=bm, BN=bn, BK=bk)
    _sync()
    assert "wgmma.mma_async" in kern.asm["ptx"]
    assert "cp.async.bulk.tensor.2d" in kern.asm["ptx"]
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(dc.to_numpy().astype(np.float32), want, rtol=1e-2, atol=5e-2)


def test_switching_tma_off_gives_the_same_tiles(monkeypatch):
    rng = np.random.default_rng()
    m, n = 77, 96
    x = rng.standard_normal((m, n)).astype(np.float32)
    outs = []
    for flag in ("1", "0"):
        monkeypatch.setenv("WORKBENCH_CUDA_TMA", flag)
        dy = _dev(np.full((m, n), np.nan, np.float32))
        a = TensorDescriptor(_dev(x), [m, n], [n, 1], [32, 32])
        b = TensorDescriptor(dy, [m, n], [n, 1], [32, 32])
        k = tile_plus_one[(3, 3)](a, b, BM=32, BN=32)
        _sync()
        assert ("cp.async.bulk.tensor" in k.asm["ptx"]) == (flag == "1")
        outs.append(dy.to_numpy())
    np.testing.assert_array_equal(outs[0], x + 1)
    np.testing.assert_array_equal(outs[1], x + 1)


@wb.jit
def device_tile_plus_one(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN],
                                  padding_option="nan")
    o = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    o.store([m, n], d.load([m, n]) + 1)


@wb.jit
def device_tile_at(x_ptr, out_ptr, M, N, o0, o1, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN],
                                  padding_option="nan")
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    tl.store(out_ptr + rows * BN + cols, d.load([o0, o1]))


def test_device_descriptors_with_and_without_an_allocator():
    import contextvars

    from workbench.backends.cuda_driver import DeviceArray
    rng = np.random.default_rng()
    m, n, bm, bn = 100, 72, 32, 32
    x = rng.standard_normal((m, n)).astype(np.float32)
    dx = _dev(x)
    asked = []

    def allocator(size, align, stream):
        asked.append((size, align))
        return DeviceArray.empty((size,), np.uint8)

    def run(with_allocator):
        if with_allocator:
            wb.set_allocator(allocator)
        dy = _dev(np.full((m, n), np.nan, np.float32))
        k = device_tile_plus_one[(4, 3)](dx, dy, m, n, BM=bm, BN=bn)
        _sync()
        return k, dy.to_numpy()

    k, got = contextvars.Context().run(run, True)
    assert "tensormap.replace.tile.global_address" in k.asm["ptx"]
    assert asked == [(256 * 12, 128)]
    np.testing.assert_array_equal(got, x + 1)
    _, got = contextvars.Context().run(run, False)  # the kernel's own scratch buffer
    np.testing.assert_array_equal(got, x + 1)
    out = _dev(np.zeros((bm, bn), np.float32))
    device_tile_at[(1,)](dx, out, m, n, m - 7, -4, BM=bm, BN=bn)
    _sync()
    want = np.full((bm, bn), np.nan, np.float32)
    want[:7, 4:] = x[m - 7:, :bn - 4]
    np.testing.assert_array_equal(out.to_numpy(), want)
