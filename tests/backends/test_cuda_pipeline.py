"""Attention (chained dots with the accumulator kept in #mma registers) and the software-
pipelined K loop: ttgir structure, PTX that ptxas assembles without spills, and on the GPU
the results against numpy (fresh random inputs, poisoned outputs, every element checked)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from tests.passes.pipeline_kernels import SIG_1024, tutorial_mm
from workbench.backends import nvidia_tools
from workbench.testing.examples import attention_fwd_kernel

attn_k = attention_fwd_kernel  # the benchmarked flash-attention forward kernel

PTXAS = nvidia_tools.find_tool("ptxas")


@wb.jit
def mm_k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


ATTN_SIG = ["*fp16:16"] * 4 + ["fp32", "i32:16"]
MM_SIG = ["*fp16:16", "*fp16:16", "*fp32:16", "i32:16", "i32:16", "i32:16"]


def _compile(kernel, sig, arch, max_spill=0, **kw):
    c = wb.compile(kernel, *sig, target=f"cuda:{arch}", **kw)
    if PTXAS:
        assert c.metadata.n_spills <= max_spill, c.extra.get("ptxas_log")
    return c


@pytest.mark.parametrize("arch", [80, 90])
def test_attention_keeps_accumulator_in_mma_registers(arch):
    pytest.importorskip("filecheck")
    from tests.filecheck_util import check
    # mma.sync on both (cuda:90 would pick wgmma: tests/backends/test_cuda_wgmma.py)
    c = _compile(attn_k, ATTN_SIG, arch, D=64, BM=64, BN=64, num_warps=4, cuda_mma="v2")
    ttgir = re.sub(r" loc\(.*\)$", "", c.asm["ttgir"], flags=re.M)
    check(ttgir, """
CHECK: #mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1]
CHECK: ttg.local_alloc %q
CHECK-NOT: ttg.local_load
CHECK: scf.for {{.*}} -> (tensor<64xf32, #ttg.slice<{dim = 1, parent = #mma}>>, tensor<64x64xf32, #mma>, tensor<64xf32, #ttg.slice<{dim = 1, parent = #mma}>>, i32, i32, !ttg.async.token, !ttg.async.token, !ttg.async.token, !ttg.async.token)
CHECK: ttg.async_wait %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} {num = 2 : i32}
CHECK-NEXT: gpu.barrier
CHECK-NEXT: ttg.local_load %{{[0-9]+}} : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0
CHECK-NEXT: ttg.memdesc_index
CHECK-NEXT: ttg.local_load %{{[0-9]+}} token
CHECK: %qk{{(_[0-9]+)?}} = tt.dot
CHECK-NOT: ttg.convert_layout {{.*}}#mma> -> tensor<64x64xf32, #blocked
CHECK: arith.mulf %acc_{{[0-9]+}}, %acc_{{[0-9]+}} : tensor<64x64xf32, #mma>
CHECK: arith.truncf %p_{{[0-9]+}} : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
CHECK-NEXT: ttg.convert_layout {{.*}} : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
CHECK: tt.dot
CHECK: tt.splat %{{[0-9]+}} : i1
CHECK-NEXT: gpu.barrier
CHECK-NEXT: ttg.async_copy_global_to_local
CHECK-NEXT: ttg.async_commit_group
CHECK: ttg.async_copy_global_to_local
CHECK-NEXT: ttg.async_commit_group
CHECK-NEXT: scf.yield
""")  # noqa: E501
    body = ttgir[ttgir.index("scf.for"):ttgir.index('ttg.async_wait {num = 0')]
    # K and V in two slots each (num_stages - 1, as Triton for mma.sync): one barrier after
    # the copies land, one before they refill the slots this iteration read
    assert body.count("ttg.convert_layout") == 1 and body.count("gpu.barrier") == 2
    assert c.asm["ptx"].count("bar.sync") <= 6


@wb.jit
def mm_range_k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, S: tl.constexpr):
    """mm_k with the K loop's own stage count: ``tl.range(..., num_stages=S)``."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=S):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("loop_stages,option", [(5, 2), (4, 3), (1, 3)])
def test_loop_num_stages_overrides_the_option(arch, loop_stages, option):
    """The loop's ``tt.num_stages`` decides its pipeline, not the launch option (Triton's
    getNumStagesOrDefault): waits for 2 * (S - 2) groups, S (sm_90) or S - 1 (sm_80) slots,
    and no cp.async at all for S = 1."""
    c = _compile(mm_range_k, MM_SIG, arch, BM=64, BN=64, BK=32, S=loop_stages, num_warps=4,
                 num_stages=option)
    ptx, ttgir = c.asm["ptx"], c.asm["ttgir"]
    assert f"tt.num_stages = {loop_stages}" in ttgir
    if loop_stages == 1:
        assert "cp.async" not in ptx and "ttg.async" not in ttgir
        return
    assert f"cp.async.wait_group \t{2 * (loop_stages - 2)};" in ptx
    slots = loop_stages if arch >= 90 else loop_stages - 1
    assert f"!ttg.memdesc<{slots}x64x32xf16" in ttgir


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_matmul_pipeline_ptx(arch, stages):
    c = _compile(mm_k, MM_SIG, arch, BM=128, BN=128, BK=32, num_warps=8, num_stages=stages,
                 max_spill=16)  # sm_80 with 2 stages: ptxas keeps 128 registers, 8 B spilled
    ptx, ttgir = c.asm["ptx"], c.asm["ttgir"]
    if stages == 1:
        assert "cp.async" not in ptx and "ttg.async" not in ttgir
        return
    # 128x32 and 32x128 fp16 tiles, 256 threads: 2 + 2 16-byte copies per stage
    assert len(re.findall(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16", ptx)) \
        == 4 * stages
    # A and B in commit groups of their own; wgmma (sm_90) keeps num_stages slots, mma.sync
    # (sm_80) num_stages - 1 (Triton 3.6's LowerLoops)
    assert "cp.async.commit_group" in ptx and f"cp.async.wait_group \t{2 * (stages - 2)};" in ptx
    slots = stages if arch >= 90 else stages - 1
    assert f"!ttg.memdesc<{slots}x128x32xf16" in ttgir
    assert c.metadata.shared >= slots * 2 * 128 * 32 * 2
    acc = c.extra["shared_accesses"]
    # the pipeline's buffers are conflict-free; the epilogue's conversion buffer is Triton's
    # (its 16-byte loads of the 128x128 fp32 tile meet 2-way conflicts there too)
    assert all(a["conflict_degree"] == 1.0 for a in acc
               if not a["op"].startswith("ttg.convert_layout")), acc
    assert all(a["conflict_degree"] <= 2.0 for a in acc), acc


# the tutorial matmul: loop-carried pointers advanced by a loop-invariant offset --------------
TUTORIAL_TILE = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32)


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("num_warps", [4, 8])
@pytest.mark.parametrize("mask,wrap", [(True, True), (False, True), (True, False)])
def test_tutorial_matmul_is_pipelined_ptx(arch, num_warps, mask, wrap):
    c = _compile(tutorial_mm, SIG_1024, arch, num_warps=num_warps, num_stages=3, MASK=mask,
                 WRAP=wrap, **TUTORIAL_TILE)
    ptx = c.asm["ptx"]
    # 128x32 and 32x128 fp16 tiles: 2 * 8 KiB per stage in 16-byte copies, 3 stages issued
    copies = len(re.findall(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16", ptx))
    assert copies == 3 * 2 * 8192 // (16 * 32 * num_warps)
    assert "cp.async.ca" not in ptx and not re.search(r"ld\.global\.(b16|u16)", ptx)
    assert "cp.async.wait_group \t2;" in ptx  # A and B: a commit group each
    assert c.metadata.shared >= (3 if arch >= 90 else 2) * 2 * 128 * 32 * 2
    assert not c.extra["notes"] or all("pipelined" not in n for n in c.extra["notes"])
    if PTXAS:
        print(f"tutorial matmul 128x128x32 sm_{arch} {num_warps} warps mask={mask} "
              f"wrap={wrap}: {c.metadata.n_regs} registers, {c.metadata.n_spills} B spilled")
        assert c.metadata.n_spills == 0
        if num_warps == 8:
            assert c.metadata.n_regs <= 168


@pytest.mark.parametrize("arch", [80, 90])
def test_tutorial_matmul_unpipelined_loads_are_16_bytes(arch):
    c = _compile(tutorial_mm, SIG_1024, arch, num_warps=4, num_stages=1, MASK=True, WRAP=True,
                 **TUTORIAL_TILE)
    ptx = c.asm["ptx"]
    # 4 + 4 vector loads per thread per iteration, none narrower
    assert len(re.findall(r"ld\.global\.v4\.b32", ptx)) == 8
    assert not re.search(r"ld\.global\.(b16|u16|b32|v2)", ptx) and "cp.async" not in ptx
    if PTXAS:
        print(f"tutorial matmul, 1 stage, sm_{arch}: {c.metadata.n_regs} registers, "
              f"{c.metadata.n_spills} B spilled")
        assert c.metadata.n_spills == 0


@wb.jit
def tile_sum_k(x_ptr, out_ptr, n, INC: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    ptrs = x_ptr + rm[:, None] * 1024 + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for i in range(0, n):
        acc += tl.load(ptrs).to(tl.float32)
        ptrs += INC
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("inc,spt,load", [(64, 8, "ld.global.v4.b32"), (8, 8, "ld.global.v4.b32"),
                                          (4, 4, "ld.global.v2.b32"), (2, 2, "ld.global.b32"),
                                          (1, 1, "ld.global.b16")])
def test_carried_pointer_alignment_is_gcd_of_init_and_increment(inc, spt, load):
    """The pointer starts 16-byte aligned and advances ``inc`` fp16 elements: the loads are
    ``min(8, gcd(8, inc))`` elements wide, in the layout (coalesce) and in the PTX (the same
    AxisInfo analysis decides both)."""
    c = wb.compile(tile_sum_k, "*fp16:16", "*fp32:16", "i32", target="cuda:80", INC=inc,
                   BM=32, BN=64)
    assert f"sizePerThread = [1, {spt}]" in c.asm["ttgir"]
    loads = set(re.findall(r"ld\.global\.[\w.]+", c.asm["ptx"]))
    assert loads == {load}


# on the GPU ------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("n_ctx", [64, 192, 512])
def test_attention_gpu(n_ctx):
    torch = pytest.importorskip("torch")
    z, d = 3, 64
    q, k, v = (torch.randn(z, n_ctx, d, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    scale = d ** -0.5
    attn_k[(n_ctx // 64, z)](q, k, v, o, scale, n_ctx, D=d, BM=64, BN=64, num_warps=4,
                             num_stages=3)
    torch.cuda.synchronize()
    qf, kf, vf = (x.double().cpu().numpy() for x in (q, k, v))
    s = qf @ kf.transpose(0, 2, 1) * scale
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ vf
    got = o.double().cpu().numpy()
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, atol=2e-2, rtol=2e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("k_size,stages", [(32, 3), (64, 3), (96, 3), (320, 3), (256, 2),
                                           (224, 4), (512, 1)])
def test_pipelined_matmul_gpu(k_size, stages):
    torch = pytest.importorskip("torch")
    m, n = 256, 128
    a = torch.randn(m, k_size, device="cuda", dtype=torch.float16)
    b = torch.randn(k_size, n, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    mm_k[(m // 128, n // 128)](a, b, c, m, n, k_size, BM=128, BN=128, BK=32, num_warps=4,
                               num_stages=stages)
    torch.cuda.synchronize()
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    got = c.double().cpu().numpy()
    np.testing.assert_allclose(got, want, atol=1e-2 * np.sqrt(k_size), rtol=1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,mask,wrap", [(256, 256, 1024, True, True),
                                              (200, 136, 1000, True, True),
                                              (256, 128, 72, True, False),
                                              (128, 256, 512, False, True),
                                              (256, 256, 16, True, True)])
@pytest.mark.parametrize("stages,num_warps", [(3, 4), (3, 8), (4, 4), (1, 4)])
def test_tutorial_matmul_gpu(m, n, k, mask, wrap, stages, num_warps):
    torch = pytest.importorskip("torch")
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    grid = (-(-m // 128), -(-n // 128))
    tutorial_mm[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                      c.stride(0), c.stride(1), MASK=mask, WRAP=wrap, num_warps=num_warps,
                      num_stages=stages, **TUTORIAL_TILE)
    torch.cuda.synchronize()
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    got = c.double().cpu().numpy()
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, atol=2e-2 * np.sqrt(k), rtol=1e-2)
