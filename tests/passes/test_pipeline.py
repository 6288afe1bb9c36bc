"""``tritongpu-pipeline`` on a frontend K loop: multi-buffers, prologue, wait/copy/commit in the
loop, loads replaced by slot reads (IR text checks), and the pass list per target."""
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
CHECK: ttg.shared = 24576 : i32
CHECK: ttg.local_alloc {allocation.offset = {{[0-9]+}} : i32} : () -> !ttg.memdesc<3x64x32xf16, #shared, #smem, mutable>
CHECK: ttg.local_alloc {allocation.offset = {{[0-9]+}} : i32} : () -> !ttg.memdesc<3x32x64xf16, #shared1, #smem, mutable>
CHECK: arith.cmpi slt
CHECK: ttg.memdesc_index %{{.*}}[%c0_i32
CHECK: ttg.async_copy_global_to_local
CHECK: ttg.async_copy_global_to_local
CHECK: ttg.async_commit_group
CHECK: ttg.memdesc_index %{{.*}}[%c1_i32
CHECK: ttg.async_commit_group
CHECK: scf.for
CHECK: arith.divsi
CHECK: arith.remsi
CHECK: ttg.async_wait {num = 1 : i32}
CHECK: gpu.barrier
CHECK-NEXT: ttg.async_copy_global_to_local
CHECK: ttg.async_commit_group
CHECK-NOT: tt.load
CHECK: ttg.local_load
CHECK: ttg.local_load
CHECK: tt.dot
CHECK: scf.yield
CHECK: ttg.async_wait {num = 0 : i32}
""")  # noqa: E501


def test_one_stage_leaves_the_loop_alone():
    text = _ttgir(1)
    assert "async" not in text and "memdesc_index" not in text
    assert text.count("ttg.local_alloc %") == 2


def test_stages_set_wait_count_and_buffers():
    text = _ttgir(4)
    assert "!ttg.memdesc<4x64x32xf16" in text and "ttg.async_wait {num = 2 : i32}" in text
    assert text.count('ttg.async_commit_group') == 4  # 3 prologue stages + 1 in the loop


def test_pass_lists():
    names = [p.name for p in ttgir_passes(Options(num_stages=3), "cuda:80")]
    assert names[-3:] == ["tritongpu-pipeline", "tritongpu-allocate-shared-memory",
                          "tritongpu-insert-barriers"]
    assert "tritongpu-pipeline" not in [p.name for p in ttgir_passes(Options(), "cpu")]
    assert Pipeline(num_stages=2).num_stages == 2
