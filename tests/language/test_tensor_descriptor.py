"""Tensor descriptors: tiles read through ``tl.make_tensor_descriptor`` and host-built
``TensorDescriptor`` arguments against numpy, with fresh random inputs and offsets that put
the tile across the tensor's edges (out-of-bounds elements read as zero or NaN and are never
written), 1-D to 5-D, several dtypes, atomics, gather/scatter, the printed ttir and the
compile-time checks."""
from __future__ import annotations

import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl
from workbench.tools.tensor_descriptor import TensorDescriptor


def padded_tile(x, offsets, block, pad=0):
    """The ``block`` tile of ``x`` at ``offsets``, ``pad`` where it leaves ``x``."""
    out = np.full(block, pad, dtype=x.dtype)
    src, dst = [], []
    for o, b, n in zip(offsets, block, x.shape, strict=True):
        lo, hi = max(o, 0), min(o + b, n)
        if hi <= lo:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - o, hi - o))
    out[tuple(dst)] = x[tuple(src)]
    return out


@wb.jit
def copy_tile_2d(x_ptr, out_ptr, M, N, o0, o1, B0: tl.constexpr, B1: tl.constexpr,
                 PAD: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[B0, B1],
                                    padding_option=PAD)
    dst = tl.make_tensor_descriptor(out_ptr, shape=[B0, B1], strides=[B1, 1],
                                    block_shape=[B0, B1])
    dst.store([0, 0], src.load([o0, o1]))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8, np.uint16,
                                   np.float64])
def test_load_edges_zero_fill(backend, rng, dtype):
    m, n = int(rng.integers(5, 40)), int(rng.integers(3, 40)) * 16
    x = (rng.standard_normal((m, n)) * 50).astype(dtype)
    b0, b1 = 8, 32
    for o0, o1 in [(0, 0), (m - 3, n - 5), (-3, 7), (m + 2, 0), (2, -40), (-8, -32)]:
        out = np.full((b0, b1), 99, dtype=dtype)
        launch(backend, copy_tile_2d, (1,), x, out, m, n, o0, o1, B0=b0, B1=b1, PAD="zero")
        np.testing.assert_array_equal(out, padded_tile(x, (o0, o1), (b0, b1)))


def test_load_nan_padding(backend, rng):
    m, n = 13, 48
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = np.zeros((16, 32), np.float32)
    launch(backend, copy_tile_2d, (1,), x, out, m, n, 5, 30, B0=16, B1=32, PAD="nan")
    np.testing.assert_array_equal(out, padded_tile(x, (5, 30), (16, 32), np.nan))
    assert np.isnan(out).sum() == 16 * 32 - 8 * 18


@wb.jit
def store_tile_2d(v_ptr, out_ptr, M, N, o0, o1, B0: tl.constexpr, B1: tl.constexpr):
    dst = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[B0, B1])
    tile = tl.load(v_ptr + tl.arange(0, B0)[:, None] * B1 + tl.arange(0, B1)[None, :])
    tl.store_tensor_descriptor(dst, [o0, o1], tile)


def test_store_is_clipped(backend, rng):
    m, n = 21, 40
    for o0, o1 in [(15, 20), (-5, -9), (0, 33), (30, 0)]:
        v = rng.standard_normal((8, 16)).astype(np.float32)
        out = np.full((m, n), -1.0, np.float32)
        launch(backend, store_tile_2d, (1,), v, out, m, n, o0, o1, B0=8, B1=16)
        want = np.full((m, n), -1.0, np.float32)
        for i in range(8):
            for j in range(16):
                if 0 <= o0 + i < m and 0 <= o1 + j < n:
                    want[o0 + i, o1 + j] = v[i, j]
        np.testing.assert_array_equal(out, want)


@wb.jit
def copy_nd(x_ptr, out_ptr, s0, s1, s2, s3, s4, o0, o1, o2, o3, o4, RANK: tl.constexpr,
            B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr, B3: tl.constexpr,
            B4: tl.constexpr):
    if RANK == 1:
        src = tl.make_tensor_descriptor(x_ptr, [s0], [1], [B0])
        dst = tl.make_tensor_descriptor(out_ptr, [B0], [1], [B0])
        dst.store([0], src.load([o0]))
    elif RANK == 2:
        src = tl.make_tensor_descriptor(x_ptr, [s0, s1], [s1, 1], [B0, B1])
        dst = tl.make_tensor_descriptor(out_ptr, [B0, B1], [B1, 1], [B0, B1])
        dst.store([0, 0], src.load([o0, o1]))
    elif RANK == 3:
        src = tl.make_tensor_descriptor(x_ptr, [s0, s1, s2], [s1 * s2, s2, 1], [B0, B1, B2])
        dst = tl.make_tensor_descriptor(out_ptr, [B0, B1, B2], [B1 * B2, B2, 1], [B0, B1, B2])
        dst.store([0, 0, 0], src.load([o0, o1, o2]))
    elif RANK == 4:
        src = tl.make_tensor_descriptor(x_ptr, [s0, s1, s2, s3], [s1 * s2 * s3, s2 * s3, s3, 1],
                                        [B0, B1, B2, B3])
        dst = tl.make_tensor_descriptor(out_ptr, [B0, B1, B2, B3],
                                        [B1 * B2 * B3, B2 * B3, B3, 1], [B0, B1, B2, B3])
        dst.store([0, 0, 0, 0], src.load([o0, o1, o2, o3]))
    else:
        src = tl.make_tensor_descriptor(x_ptr, [s0, s1, s2, s3, s4],
                                        [s1 * s2 * s3 * s4, s2 * s3 * s4, s3 * s4, s4, 1],
                                        [B0, B1, B2, B3, B4])
        dst = tl.make_tensor_descriptor(out_ptr, [B0, B1, B2, B3, B4],
                                        [B1 * B2 * B3 * B4, B2 * B3 * B4, B3 * B4, B4, 1],
                                        [B0, B1, B2, B3, B4])
        dst.store([0, 0, 0, 0, 0], src.load([o0, o1, o2, o3, o4]))


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_ranks_one_to_five(backend, rng, rank):
    block = [2, 4, 2, 2, 8][5 - rank:] if rank > 1 else [16]
    # the last dim: 8 floats x 4 bytes, a multiple of 16 bytes as TMA needs
    shape = [int(rng.integers(1, 6)) for _ in range(rank - 1)] + [8 * int(rng.integers(1, 3))]
    x = rng.standard_normal(shape).astype(np.float32)
    offs = [int(rng.integers(-b, s + 1)) for s, b in zip(shape, block, strict=True)]
    out = np.full(block, 7.0, np.float32)
    pad = 5 - rank
    args = list(shape) + [1] * pad + offs + [0] * pad
    blocks = dict(zip(["B0", "B1", "B2", "B3", "B4"], block + [1] * pad, strict=True))
    launch(backend, copy_nd, (1,), x, out, *args, RANK=rank, **blocks)
    np.testing.assert_array_equal(out, padded_tile(x, offs, block))


@wb.jit
def host_add_one(in_desc, out_desc, B0: tl.constexpr, B1: tl.constexpr):
    m = tl.program_id(0) * B0
    n = tl.program_id(1) * B1
    out_desc.store([m, n], in_desc.load([m, n]) + 1)


def test_host_descriptor_over_a_strided_view(backend, rng):
    m, n = 37, 44
    x = rng.standard_normal((m, n)).astype(np.float32)
    big = np.full((m, 64), -5.0, np.float32)
    out = big[:, :n]  # a view with row stride 64
    a = TensorDescriptor.from_tensor(x, [16, 16])
    b = TensorDescriptor(out, [m, n], [64, 1], [16, 16])
    launch(backend, host_add_one, (3, 3), a, b, B0=16, B1=16)
    np.testing.assert_array_equal(out, x + 1)
    np.testing.assert_array_equal(big[:, n:], -5.0)


@wb.jit
def host_tile(in_desc, out_ptr, o0, o1, B0: tl.constexpr, B1: tl.constexpr):
    t = in_desc.load([o0, o1])
    tl.store(out_ptr + tl.arange(0, B0)[:, None] * B1 + tl.arange(0, B1)[None, :], t)


def test_host_descriptor_nan_padding(backend, rng):
    x = rng.standard_normal((10, 12)).astype(np.float32)
    out = np.zeros((8, 8), np.float32)
    d = TensorDescriptor.from_tensor(x, [8, 8], padding="nan")
    launch(backend, host_tile, (1,), d, out, 6, 7, B0=8, B1=8)
    np.testing.assert_array_equal(out, padded_tile(x, (6, 7), (8, 8), np.nan))


@wb.jit
def reduce_k(x_ptr, v_ptr, M, N, o0, o1, KIND: tl.constexpr, B0: tl.constexpr,
             B1: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [B0, B1])
    v = tl.load(v_ptr + tl.arange(0, B0)[:, None] * B1 + tl.arange(0, B1)[None, :])
    if KIND == "add":
        d.atomic_add([o0, o1], v)
    elif KIND == "min":
        d.atomic_min([o0, o1], v)
    elif KIND == "max":
        d.atomic_max([o0, o1], v)
    elif KIND == "and":
        d.atomic_and([o0, o1], v)
    elif KIND == "or":
        d.atomic_or([o0, o1], v)
    else:
        d.atomic_xor([o0, o1], v)


_NP = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
       "or": np.bitwise_or, "xor": np.bitwise_xor}


@pytest.mark.parametrize("kind, dtype", [("add", np.float32), ("add", np.int32),
                                         ("min", np.int32), ("max", np.uint32),
                                         ("min", np.uint32), ("max", np.int64),
                                         ("and", np.int32), ("or", np.int64),
                                         ("xor", np.uint32)])
def test_atomics(backend, rng, kind, dtype):
    m, n = 12, 24
    info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else None
    lo, hi = (0, 1000) if info is None or info.min == 0 else (-1000, 1000)
    x = rng.integers(lo, hi, (m, n)).astype(dtype)
    v = rng.integers(lo, hi, (8, 16)).astype(dtype)
    o0, o1 = 7, 12
    got = x.copy()
    launch(backend, reduce_k, (1,), got, v, m, n, o0, o1, KIND=kind, B0=8, B1=16)
    want = x.copy()
    r0, r1 = min(o0 + 8, m), min(o1 + 16, n)
    want[o0:r0, o1:r1] = _NP[kind](want[o0:r0, o1:r1], v[:r0 - o0, :r1 - o1])
    np.testing.assert_array_equal(got, want)


@wb.jit
def gather_scatter_k(in_desc, out_desc, idx_ptr, y, N_ROWS: tl.constexpr):
    rows = tl.load(idx_ptr + tl.arange(0, N_ROWS))
    g = in_desc.gather(rows, y)
    out_desc.scatter(g * 2, rows, y)


def test_gather_scatter(backend, rng):
    x = rng.standard_normal((20, 48)).astype(np.float32)
    out = np.zeros_like(x)
    rows = rng.permutation(24)[:8].astype(np.int32)  # some rows past the end (>= 20)
    y = 24
    a = TensorDescriptor.from_tensor(x, [1, 32])
    b = TensorDescriptor.from_tensor(out, [1, 32])
    launch(backend, gather_scatter_k, (1,), a, b, rows, y, N_ROWS=8)
    want = np.zeros_like(x)
    for r in rows:
        if r < 20:
            want[r, y:y + 32] = 2 * x[r, y:y + 32]
    np.testing.assert_array_equal(out, want)


@wb.jit
def carried_k(a_ptr, M, N, MB: tl.constexpr, NB: tl.constexpr):
    moff = tl.program_id(0) * MB
    d = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[MB, NB])
    for i in range(0, N, NB):
        d = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[MB, NB])
        d.store([moff, i], d.load([moff, i]) + 10)
    n = 0
    while n < N:
        if n % (3 * NB) == 0:
            d = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1],
                                          block_shape=[MB, NB])
        d.store([moff, n], d.load([moff, n]) * 2)
        n += NB


def test_descriptors_carried_by_for_while_and_if(backend, rng):
    m, n = 24, 80
    a = rng.standard_normal((m, n)).astype(np.float32)
    want = (a + 10) * 2
    launch(backend, carried_k, (3,), a, m, n, MB=8, NB=16)
    np.testing.assert_array_equal(a, want)


@wb.jit
def maybe_make(desc_or_ptr, M, N, B0: tl.constexpr, B1: tl.constexpr):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, [M, N], [N, 1], [B0, B1])


@wb.jit
def either_k(x, out_ptr, M, N, B0: tl.constexpr, B1: tl.constexpr):
    d = maybe_make(x, M, N, B0, B1)
    t = d.load([0, 0])
    tl.store(out_ptr + tl.arange(0, B0)[:, None] * B1 + tl.arange(0, B1)[None, :], t)


def test_isinstance_tells_a_descriptor_from_a_pointer(backend, rng):
    x = rng.standard_normal((8, 16)).astype(np.float32)
    for arg in (x, TensorDescriptor.from_tensor(x, [8, 16])):
        out = np.zeros((8, 16), np.float32)
        launch(backend, either_k, (1,), arg, out, 8, 16, B0=8, B1=16)
        np.testing.assert_array_equal(out, x)


@wb.jit(noinline=True)
def made_by_helper(ptr, M, N, B0: tl.constexpr, B1: tl.constexpr):
    return tl.make_tensor_descriptor(ptr, shape=[M, N], strides=[N, 1], block_shape=[B0, B1])


@wb.jit
def negate_tiles_k(x_ptr, out_ptr, M, N, B0: tl.constexpr, B1: tl.constexpr):
    src = made_by_helper(x_ptr, M, N, B0, B1)
    dst = made_by_helper(out_ptr, M, N, B0, B1)
    o0, o1 = tl.program_id(0) * B0, tl.program_id(1) * B1
    dst.store([o0, o1], -src.load([o0, o1]))


def test_descriptor_returned_by_a_noinline_helper(backend, rng):
    b0, b1 = 8, 16
    m, n = int(rng.integers(2, 6)) * b0 - 3, int(rng.integers(2, 6)) * b1 - 5
    x = rng.standard_normal((m, n)).astype(np.float32)
    out = np.full((m, n), np.nan, np.float32)
    launch(backend, negate_tiles_k, (wb.cdiv(m, b0), wb.cdiv(n, b1)), x, out, m, n,
           B0=b0, B1=b1)
    np.testing.assert_array_equal(out, -x)
