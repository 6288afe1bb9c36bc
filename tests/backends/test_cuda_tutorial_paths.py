"""What Triton's tutorials do on a GPU that they do not do on the CPU, compiled for sm_80 and
sm_90 here (ptxas assembles the PTX where installed) and checked against numpy on the
interpreter; the ``gpu``-marked tests launch the same kernels on a GPU.

- Grouped GEMM (tutorial 08) loads a table of int64 addresses and turns each into a pointer
  (``tt.int_to_ptr``); the CUDA code generator lowers it to LLVM ``inttoptr``.
- The fp8 matmul of tutorial 03 loads fp8 tiles with ``other=0.0``: an fp8 constant that the
  ttir canonicalizer rounds to fp8 (nearest even, saturating) before hoisting it; its dot
  takes the tensor cores: widened to fp16 for mma.sync on sm_80, fp8 wgmma on sm_90
  (:mod:`workbench.passes.widen_fp8_dot`).
"""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends import nvidia_tools
from workbench.passes.fold import round_float

PTXAS = nvidia_tools.find_tool("ptxas")
ml_dtypes = pytest.importorskip("ml_dtypes", reason="fp8 host arrays come from ml_dtypes")


@wb.jit
def grouped_scale(table_ptr, out_table_ptr, sizes_ptr, seen_ptr, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    n = tl.load(sizes_ptr + g)
    src = tl.load(table_ptr + g).to(tl.pointer_type(tl.float32))
    dst = tl.load(out_table_ptr + g).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    x = tl.load(src + offs, mask=offs < n, other=0.0)
    tl.store(dst + offs, x * (g + 1).to(tl.float32), mask=offs < n)
    tl.store(seen_ptr + g, src.to(tl.int64))  # tt.ptr_to_int: the address back


@wb.jit
def fp8_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :],
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_int_to_ptr_compiles(target):
    k = wb.compile(grouped_scale, "*i64", "*i64", "*i32", "*i64", target=target, BLOCK=128)
    llir, ptx = k.asm["llir"], k.asm["ptx"]
    assert "tt.int_to_ptr" in k.asm["ttgir"] and "tt.ptr_to_int" in k.asm["ttgir"]
    assert llir.count("inttoptr i64") >= 2  # (LLVM folds ptrtoint(inttoptr x) to x)
    assert "ld.global.b64" in ptx  # the address table
    if PTXAS:
        assert "cubin" in k.asm


@pytest.mark.parametrize("target,fmt", [("cuda:80", "fp8e5"), ("cuda:90", "fp8e4nv")])
def test_fp8_matmul_takes_the_tensor_cores(target, fmt):
    k = wb.compile(fp8_matmul, f"*{fmt}", f"*{fmt}", "*fp16", "i32", "i32", "i32",
                   target=target, BM=64, BN=64, BK=32)
    ptx = k.asm["ptx"]
    if target == "cuda:80":
        assert "tt.fp_to_fp" in k.asm["ttgir"]  # widened to fp16 (exact) before the dot
        assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    else:  # Hopper's wgmma reads the fp8 tiles themselves
        assert "tt.fp_to_fp" not in k.asm["ttgir"]
        assert "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3" in ptx
        assert "f16x2.e4m3x2" not in ptx
    if PTXAS:
        assert "cubin" in k.asm


@pytest.mark.parametrize("name,value,want", [
    # e5m2 near 0.3: 0.25 = 1.0 * 2^-2 and 0.3125 = 1.25 * 2^-2; 0.3 is nearer 0.3125
    ("f8E5M2", 0.3, 0.3125),
    # e4m3: 0.28125 = 1.125 * 2^-2, 0.3125 = 1.25 * 2^-2; 0.29 is nearer 0.28125
    ("f8E4M3FN", 0.29, 0.28125),
    # halfway between 1.0 and 1.125 (e4m3): ties to the even mantissa, 1.0
    ("f8E4M3FN", 1.0625, 1.0),
    # beyond the largest finite value: saturates (448 for e4m3fn, 57344 for e5m2)
    ("f8E4M3FN", 1000.0, 448.0),
    ("f8E5M2", -1e6, -57344.0),
    ("f8E5M2", 0.0, 0.0),
])
def test_fp8_constants_round_in_folding(name, value, want):
    assert round_float(value, name) == want


def test_fp8_matmul_on_the_interpreter(monkeypatch):
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    rng = np.random.default_rng()
    m, n, kd = 40, 24, 72  # edges masked in every dimension
    a = rng.standard_normal((m, kd)).astype(ml_dtypes.float8_e5m2)
    b = rng.standard_normal((kd, n)).astype(ml_dtypes.float8_e5m2)
    c = np.full((m, n), np.nan, np.float16)
    fp8_matmul[(2, 1)](a, b, c, m, n, kd, BM=32, BN=32, BK=32)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-3, atol=2e-2)


def test_address_table_on_the_interpreter(monkeypatch):
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    rng = np.random.default_rng()
    sizes = np.array([100, 128, 7], np.int32)
    srcs = [rng.standard_normal(int(s)).astype(np.float32) for s in sizes]
    dsts = [np.full(int(s), np.nan, np.float32) for s in sizes]
    table = np.array([x.ctypes.data for x in srcs], np.int64)
    seen = np.zeros(3, np.int64)
    grouped_scale[(3,)](table, np.array([x.ctypes.data for x in dsts], np.int64), sizes, seen,
                        BLOCK=128)
    np.testing.assert_array_equal(seen, table)
    for g in range(3):
        np.testing.assert_array_equal(dsts[g], srcs[g] * np.float32(g + 1))


# on the GPU ------------------------------------------------------------------------------------
def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(np.ascontiguousarray(a))


@pytest.mark.gpu
def test_address_table_gpu():
    from workbench.backends import cuda_driver
    rng = np.random.default_rng()
    sizes = np.array([100, 128, 7], np.int32)
    srcs = [rng.standard_normal(int(s)).astype(np.float32) for s in sizes]
    d_srcs = [_dev(x) for x in srcs]
    d_dsts = [_dev(np.full(int(s), np.nan, np.float32)) for s in sizes]
    table = np.array([d.ptr for d in d_srcs], np.int64)
    seen = _dev(np.zeros(3, np.int64))
    grouped_scale[(3,)](_dev(table), _dev(np.array([d.ptr for d in d_dsts], np.int64)),
                        _dev(sizes), seen, BLOCK=128)
    cuda_driver.synchronize()
    np.testing.assert_array_equal(seen.to_numpy(), table)
    for g in range(3):
        np.testing.assert_array_equal(d_dsts[g].to_numpy(), srcs[g] * np.float32(g + 1))


@pytest.mark.gpu
def test_fp8_matmul_gpu_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA build of torch")
    m, n, kd = 40, 24, 72
    a = torch.randn((m, kd), device="cuda").to(torch.float8_e5m2)
    b = torch.randn((n, kd), device="cuda").to(torch.float8_e5m2).T  # tutorial 03's b.T
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    fp8_matmul[(2, 1)](a, b.contiguous(), c, m, n, kd, BM=32, BN=32, BK=32)
    want = a.to(torch.float32) @ b.to(torch.float32)
    torch.testing.assert_close(c.float(), want, rtol=2e-3, atol=2e-2)


def _persistent(a, b, c, blocks, sms, **kw):
    from workbench.testing.examples import matmul_persistent_tma_kernel as k
    from workbench.tools.tensor_descriptor import TensorDescriptor as TD
    bm, bn, bk = blocks
    m, kd = a.shape
    return k[(sms,)](TD.from_tensor(a, [bm, bk]), TD.from_tensor(b, [bn, bk]),
                     TD.from_tensor(c, [bm, bn]), m, b.shape[0], kd, BLOCK_SIZE_M=bm,
                     BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=2, NUM_SMS=sms, **kw)


def test_persistent_tma_matmul_on_the_interpreter(monkeypatch):
    """Tutorial 09's persistent matmul (benchmarks/gpu.py's row): 3 x 2 tiles over 4
    programs, so some programs take two tiles."""
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    rng = np.random.default_rng()
    a = rng.standard_normal((96, 80)).astype(np.float16)
    b = rng.standard_normal((64, 80)).astype(np.float16)  # B^T
    c = np.full((96, 64), np.nan, np.float16)
    _persistent(a, b, c, (32, 32, 32), 4)
    want = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=2e-2)


def test_persistent_tma_matmul_compiles_to_tma_and_wgmma():
    from workbench.testing.examples import matmul_persistent_tma_kernel as k
    from workbench.tools.tensor_descriptor import TensorDescriptor as TD
    x = np.zeros((256, 256), np.float16)
    descs = [TD.from_tensor(x, [64, 64]) for _ in range(3)]
    ck = wb.compile(k, *descs, 256, 256, 256, target="cuda:90", BLOCK_SIZE_M=64, BLOCK_SIZE_N=64,
                    BLOCK_SIZE_K=64, GROUP_SIZE_M=8, NUM_SMS=132)
    assert "cp.async.bulk.tensor" in ck.asm["ptx"] and "wgmma.mma_async" in ck.asm["ptx"]


@pytest.mark.gpu
def test_persistent_tma_matmul_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA build of torch")
    a = torch.randn((512, 256), device="cuda", dtype=torch.float16)
    b = torch.randn((384, 256), device="cuda", dtype=torch.float16)
    c = torch.full((512, 384), float("nan"), device="cuda", dtype=torch.float16)
    _persistent(a, b, c, (128, 128, 64), 7, num_warps=8)  # 12 tiles over 7 programs
    torch.testing.assert_close(c.float(), a.float() @ b.float().T, rtol=1e-2, atol=2e-2)
