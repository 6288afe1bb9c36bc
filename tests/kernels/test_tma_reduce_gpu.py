"""Descriptor atomics through the TMA unit (``cp.reduce.async.bulk.tensor``) on an sm_90 GPU,
against numpy: every kind on float16, bfloat16, float32 (add), int32 and uint32, host and
device descriptors, the block shapes of Triton's ``test_tensor_descriptor_reduce`` (one box,
two boxes of 256 rows, four unswizzled boxes of one row), tensors whose last tiles hang over
the edge (the TMA unit skips those elements), and several programs reducing into the same
tile at once (the reduction is atomic per element). Skipped without a GPU."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from tests.passes.tma_reduce_kernels import reduce_k
from workbench.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu
ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = ml_dtypes.bfloat16


def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(np.ascontiguousarray(a))


def _sync():
    from workbench.backends import cuda_driver
    cuda_driver.synchronize()


def _random(rng, shape, dtype):
    """Floats are small integers (sums of a few are exact in every float dtype); integers
    span the whole range (signed and unsigned comparisons differ)."""
    if dtype in (np.float16, np.float32, BF16):
        return rng.integers(-64, 64, shape).astype(np.float32).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _want(kind, out, a, repeats):
    if kind == "add":
        return (out.astype(np.float64) + repeats * a.astype(np.float64)).astype(out.dtype) \
            if out.dtype.kind == "f" or out.dtype == BF16 else out + a * out.dtype.type(repeats)
    if kind == "xor":
        return out ^ a if repeats % 2 else out.copy()
    f = {"min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or}[kind]
    if out.dtype == BF16:
        return f(out.astype(np.float32), a.astype(np.float32)).astype(BF16)
    return f(out, a)


KINDS = [("add", np.float16), ("add", BF16), ("add", np.float32), ("add", np.int32),
         ("add", np.uint32), ("min", np.float16), ("min", BF16), ("max", np.float16),
         ("max", BF16), ("min", np.int32), ("max", np.int32), ("min", np.uint32),
         ("max", np.uint32), ("and", np.int32), ("or", np.uint32), ("xor", np.int32),
         ("xor", np.uint32)]


@pytest.mark.parametrize("block", [(8, 32), (512, 32), (1, 1024)])
@pytest.mark.parametrize("host", [True, False], ids=["host", "device"])
@pytest.mark.parametrize("kind, dtype", KINDS, ids=[f"{k}-{np.dtype(d).name}" for k, d in KINDS])
def test_tma_reduce_matches_numpy(kind, dtype, host, block):
    rng = np.random.default_rng()
    mb, nb = block
    gm, gn, repeats = 2, 2, 3
    m = max(2 * mb - int(rng.integers(1, 4)), 1) if mb > 1 else 2  # ragged last row tiles
    n = 2 * nb - 8  # a ragged last column tile; rows stay 16-byte aligned
    a = _random(rng, (gm * mb, gn * nb), dtype)
    out = _random(rng, (m, n), dtype)
    dout, da = _dev(out), _dev(a)
    desc = TensorDescriptor(dout, [m, n], [n, 1], [mb, nb]) if host else None
    k = reduce_k[(gm, gn, repeats)](desc, dout, da, m, n, gn * nb, MB=mb, NB=nb,
                                        KIND=kind)
    _sync()
    assert f"cp.reduce.async.bulk.tensor.2d.global.shared::cta.{kind}" in k.asm["ptx"]
    got = dout.to_numpy()
    want = _want(kind, out, a[:m, :n], repeats)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_integer_reduce_with_tma_off_gives_the_same_tiles(monkeypatch):
    rng = np.random.default_rng()
    m, n, mb, nb = 30, 56, 16, 32
    a = _random(rng, (2 * mb, 2 * nb), np.int32)
    out = _random(rng, (m, n), np.int32)
    results = []
    for flag in ("1", "0"):
        monkeypatch.setenv("WORKBENCH_CUDA_TMA", flag)
        dout = _dev(out)
        desc = TensorDescriptor(dout, [m, n], [n, 1], [mb, nb])
        k = reduce_k[(2, 2, 2)](desc, dout, _dev(a), m, n, 2 * nb, MB=mb, NB=nb,
                                    KIND="min")
        _sync()
        assert ("cp.reduce.async.bulk.tensor" in k.asm["ptx"]) == (flag == "1")
        results.append(dout.to_numpy())
    np.testing.assert_array_equal(results[0], np.minimum(out, a[:m, :n]))
    np.testing.assert_array_equal(results[1], results[0])


@wb.jit
def triple_tiles(x_desc, x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    if x_desc is None:
        d = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1],
                                      block_shape=[BM, BN])
    else:
        d = x_desc
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    d.atomic_add([m, n], d.load([m, n]) * 2)


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
@pytest.mark.parametrize("host", [True, False], ids=["host", "device"])
def test_tile_loaded_and_reduced_through_one_descriptor(dtype, host):
    rng = np.random.default_rng()
    m, n, bm, bn = 40, 72, 16, 32
    x = _random(rng, (m, n), dtype)
    dx = _dev(x)
    desc = TensorDescriptor(dx, [m, n], [n, 1], [bm, bn]) if host else None
    k = triple_tiles[(3, 3)](desc, dx, m, n, BM=bm, BN=bn)
    _sync()
    assert "cp.reduce.async.bulk.tensor.2d" in k.asm["ptx"]
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in k.asm["ptx"]
    np.testing.assert_array_equal(dx.to_numpy(), x * dtype(3))
