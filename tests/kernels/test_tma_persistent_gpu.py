"""Tutorial 09's persistent matmuls on an H200 (sm_90) against numpy, with fresh random fp16
inputs: the device-descriptor kernel (``tl.make_tensor_descriptor`` in the kernel,
``tl.range(..., flatten=True)``) and the host-descriptor one, through the pipelined TMA K
loop (``tritongpu-pipeline``, :mod:`workbench.passes.pipeline_tma`) for 2 to 4 stages and
tutorial 09's tile shapes, ragged sizes included (TMA boxes past the end read zeros)."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.testing.examples import matmul_persistent_tma_kernel
from workbench.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu

NUM_SMS = 132


def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(np.ascontiguousarray(a))


def _sync():
    from workbench.backends import cuda_driver
    cuda_driver.synchronize()


@wb.jit
def _tile_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    return first_pid_m + (tile_id % group_size_m), (tile_id % num_pid_in_group) // group_size_m


@wb.jit
def descriptor_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_SIZE_M: tl.constexpr,
                          BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                          GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr,
                          FLATTEN: tl.constexpr):
    """C = A @ B^T (A [M, K], B [N, K], C [M, N], fp16, row-major) as tutorial 09's
    ``matmul_kernel_descriptor_persistent``: descriptors made in the kernel, program p
    computes tiles p, p + NUM_SMS, ...; the epilogue recomputes its tile from its own
    counter, as the tutorial does."""
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1],
                                       block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_N])
    tile_id_c = start_pid - NUM_SMS
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN):
        pid_m, pid_n = _tile_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = pid_m * BLOCK_SIZE_M
        offs_bn = pid_n * BLOCK_SIZE_N
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            accumulator = tl.dot(a, b.T, accumulator)
        tile_id_c += NUM_SMS
        pid_m, pid_n = _tile_pid(tile_id_c, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        c_desc.store([pid_m * BLOCK_SIZE_M, pid_n * BLOCK_SIZE_N],
                     accumulator.to(tl.float16))


def _inputs(m, n, k):
    rng = np.random.default_rng()
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    return a, b, a.astype(np.float64) @ b.astype(np.float64).T


def _check(got, want, k):
    np.testing.assert_allclose(got.astype(np.float64), want, atol=2e-2 * np.sqrt(k),
                               rtol=1e-2)


@pytest.mark.parametrize("cfg", [(128, 256, 64, 8, 3), (128, 128, 64, 8, 3),
                                 (128, 128, 64, 4, 4), (128, 128, 128, 8, 2)])
@pytest.mark.parametrize("flatten", [True, False])
def test_descriptor_persistent_matches_numpy(cfg, flatten):
    bm, bn, bk, warps, stages = cfg
    m, n, k = 1000, 776, 520  # ragged: partial tiles in every dimension
    a, b, want = _inputs(m, n, k)
    c = _dev(np.full((m, n), np.nan, np.float16))
    grid = (min(NUM_SMS, -(-m // bm) * -(-n // bn)),)
    kern = descriptor_persistent[grid](_dev(a), _dev(b), c, m, n, k, BLOCK_SIZE_M=bm,
                                       BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8,
                                       NUM_SMS=NUM_SMS, FLATTEN=flatten, num_warps=warps,
                                       num_stages=stages)
    _sync()
    ttgir = kern.asm["ttgir"]
    assert "ttng.wait_barrier" in ttgir and "isAsync = true" in ttgir  # pipelined K loop
    _check(c.to_numpy(), want, k)


@pytest.mark.parametrize("bn,stages", [(256, 2), (256, 3), (128, 4)])
def test_host_descriptor_persistent_matches_numpy(bn, stages):
    """128x256x64 tiles at 4 stages need 262,176 bytes of shared memory (the store's staging
    buffer included), more than an H200's 232,448, in Triton as here: 4 stages use 128x128."""
    m, n, k = 1024, 1280, 1088
    bm, bk = 128, 64
    a, b, want = _inputs(m, n, k)
    c = _dev(np.full((m, n), np.nan, np.float16))
    da, db = _dev(a), _dev(b)
    args = (TensorDescriptor(da, [m, k], [k, 1], [bm, bk]),
            TensorDescriptor(db, [n, k], [k, 1], [bn, bk]),
            TensorDescriptor(c, [m, n], [n, 1], [bm, bn]), m, n, k)
    grid = (min(NUM_SMS, (m // bm) * (n // bn)),)
    matmul_persistent_tma_kernel[grid](*args, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                                       BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, NUM_SMS=NUM_SMS,
                                       num_warps=8, num_stages=stages)
    _sync()
    _check(c.to_numpy(), want, k)
