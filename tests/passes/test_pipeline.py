"""``tritongpu-pipeline`` on a frontend K loop: multi-buffers, prologue, wait/copy/commit in the
loop, loads replaced by slot reads, the async tokens threaded as Triton 3.6 threads them (IR
text checks), and the pass list per target."""
from __future__ import annotations

import re

import pytest

import workbench as wb
import workbench.language as tl
from workbench.config import Options
from workbench.passes.pipeline import Pipeline
from workbench.passes.pipelines import ttgir_passes


@wb.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


SIG = ["*fp16:16", "*fp16:16", "*fp32:16", "i32:16", "i32:16", "i32:16"]


def _ttgir(stages, target="cuda:80"):
    c = wb.compile(mm, *SIG, target=target, num_warps=4, num_stages=stages, BM=64, BN=64, BK=32)
    return re.sub(r" loc\(.*\)$", "", c.asm["ttgir"], flags=re.M)


def test_pipeline_structure_filecheck():
    pytest.importorskip("filecheck")
    from tests.filecheck_util import check
    check(_ttgir(3), """
CHECK: ttg.shared = 16384 : i32
CHECK: ttg.local_alloc {allocation.offset = {{[0-9]+}} : i32} : () -> !ttg.memdesc<2x64x32xf16, #shared, #smem, mutable>
CHECK: ttg.local_alloc {allocation.offset = {{[0-9]+}} : i32} : () -> !ttg.memdesc<2x32x64xf16, #shared1, #smem, mutable>
CHECK: %[[P0:[0-9]+]] = arith.cmpi slt
CHECK: ttg.memdesc_index %{{.*}}[%c0_i32
CHECK-NEXT: %[[M0:[0-9]+]] = tt.splat %[[P0]] : i1 -> tensor<64x32xi1
CHECK-NEXT: %[[CA0:[a-z0-9_]+]] = ttg.async_copy_global_to_local %{{.*}}, %{{.*}} mask %[[M0]] {contiguity = 8 : i32}
CHECK-NEXT: %[[GA0:[a-z0-9_]+]] = ttg.async_commit_group tokens %[[CA0]]
CHECK: %[[CB0:[a-z0-9_]+]] = ttg.async_copy_global_to_local
CHECK-NEXT: %[[GB0:[a-z0-9_]+]] = ttg.async_commit_group tokens %[[CB0]]
CHECK: ttg.memdesc_index %{{.*}}[%c1_i32
CHECK: %[[GA1:[a-z0-9_]+]] = ttg.async_commit_group tokens
CHECK: %[[GB1:[a-z0-9_]+]] = ttg.async_commit_group tokens
CHECK: scf.for {{.*}} iter_args(%{{[a-z0-9_]+}} = %acc, %[[INS:[a-z0-9_]+]] = %c1_i32, %[[EXT:[a-z0-9_]+]] = %c-1_i32, %[[TA0:[a-z0-9_]+]] = %[[GA0]], %[[TA1:[a-z0-9_]+]] = %[[GA1]], %[[TB0:[a-z0-9_]+]] = %[[GB0]], %[[TB1:[a-z0-9_]+]] = %[[GB1]]) -> (tensor<64x64xf32, #mma>, i32, i32, !ttg.async.token, !ttg.async.token, !ttg.async.token, !ttg.async.token)
CHECK: %[[E1:[0-9]+]] = arith.addi %[[EXT]], %c1_i32
CHECK: %[[EW:[0-9]+]] = arith.cmpi sge, %[[E1]], %c2_i32
CHECK: %[[RD:[0-9]+]] = arith.select %[[EW]], %c0_i32, %[[E1]]
CHECK: %[[W:[a-z0-9_]+]] = ttg.async_wait %[[TA0]], %[[TB0]] {num = 2 : i32}
CHECK: gpu.barrier
CHECK-NEXT: ttg.local_load %{{[0-9]+}} token %[[W]]
CHECK-NOT: tt.load
CHECK: ttg.local_load %{{[0-9]+}} token %[[W]]
CHECK: tt.dot
CHECK: tt.splat %{{[0-9]+}} : i1 ->
CHECK-NEXT: gpu.barrier
CHECK-NEXT: %[[NA:[a-z0-9_]+]] = ttg.async_copy_global_to_local
CHECK-NEXT: %[[GNA:[a-z0-9_]+]] = ttg.async_commit_group tokens %[[NA]]
CHECK: %[[NB:[a-z0-9_]+]] = ttg.async_copy_global_to_local
CHECK-NEXT: %[[GNB:[a-z0-9_]+]] = ttg.async_commit_group tokens %[[NB]]
CHECK: scf.yield %{{[a-z0-9_]+}}, %{{[0-9]+}}, %[[RD]], %[[TA1]], %[[GNA]], %[[TB1]], %[[GNB]] :
CHECK: ttg.async_wait {num = 0 : i32}
""")  # noqa: E501


def test_one_stage_leaves_the_loop_alone():
    text = _ttgir(1)
    assert "async" not in text and "memdesc_index" not in text
    assert text.count("ttg.local_alloc %") == 2


def test_stages_set_wait_count_and_buffers():
    # mma.sync (sm_80): num_stages - 1 buffers (the copy-to-use distance, Triton's stageDiff);
    # A and B each their own commit group, so the wait leaves (stages - 2) * 2 groups pending
    text = _ttgir(4)
    assert "!ttg.memdesc<3x64x32xf16" in text
    # the wait names the groups of iteration i (A and B), the loop carries 3 tokens per operand
    assert re.search(r"ttg.async_wait %\w+, %\w+ \{num = 4 : i32\}", text)
    assert text.count('ttg.async_commit_group') == 8  # 2 x (3 prologue stages + 1 in the loop)
    assert re.search(r"scf.for .* -> \(tensor<64x64xf32, #mma>, i32, i32(, !ttg.async.token){6}\)",
                     text)


def test_wgmma_keeps_one_more_buffer():
    # wgmma reads the slot of the previous iteration while the next copy is issued: Triton
    # 3.6 allocates num_stages buffers on sm_90 (LowerLoops.cpp, loadRequiresAdditionalBuffer)
    text = _ttgir(3, "cuda:90")
    assert "!ttg.memdesc<3x64x32xf16" in text
    assert re.search(r"ttg.async_wait %\w+, %\w+ \{num = 2 : i32\}", text)


def test_pass_lists():
    names = [p.name for p in ttgir_passes(Options(num_stages=3), "cuda:80")]
    assert names[-5:] == ["triton-licm", "tritongpu-pipeline", "cse",
                          "tritongpu-allocate-shared-memory", "tritongpu-insert-barriers"]
    cpu = [p.name for p in ttgir_passes(Options(), "cpu")]
    assert "tritongpu-pipeline" not in cpu and "triton-licm" not in cpu
    assert Pipeline(num_stages=2).num_stages == 2


def test_unaligned_half_loads_are_not_pipelined():
    # no divisibility on K, N or the pointers: each thread's run may be one 2-byte element,
    # below cp.async's 4 bytes; Triton 3.6 keeps such loads synchronous too
    c = wb.compile(mm, "*fp16", "*fp16", "*fp32", "i32", "i32", "i32", target="cuda:80",
                   num_warps=4, num_stages=3, BM=64, BN=64, BK=32)
    text = c.asm["ttgir"]
    assert "async_copy_global_to_local" not in text and "async_commit_group" not in text
    notes = " ".join(c.extra.get("notes", []))
    assert "4-byte aligned" in notes
    # fp32 elements are 4 bytes each: those are copied asynchronously even without hints
    c32 = wb.compile(mm, "*fp32", "*fp32", "*fp32", "i32", "i32", "i32", target="cuda:80",
                     num_warps=4, num_stages=3, BM=64, BN=64, BK=32)
    assert c32.asm["ttgir"].count("async_copy_global_to_local") == 6
