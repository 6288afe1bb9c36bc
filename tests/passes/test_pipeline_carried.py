"""``tritongpu-pipeline`` on loads whose pointer is carried by the loop and advanced by a
loop-invariant offset (the Triton tutorial matmul: ``a_ptrs += BLOCK_K * stride_ak``): the
ttgir structure (IR text checks), the pipelined ttgir run by the interpreter against numpy
(K tails that are not a multiple of BLOCK_K, fewer iterations than stages, no iteration),
and the compile-report notes for K loops that are not pipelined."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from tests.passes.pipeline_kernels import (
    SIG_1024,
    SIG_ANY_F32,
    carried_after_loop,
    pipelined_ttgir,
    run_ttgir,
    tutorial_mm,
)
from workbench.config import Options, Target
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.passes import PassManager
from workbench.passes.pipeline import Pipeline
from workbench.passes.pipelines import ttgir_passes

TILE = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32)


def _text(module) -> str:
    return print_module(module, locations=False)


@pytest.mark.parametrize("mask,wrap", [(True, True), (False, True), (True, False),
                                       (False, False)])
def test_tutorial_form_is_pipelined_filecheck(mask, wrap):
    pytest.importorskip("filecheck")
    from tests.filecheck_util import check
    text = _text(pipelined_ttgir(tutorial_mm, SIG_1024, MASK=mask, WRAP=wrap, **TILE))
    check(text, """
CHECK: %[[A:[0-9]+]] = ttg.local_alloc {{.*}} : () -> !ttg.memdesc<2x128x32xf16, #shared, #smem, mutable>
CHECK: %[[B:[0-9]+]] = ttg.local_alloc {{.*}} : () -> !ttg.memdesc<2x32x128xf16, #shared1, #smem, mutable>
CHECK: %[[A1:[0-9]+]] = tt.addptr %[[A0:[a-z_0-9]+]], %{{.*}} : tensor<128x32x!tt.ptr<f16>
CHECK-NEXT: %[[A2:[0-9]+]] = tt.addptr %[[A1]], %{{.*}} : tensor<128x32x!tt.ptr<f16>
CHECK: %[[B1:[0-9]+]] = tt.addptr %[[B0:[a-z_0-9]+]], %{{.*}} : tensor<32x128x!tt.ptr<f16>
CHECK-NEXT: %[[B2:[0-9]+]] = tt.addptr %[[B1]], %{{.*}} : tensor<32x128x!tt.ptr<f16>
CHECK: ttg.memdesc_index %[[A]][%c0_i32
CHECK-NEXT: tt.splat %{{[0-9]+}} : i1
CHECK: ttg.async_copy_global_to_local %[[A0]], %{{[0-9]+}} mask %{{[0-9]+}} {contiguity = 8 : i32}
CHECK-NEXT: ttg.async_commit_group tokens
CHECK: ttg.memdesc_index %[[B]][%c0_i32
CHECK-NEXT: tt.splat %{{[0-9]+}} : i1
CHECK: ttg.async_copy_global_to_local %[[B0]],
CHECK-NEXT: ttg.async_commit_group tokens
CHECK: ttg.async_copy_global_to_local %[[A1]],
CHECK-NEXT: ttg.async_commit_group tokens
CHECK: ttg.async_copy_global_to_local %[[B1]],
CHECK-NEXT: ttg.async_commit_group tokens
CHECK: scf.for %k = {{.*}} iter_args(%{{.*}} = %acc, %[[PA:[a-z_0-9]+]] = %[[A2]], %[[PB:[a-z_0-9]+]] = %[[B2]], {{.*}}!ttg.async.token
CHECK: ttg.async_wait %{{[a-z_0-9]+}}, %{{[a-z_0-9]+}} {num = 2 : i32}
CHECK: gpu.barrier
CHECK-NEXT: ttg.local_load
CHECK-NOT: tt.load
CHECK: ttg.local_load
CHECK: tt.dot
CHECK: gpu.barrier
CHECK-NEXT: ttg.async_copy_global_to_local %[[PA]],
CHECK-NEXT: ttg.async_commit_group
CHECK: ttg.async_copy_global_to_local %[[PB]],
CHECK-NEXT: ttg.async_commit_group
CHECK: scf.yield
CHECK: ttg.async_wait {num = 0 : i32}
""")  # noqa: E501
    copies = re.findall(r'ttg.async_copy_global_to_local %\w+, %\w+ mask (%\w+) ', text)
    assert len(copies) == 6
    # the stage's predicate is folded into the mask: a splat of it, and-ed with the load's mask
    for m in copies:
        made_by = re.search(rf"{m} = (\S+) ", text).group(1)
        assert made_by == ("arith.andi" if mask else "tt.splat")


def test_masks_are_computed_for_the_prefetched_iteration():
    text = _text(pipelined_ttgir(tutorial_mm, SIG_1024, MASK=True, WRAP=True, **TILE))
    body = text[text.index("scf.for"):text.index("scf.yield")]
    # k + 2 (prefetch distance S - 1 = 2, step 1; the 2 a folded constant), then
    # K - (k + 2) * 32 for the mask
    ahead = re.search(r"(%\d+) = arith.addi %k, (%\w+) : i32", body).group(1)
    assert re.search(rf"arith.muli {ahead}, %c32_i32", body)


@pytest.mark.parametrize("stages", [2, 4])
def test_stages_set_buffers_and_pointer_chain(stages):
    text = _text(pipelined_ttgir(tutorial_mm, SIG_1024, stages=stages, MASK=True, WRAP=True,
                                 **TILE))
    # mma.sync: stages - 1 slots; A and B in groups of their own
    assert f"!ttg.memdesc<{stages - 1}x128x32xf16" in text
    assert re.search(rf"ttg.async_wait %\w+, %\w+ {{num = {2 * (stages - 2)} : i32}}", text)
    pre = text[:text.index("scf.for")]
    # p_1 .. p_{S-1} for each of a and b, before the loop
    assert len(re.findall(r"= tt.addptr %\w+, %\w+ : tensor<128x32x!tt.ptr<f16>", pre)) >= \
        stages - 1
    assert text.count('ttg.async_commit_group') == 2 * stages


def test_carried_pointer_used_after_the_loop_is_recomputed_not_shifted():
    sig = ["*fp16:16", "*fp16:16", "*fp32:16", "*fp16:16", "i32:16"]
    text = _text(pipelined_ttgir(carried_after_loop, sig, BLOCK_M=64, BLOCK_N=64,
                                 BLOCK_K=32))
    head = text[text.index("scf.for"):]
    m = re.search(r"iter_args\(%acc_\w+ = %acc, (%\w+) = (%\w+), (%\w+) = (%\w+), ", head)
    pa, pa_init, pb, pb_init = m.groups()
    assert re.fullmatch(r"%a_ptrs(_\d+)?", pa_init)  # a: used after the loop: not shifted
    assert re.match(r"%\d+", pb_init)        # b: the prefetch pointer itself is carried
    body = head[:head.index("scf.yield")]
    ahead = re.search(rf"(%\w+) = tt.addptr {pa}, (%\w+)", body).group(1)
    assert f'= ttg.async_copy_global_to_local {ahead},' in body
    assert f'= ttg.async_copy_global_to_local {pb},' in body


# --- the pipelined ttgir computes the same values (interpreter vs numpy) -------------------

def _tutorial_values(m, n, k, stages, mask=True, wrap=True, bm=64, bn=64, bk=32):
    module = pipelined_ttgir(tutorial_mm, SIG_ANY_F32, stages=stages, MASK=mask, WRAP=wrap,
                             BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    assert "ttg.async_copy_global_to_local" in _text(module)
    rng = np.random.default_rng()
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float16)
    run_ttgir(module, (-(-m // bm), -(-n // bn)), [a, b, c, m, n, k, k, n, n])
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), want, atol=2e-2 * max(1, np.sqrt(k)),
                               rtol=2e-2)


@pytest.mark.parametrize("k", [1, 20, 32, 50, 100, 150])
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_masked_k_tails_match_numpy(k, stages):
    _tutorial_values(128, 64, k, stages)


def test_no_iteration_gives_zeros():
    module = pipelined_ttgir(tutorial_mm, SIG_ANY_F32, MASK=True, WRAP=True, BLOCK_M=64,
                             BLOCK_N=64, BLOCK_K=32)
    assert "ttg.async_copy_global_to_local" in _text(module)
    c = np.full((64, 64), np.nan, np.float16)
    z = np.zeros((64, 64), np.float32)
    run_ttgir(module, (1, 1), [z, z, c, 64, 64, 0, 0, 64, 64])
    assert (c == 0).all()


@pytest.mark.parametrize("mask,wrap,k", [(False, True, 96), (False, False, 128),
                                         (True, False, 70)])
def test_variants_match_numpy(mask, wrap, k):
    _tutorial_values(128, 128, k, 3, mask=mask, wrap=wrap)


def test_wrapped_rows_match_numpy():
    # M, N not multiples of the tile: the % M / % N wrap reads valid rows, the store masks
    _tutorial_values(100, 72, 64, 3)


def test_carried_after_loop_matches_numpy():
    sig = ["*fp16:16", "*fp16:16", "*fp32:16", "*fp16:16", "i32:16"]
    module = pipelined_ttgir(carried_after_loop, sig, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    rng = np.random.default_rng(3)
    k = 160
    a = rng.standard_normal((64, k)).astype(np.float16)
    b = rng.standard_normal((k, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, np.float32)
    last = np.full((64, 32), np.nan, np.float16)
    run_ttgir(module, (1,), [a, b, c, last, k])
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), atol=5e-2,
                               rtol=1e-2)
    np.testing.assert_array_equal(last, a[:, k - 32:])


# --- why a K loop was not pipelined --------------------------------------------------------

@wb.jit
def not_affine(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * BN + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    step = BK
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k, other=1.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += step
        step = step * 2
        b_ptrs += BK * BN
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def _pipeline_notes(kernel, sig, **constexprs) -> list:
    c = wb.compile(kernel, *sig, target="interpreter", **constexprs)
    passes = ttgir_passes(Options(num_stages=3), Target.parse("cuda:80"))
    PassManager(passes).run(parse_module(c.asm["ttir"]), None, "ttgir")
    (pipe,) = [p for p in passes if isinstance(p, Pipeline)]
    return pipe.notes


def test_notes_say_why_loads_were_not_pipelined():
    sig = ["*fp16:16", "*fp16:16", "*fp32:16", "i32:16"]
    assert "async_copy" not in _text(pipelined_ttgir(not_affine, sig, BM=64, BN=64, BK=32))
    line = not_affine.src.first_line + 10  # first_line: the decorator
    assert _pipeline_notes(not_affine, sig, BM=64, BN=64, BK=32) == [
        f"the load of `a` (line {line}) was not pipelined: its pointer is not an affine "
        "function of the loop (it depends on a loop-carried value that is not a pointer "
        "advanced by a loop-invariant offset).",
        f"the load of `b` (line {line + 1}) was not pipelined: its `other` is not zero "
        "(cp.async can only zero-fill)."]


def test_pipelined_loops_have_no_notes():
    assert _pipeline_notes(tutorial_mm, SIG_1024, MASK=True, WRAP=True, **TILE) == []
    assert Pipeline(num_stages=3).describe() == "tritongpu-pipeline{num_stages=3}"
