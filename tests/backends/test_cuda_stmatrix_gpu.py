"""Kernels whose shared-memory stores are ``stmatrix`` on sm_90, as in Triton 3.6: a matmul
tile stored column-major (the accumulator's conversion: ``stmatrix.x4.trans``), stored through a
tensor descriptor (the TMA store's ``local_alloc``: ``stmatrix.x4``), and a chain of two dots
whose first result is the second's B operand in shared memory (``local_alloc`` of the
accumulator: ``stmatrix.x4``). Bit-exact against numpy with fresh random small integers (exact
in fp16 and fp32), outputs poisoned first. The GPU runs are marked ``gpu``; the PTX checks that
the instruction is there run everywhere."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
from tests.codegen.nvptx.test_stmatrix import dot_chain_b_k as dot_chain_b
from tests.codegen.nvptx.test_stmatrix import dot_store_t_k as mm_store_t
from tests.codegen.nvptx.test_stmatrix import dot_tma_store_k as mm_tma_store

F16 = "*fp16:16"
SHAPES = [(64, 64), (128, 128), (64, 128)]


def _stmatrix(kernel, sig, warps, **cx) -> set:
    ptx = wb.compile(kernel, *sig, target="cuda:90", num_warps=warps, **cx).asm["ptx"]
    return set(re.findall(r"stmatrix\.sync\.aligned\.[\w.]+", ptx))


def test_the_kernels_store_with_stmatrix():
    # one configuration each here (compiles are slow on the CI machine); the GPU tests below
    # check the instruction in every configuration they run
    assert _stmatrix(mm_store_t, (F16,) * 3, 8, BM=128, BN=128, BK=32) == \
        {"stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"}
    assert _stmatrix(dot_chain_b, (F16,) * 3 + ("*fp32:16",), 4, BM=64, BK=32) == \
        {"stmatrix.sync.aligned.m8n8.x4.shared.b16"}


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _dev(torch, a):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def _ints(rng, shape):
    return rng.integers(-4, 5, shape).astype(np.float16)


@pytest.mark.gpu
@pytest.mark.parametrize("warps", [4, 8])
@pytest.mark.parametrize("bm,bn", SHAPES)
def test_column_major_store_on_gpu(torch, warps, bm, bn):
    assert _stmatrix(mm_store_t, (F16,) * 3, warps, BM=bm, BN=bn, BK=32) == \
        {"stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"}
    rng = np.random.default_rng()
    a, b = _ints(rng, (bm, 32)), _ints(rng, (32, bn))
    c = _dev(torch, np.full((bn, bm), np.nan, np.float16))
    mm_store_t[(1,)](_dev(torch, a), _dev(torch, b), c, BM=bm, BN=bn, BK=32, num_warps=warps)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(c.cpu().numpy(), want.T)


@pytest.mark.gpu
@pytest.mark.parametrize("warps", [4, 8])
@pytest.mark.parametrize("bm,bn", SHAPES)
def test_tma_store_on_gpu(torch, warps, bm, bn):
    assert _stmatrix(mm_tma_store, (F16,) * 3, warps, BM=bm, BN=bn, BK=32) == \
        {"stmatrix.sync.aligned.m8n8.x4.shared.b16"}
    rng = np.random.default_rng()
    a, b = _ints(rng, (bm, 32)), _ints(rng, (32, bn))
    c = _dev(torch, np.full((bm, bn), np.nan, np.float16))
    mm_tma_store[(1,)](_dev(torch, a), _dev(torch, b), c, BM=bm, BN=bn, BK=32,
                       num_warps=warps)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(c.cpu().numpy(), want)


@pytest.mark.gpu
def test_dot_chain_on_gpu(torch):
    rng = np.random.default_rng()
    a, b, x = _ints(rng, (64, 32)), _ints(rng, (32, 64)), _ints(rng, (64, 64))
    c = _dev(torch, np.full((64, 64), np.nan, np.float32))
    dot_chain_b[(1,)](_dev(torch, a), _dev(torch, b), _dev(torch, x), c, BM=64, BK=32,
                      num_warps=4)
    first = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    want = x.astype(np.float32) @ first.astype(np.float32)
    np.testing.assert_array_equal(c.cpu().numpy(), want)
