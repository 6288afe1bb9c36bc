"""Hopper wgmma (MMA v3) for tl.dot on cuda:90: accelerate-matmul's choice (v3 on cuda:90,
v2 on cuda:80, v2 when forced by WORKBENCH_CUDA_MMA=v2 or when wgmma cannot take the dot, with
a note), the PTX (sm_90a, wgmma.fence / mma_async / commit_group / wait_group, matrix
descriptors), the asynchronous pipelined K loop, and on the GPU matmuls of several shapes,
dtypes, warps and stages and attention against torch."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from tests.backends.test_cuda_pipeline import ATTN_SIG, MM_SIG, attn_k, mm_k
from workbench.backends import nvidia_tools
from workbench.codegen.nvptx.wgmma import matrix_descriptor
from workbench.config import Options
from workbench.testing.examples import attention_causal_fwd_kernel, attention_fwd_kernel

PTXAS = nvidia_tools.find_tool("ptxas")
SMEM_LIMIT = 227 * 1024  # H100/H200 per-block opt-in maximum


@wb.jit
def mm_any(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr,
           BN: tl.constexpr, BK: tl.constexpr):
    """C (fp32) = A @ B for any M, N, K and strides (masked edges), fp16 or bf16 inputs."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _sig(dtype="fp16", a_t=False, b_t=False):
    """mm_any's signature: unit inner strides (A row-major, or column-major when ``a_t``)."""
    sa = ["i32", 1] if not a_t else [1, "i32"]
    sb = ["i32", 1] if not b_t else [1, "i32"]
    return [f"*{dtype}:16", f"*{dtype}:16", "*fp32:16", "i32", "i32", "i32"] + sa + sb + \
        ["i32", 1]


def _ttgir(c):
    return re.sub(r" loc\(.*\)$", "", c.asm["ttgir"], flags=re.MULTILINE)


# accelerate-matmul's choice ------------------------------------------------------------------
@pytest.mark.parametrize("arch,major", [(80, 2), (90, 3)])
def test_accelerate_matmul_picks_wgmma_on_cuda90_only(arch, major):
    c = wb.compile(mm_k, *MM_SIG, target=f"cuda:{arch}", BM=128, BN=128, BK=64, num_warps=8,
                   num_stages=3)
    ttgir = _ttgir(c)
    if major == 3:
        assert "#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = " \
               "[8, 1], instrShape = [16, 128, 16]}>" in ttgir
        assert "#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, " \
               "elementBitWidth = 16}>" in ttgir
        assert "= ttng.warp_group_dot %" in ttgir and "tt.dot" not in ttgir
        assert "ttg.local_load" not in ttgir and "#ttg.dot_op" not in ttgir
        assert not any("mma.sync" in n for n in c.extra["notes"])
    else:
        assert "versionMajor = 2" in ttgir and "tt.dot" in ttgir
        assert "warp_group_dot" not in ttgir and "nvmma_shared" not in ttgir
        assert not any("mma" in n for n in c.extra["notes"])


def test_forced_v2_on_cuda90_is_noted_and_keyed(monkeypatch):
    monkeypatch.setenv("WORKBENCH_CUDA_MMA", "v2")
    opts = Options.from_env()
    assert opts.cuda_mma == "v2" and opts != Options.from_env(cuda_mma="auto")
    c = wb.compile(mm_k, *MM_SIG, target="cuda:90", BM=128, BN=128, BK=64, num_warps=8,
                   cuda_mma="v2")
    assert "versionMajor = 2" in c.asm["ttgir"] and "wgmma.mma_async" not in c.asm["ptx"]
    assert "mma.sync.aligned.m16n8k16" in c.asm["ptx"]
    assert any("mma.sync (MMA v2)" in n and "WORKBENCH_CUDA_MMA=v2" in n
               for n in c.extra["notes"]), c.extra["notes"]


def test_jit_options_follow_the_environment(monkeypatch):
    monkeypatch.setenv("WORKBENCH_CUDA_MMA", "v2")
    assert mm_k.base_options().cuda_mma == "v2"
    monkeypatch.delenv("WORKBENCH_CUDA_MMA")
    assert mm_k.base_options().cuda_mma == "auto"
    with pytest.raises(ValueError):
        Options(cuda_mma="v4")


@pytest.mark.parametrize("kw,why", [
    (dict(BM=32, BN=64, BK=32, num_warps=4), "is not a multiple of M = 64"),
    (dict(BM=128, BN=128, BK=32, num_warps=2), "warp groups"),
])
def test_wgmma_unfit_keeps_mma_sync_with_a_note(kw, why):
    c = wb.compile(mm_k, *MM_SIG, target="cuda:90", **kw)
    assert "versionMajor = 2" in c.asm["ttgir"]
    assert any("mma.sync (MMA v2), not wgmma" in n and why in n for n in c.extra["notes"]), \
        c.extra["notes"]


def test_fp32_dot_takes_tf32_wgmma():
    """fp32 inputs (tf32 by default) take wgmma as in Triton 3.6, both operands K-major."""
    c = wb.compile(mm_any, *(["*fp32:16", "*fp32:16"] + _sig()[2:]), target="cuda:90",
                   BM=64, BN=64, BK=32, num_warps=4)
    assert "versionMajor = 3" in c.asm["ttgir"] and "instrShape = [16, 64, 8]" in c.asm["ttgir"]
    assert "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32" in c.asm["ptx"]
    assert not c.extra["notes"], c.extra["notes"]


def test_fp32_dot_with_a_warp_short_of_a_group_keeps_mma_sync_with_a_note():
    c = wb.compile(mm_any, *(["*fp32:16", "*fp32:16"] + _sig()[2:]), target="cuda:90",
                   BM=64, BN=64, BK=32, num_warps=2)
    assert "versionMajor = 2" in c.asm["ttgir"]
    assert any("whole warp groups" in n for n in c.extra["notes"]), c.extra["notes"]


# PTX ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("stages", [1, 3])
def test_wgmma_ptx(stages):
    c = wb.compile(mm_k, *MM_SIG, target="cuda:90", BM=128, BN=128, BK=64, num_warps=8,
                   num_stages=stages)
    ptx = c.asm["ptx"]
    assert ".target sm_90a" in ptx
    # align 16, as Triton declares it: with 1024 LLVM folds the descriptor adds into ors and
    # ptxas no longer chains the per-instruction descriptors with one 64-bit uniform add
    assert ".extern .shared .align 16 .b8 global_smem[]" in ptx
    # 64 rows per warp group, N = 128, K = 64: four k16 steps per K iteration, A K-major
    # (imm-trans-a 0) and B N-major (imm-trans-b 1)
    mmas = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.f16\.f16 "
                      r"\{(%r\d+,){63}%r\d+\}, %rd\d+, %rd\d+, 1, 1, 1, 0, 1;", ptx)
    assert len(mmas) == 4
    body = ptx[ptx.index("wgmma.fence.sync.aligned"):]
    assert body.index("wgmma.fence.sync.aligned") < body.index("wgmma.mma_async") < \
        body.index("wgmma.commit_group.sync.aligned") < body.index("wgmma.wait_group.sync")
    if stages == 1:
        assert "wgmma.wait_group.sync.aligned 0;" in ptx
        assert "wgmma.wait_group.sync.aligned 1;" not in ptx
        # generic stores into the operand buffers, then the proxy fence, then the barrier
        head = ptx[:ptx.index("wgmma.fence.sync.aligned")]
        fence = head.rindex("fence.proxy.async.shared::cta")
        assert fence > head.rindex("st.shared") and "bar.sync" in head[fence:]
    else:
        assert "wgmma.wait_group.sync.aligned 1;" in ptx
        assert "wgmma.wait_group.sync.aligned 0;" in ptx
    # the descriptors' constant fields: A (K-major, 128 B): LBO 16, SBO 1024; B (N-major,
    # 64 K rows of 128 B per 64-column block): LBO 8192, SBO 1024; mode 1 (128-byte swizzle)
    # (LLVM folds the buffers' constant offsets into the address field: compare above it)
    llir = c.asm["llir"]
    consts = {int(x) for x in re.findall(r"(?:or|add)[a-z ]* i64 [^,]+, (-?\d+)", llir)}
    consts = {x & (2 ** 64 - 1) & ~0x3FFF for x in consts}
    assert matrix_descriptor(0, 16, 1024, 128) in consts, llir
    assert matrix_descriptor(0, 8192, 1024, 128) in consts
    if PTXAS:
        assert c.metadata.n_spills == 0, c.extra["ptxas_log"]
        assert "serialized" not in c.extra["ptxas_log"], c.extra["ptxas_log"]


def test_async_pipelined_loop_structure():
    c = wb.compile(mm_k, *MM_SIG, target="cuda:90", BM=128, BN=128, BK=64, num_warps=8,
                   num_stages=3)
    ttgir = _ttgir(c)
    loop = ttgir[ttgir.index("scf.for"):ttgir.index("scf.yield")]
    # wait for the copies, barrier, issue the dot, wait for the previous group, barrier (the
    # slot read by that group is free for every warp group), then prefetch into it
    order = [re.search(r"ttg.async_wait %\w+, %\w+ \{num = 2 : i32\}", loop).start(),  # A, B
             loop.index("gpu.barrier"),
             loop.index("isAsync = true"),
             loop.index("ttng.warp_group_dot_wait"),
             loop.index("gpu.barrier", loop.index("ttng.warp_group_dot_wait")),
             loop.index('ttg.async_copy_global_to_local')]
    assert order == sorted(order), order
    assert loop.count("gpu.barrier") == 2
    # the wait returns the accumulator and lists the two slots the group reads, as Triton's
    assert re.search(r"%acc_\w+:3 = ttng.warp_group_dot_wait %acc_\d+, %\w+, %\w+ "
                     r"\{pendings = 1 : i32\}", loop)
    after = ttgir[ttgir.index("scf.yield"):]
    assert after.index("{pendings = 0 : i32}") < after.index("ttg.convert_layout")


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("a_t,b_t", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("bn,bk,nw", [(64, 64, 4), (128, 32, 8), (256, 32, 8)])
def test_wgmma_operand_majorness_ptx(dtype, a_t, b_t, bn, bk, nw):
    c = wb.compile(mm_any, *_sig(dtype, a_t, b_t), target="cuda:90", BM=128, BN=bn, BK=bk,
                   num_warps=nw, num_stages=3)
    ttgir, ptx = _ttgir(c), c.asm["ptx"]
    assert "versionMajor = 3" in ttgir, c.extra["notes"]
    e = {"fp16": "f16", "bf16": "bf16"}[dtype]
    trans = re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.{e}\.{e} .*, 1, "
                       rf"1, 1, (\d), (\d);", ptx)
    assert trans and set(trans) == {(str(int(a_t)), str(int(not b_t)))}
    # (no spill check: this masked kernel spills with mma.sync as well; ptxas assembled it)


def test_attention_uses_wgmma_for_both_dots():
    c = wb.compile(attn_k, *ATTN_SIG, target="cuda:90", D=64, BM=64, BN=64, num_warps=4)
    ttgir = _ttgir(c)
    assert "versionMajor = 3" in ttgir and ttgir.count("= ttng.warp_group_dot %") == 2
    # P stays in registers, as in Triton 3.6: a register conversion of the accumulator into
    # the v3 dot operand layout, no shared-memory staging of it
    assert re.search(r"ttg\.convert_layout %\w+ .*: tensor<64x64xf16, #mma> -> "
                     r"tensor<64x64xf16, #ttg\.dot_op<\{opIdx = 0, parent = #mma, kWidth = 2",
                     ttgir)
    assert not re.search(r"ttg\.local_alloc %\w+ .*: \(tensor<64x64xf16, #mma>\)", ttgir)
    ptx = c.asm["ptx"]
    # Q @ K^T: both from shared memory, K^T K-major (imm-trans-b 0), its zero accumulator not
    # read by the first instruction (scale-d 0, as Triton's); P @ V: A in four registers, V
    # N-major (imm-trans-b 1)
    assert len(re.findall(r"m64n64k16\.f32\.f16\.f16 \{[^}]*\}, %rd\d+, %rd\d+, 0, 1, 1, 0, 0;",
                          ptx)) == 1
    assert len(re.findall(r"m64n64k16\.f32\.f16\.f16 \{[^}]*\}, %rd\d+, %rd\d+, 1, 1, 1, 0, 0;",
                          ptx)) == 3
    assert len(re.findall(r"m64n64k16\.f32\.f16\.f16 \{[^}]*\}, \{%r\d+,%r\d+,%r\d+,%r\d+\}, "
                          r"%rd\d+, 1, 1, 1, 1;", ptx)) == 4
    if PTXAS:
        assert c.metadata.n_spills == 0, c.extra["ptxas_log"]


# on the GPU ------------------------------------------------------------------------------
def _torch_dtype(torch, dtype):
    return {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]


def _run_mm(torch, m, n, k, dtype, bm, bn, bk, nw, stages, a_t=False, b_t=False):
    td = _torch_dtype(torch, dtype)
    a = torch.randn(k, m, device="cuda", dtype=td).t() if a_t else \
        torch.randn(m, k, device="cuda", dtype=td)
    b = torch.randn(n, k, device="cuda", dtype=td).t() if b_t else \
        torch.randn(k, n, device="cuda", dtype=td)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    grid = (-(-m // bm), -(-n // bn))
    kern = mm_any[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BM=bm, BN=bn, BK=bk, num_warps=nw,
                        num_stages=stages)
    torch.cuda.synchronize()
    want = (a.double() @ b.double()).cpu().numpy()
    got = c.double().cpu().numpy()
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, atol=2e-2 * np.sqrt(k), rtol=1e-2)
    return kern


_GPU_CASES = [
    # m, n, k, bm, bn, bk, warps, stages
    (256, 256, 512, 128, 128, 64, 8, 3),
    (200, 136, 1000, 128, 128, 64, 8, 3),    # masked edges in M, N and K
    (256, 256, 256, 128, 128, 64, 4, 1),     # not pipelined
    (256, 512, 384, 128, 256, 32, 8, 2),     # BLOCK_N 256
    (130, 300, 200, 128, 256, 32, 8, 4),
    (128, 192, 96, 64, 64, 32, 4, 2),        # BLOCK_N 64, K = 32 (64-byte swizzle)
    (320, 128, 80, 128, 64, 16, 8, 4),       # K = 16 (32-byte swizzle), 2 warp groups along M
    (192, 256, 128, 64, 128, 64, 8, 3),      # M = 64: 2 warp groups along N (warps 4 x 2)
    (64, 64, 4096, 64, 64, 64, 4, 3),        # long K
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("m,n,k,bm,bn,bk,nw,stages", _GPU_CASES)
def test_wgmma_matmul_gpu(dtype, m, n, k, bm, bn, bk, nw, stages):
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("wgmma needs a Hopper GPU")
    kern = _run_mm(torch, m, n, k, dtype, bm, bn, bk, nw, stages)
    assert "versionMajor = 3" in kern.asm["ttgir"]


@pytest.mark.gpu
@pytest.mark.parametrize("a_t,b_t", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("stages", [1, 3])
def test_wgmma_transposed_operands_gpu(a_t, b_t, stages):
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("wgmma needs a Hopper GPU")
    _run_mm(torch, 256, 256, 320, "fp16", 128, 128, 64, 8, stages, a_t, b_t)


@pytest.mark.gpu
@pytest.mark.parametrize("mma", ["auto", "v2"])
def test_wgmma_against_mma_sync_gpu(monkeypatch, mma):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("WORKBENCH_CUDA_MMA", mma)
    kern = _run_mm(torch, 512, 512, 512, "fp16", 128, 128, 64, 8, 3)
    major = 2 if mma == "v2" or torch.cuda.get_device_capability() < (9, 0) else 3
    assert f"versionMajor = {major}" in kern.asm["ttgir"]


@pytest.mark.gpu
@pytest.mark.parametrize("n_ctx,bm,nw", [(128, 64, 4), (512, 64, 4), (512, 128, 8)])
def test_wgmma_attention_gpu(n_ctx, bm, nw):
    torch = pytest.importorskip("torch")
    z, d = 4, 64
    q, k, v = (torch.randn(z, n_ctx, d, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    scale = d ** -0.5
    attention_fwd_kernel[(n_ctx // bm, z)](q, k, v, o, scale, n_ctx, D=d, BM=bm, BN=64,
                                           num_warps=nw, num_stages=3)
    torch.cuda.synchronize()
    want = torch.softmax((q.double() @ k.double().transpose(1, 2)) * scale, -1) @ v.double()
    got = o.double()
    assert not torch.isnan(got).any()
    np.testing.assert_allclose(got.cpu().numpy(), want.cpu().numpy(), atol=2e-2, rtol=2e-2)


def _attention_ref(q, k, v, scale, causal):
    s = (q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1)) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)


def test_causal_attention_on_the_cpu():
    """The causal example kernel (unmasked blocks below the diagonal, then the masked
    diagonal block) against numpy, on the CPU backend."""
    rng = np.random.default_rng()
    z, n_ctx, d, bm, bn = 2, 96, 16, 32, 16
    q, k, v = (rng.standard_normal((z, n_ctx, d)).astype(np.float16) for _ in range(3))
    o = np.full_like(q, np.nan)
    attention_causal_fwd_kernel[(n_ctx // bm, z)](q, k, v, o, d ** -0.5, n_ctx, D=d, BM=bm,
                                                  BN=bn)
    np.testing.assert_allclose(o.astype(np.float64), _attention_ref(q, k, v, d ** -0.5, True),
                               atol=2e-3, rtol=2e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d,bm,bn,nw", [(64, 64, 64, 4), (64, 128, 64, 8), (128, 64, 64, 4),
                                        (128, 128, 64, 8)])
def test_attention_head_dims_and_causal_gpu(d, bm, bn, nw, causal):
    torch = pytest.importorskip("torch")
    z, n_ctx = 2, 512
    q, k, v = (torch.randn(z, n_ctx, d, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    kern = attention_causal_fwd_kernel if causal else attention_fwd_kernel
    kern[(n_ctx // bm, z)](q, k, v, o, d ** -0.5, n_ctx, D=d, BM=bm, BN=bn, num_warps=nw,
                           num_stages=3)
    torch.cuda.synchronize()
    want = _attention_ref(*(t.cpu().numpy() for t in (q, k, v)), d ** -0.5, causal)
    got = o.double().cpu().numpy()
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, atol=2e-2, rtol=2e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("stages", [2, 4])
@pytest.mark.parametrize("d,bm,bn,nw", [(64, 64, 32, 4), (128, 128, 64, 8)])
def test_attention_pipeline_depths_gpu(d, bm, bn, nw, stages, causal):
    """Both wgmma of the loop asynchronous (P @ V in flight into the next iteration) with
    fewer and more stages than the default; 1, 2 and many iterations per program."""
    torch = pytest.importorskip("torch")
    z, n_ctx = 2, 512
    q, k, v = (torch.randn(z, n_ctx, d, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    kern = attention_causal_fwd_kernel if causal else attention_fwd_kernel
    kern[(n_ctx // bm, z)](q, k, v, o, d ** -0.5, n_ctx, D=d, BM=bm, BN=bn, num_warps=nw,
                           num_stages=stages)
    torch.cuda.synchronize()
    want = _attention_ref(*(t.cpu().numpy() for t in (q, k, v)), d ** -0.5, causal)
    got = o.double().cpu().numpy()
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, atol=2e-2, rtol=2e-2)


def test_gpu_cases_fit_shared_memory():
    """The GPU cases above compile for cuda:90 with wgmma and fit the 227 KB a block may use."""
    for _m, _n, _k, bm, bn, bk, nw, stages in _GPU_CASES:
        c = wb.compile(mm_any, *_sig(), target="cuda:90", BM=bm, BN=bn, BK=bk, num_warps=nw,
                       num_stages=stages)
        assert "versionMajor = 3" in c.asm["ttgir"], (bm, bn, bk, nw, c.extra["notes"])
        assert c.metadata.shared <= SMEM_LIMIT, (bm, bn, bk, stages, c.metadata.shared)
