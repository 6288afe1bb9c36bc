"""accelerate-matmul on Hopper (MMA v3, ``ttng.warp_group_dot``) and the pipelined K loop with
asynchronous wgmma: IR text after the ttgir passes for cuda:80 and cuda:90, the barriers
around the in-flight group, and the interpreter running the resulting ttgir against numpy."""
from __future__ import annotations

import numpy as np
import pytest

from tests.passes.pipeline_kernels import (
    SIG_ANY,
    SIG_DIV16,
    pipelined_ttgir,
    run_ttgir,
    tutorial_mm,
)
from tests.passes.test_insert_barriers import barrier_ops
from workbench.config import Options, Target
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.passes.pipelines import ttgir_passes

TILE = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, MASK=True, WRAP=True)


def _text(module) -> str:
    return print_module(module, locations=False)


@pytest.mark.parametrize("target,major", [("cuda:80", 2), ("cuda:90", 3)])
def test_v3_on_cuda90_v2_on_cuda80(target, major):
    pytest.importorskip("filecheck")
    from tests.filecheck_util import check
    text = _text(pipelined_ttgir(tutorial_mm, SIG_ANY, stages=1, num_warps=8, target=target,
                                 **TILE))
    if major == 2:
        check(text, """
CHECK: #mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 4], instrShape = [16, 8]}>
CHECK: #ttg.swizzled_shared
CHECK: scf.for
CHECK: ttg.local_alloc
CHECK: ttg.local_load {{.*}} -> tensor<128x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>
CHECK: tt.dot
CHECK-NOT: warp_group_dot
""")  # noqa: E501
        return
    # B's columns wrap modulo N (WRAP): no contiguity is known in either dim, so its load takes
    # order [0, 1] as Triton 3.6.0's coalesce does for ties, and its buffer is the transposed
    # nvmma_shared layout (workbench.compare agrees with Triton on every layout here); the
    # unpipelined loop's wgmma is asynchronous with a wait right after it, as Triton's
    # pipeliner leaves it (its buffers are not multi-buffered)
    check(text, """
CHECK: #mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 128, 16]}>
CHECK: #shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
CHECK: #shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 16}>
CHECK: scf.for {{.*}} -> (tensor<128x128xf32, #mma>
CHECK: ttg.local_alloc {{.*}} : (tensor<128x64xf16, #blocked{{[0-9]*}}>) -> !ttg.memdesc<128x64xf16, #shared, #smem>
CHECK: ttg.local_alloc {{.*}} : (tensor<64x128xf16, #blocked{{[0-9]*}}>) -> !ttg.memdesc<64x128xf16, #shared1, #smem>
CHECK-NOT: ttg.local_load
CHECK: %acc_{{[0-9]+}} = ttng.warp_group_dot %[[A:[0-9]+]], %[[B:[0-9]+]], %acc_{{[0-9]+}} {inputPrecision = 0 : i32, isAsync = true} : !ttg.memdesc<128x64xf16, #shared, #smem> * !ttg.memdesc<64x128xf16, #shared1, #smem> -> tensor<128x128xf32, #mma>
CHECK-NEXT: ttng.warp_group_dot_wait %acc_{{[0-9]+}}, %[[A]], %[[B]] {pendings = 0 : i32}
CHECK: scf.yield %acc_{{[0-9_]+}}#0, {{.*}} : tensor<128x128xf32, #mma>,
CHECK: arith.truncf {{.*}} : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
CHECK: ttg.convert_layout {{.*}} : tensor<128x128xf16, #mma> -> tensor<128x128xf16, #blocked
""")  # noqa: E501


def test_forced_v2_option_on_cuda90():
    passes = ttgir_passes(Options(num_warps=8, cuda_mma="v2"), Target.parse("cuda:90"))
    acc = next(p for p in passes if p.name == "tritongpu-accelerate-matmul")
    assert acc.mma == "v2" and acc.options["mma"] == "v2"
    text = _text(_run_passes(passes))
    assert "versionMajor = 2" in text and "warp_group_dot" not in text
    assert any("WORKBENCH_CUDA_MMA=v2" in n for n in acc.notes)


def _run_passes(passes):
    import workbench as wb
    from workbench.passes import PassManager
    c = wb.compile(tutorial_mm, *SIG_ANY, target="interpreter", **TILE)
    return PassManager(passes, verify=True).run(parse_module(c.asm["ttir"]), None, "ttgir")


def test_async_loop_waits_and_barriers():
    text = _text(pipelined_ttgir(tutorial_mm, SIG_DIV16, stages=3, num_warps=8, target="cuda:90",
                                 **TILE))
    body = text[text.index("scf.for"):text.index("scf.yield")]
    ops = [w for ln in body.splitlines() for w in
           ('ttg.async_wait', "gpu.barrier", "ttng.warp_group_dot %",
            "ttng.warp_group_dot_wait", 'ttg.async_copy_global_to_local',
            'ttg.async_commit_group') if w in ln]
    assert ops == ['ttg.async_wait', "gpu.barrier", "ttng.warp_group_dot %",
                   "ttng.warp_group_dot_wait", "gpu.barrier",
                   'ttg.async_copy_global_to_local', 'ttg.async_commit_group',
                   'ttg.async_copy_global_to_local', 'ttg.async_commit_group'], ops
    assert "isAsync = true" in body and "{pendings = 1 : i32}" in body
    tail = text[text.index("scf.yield"):]
    assert tail.index("ttng.warp_group_dot_wait") < tail.index("{pendings = 0 : i32}") < \
        tail.index("ttg.convert_layout")


SH = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"
BL = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
      "order = [1, 0]}>")
MMA = ("#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], "
       "instrShape = [16, 64, 16]}>")
MD = f"!ttg.memdesc<64x64xf16, {SH}, #smem>"
ACC = f"tensor<64x64xf32, {MMA}>"


def _barriers(body: str) -> list:
    return barrier_ops(body, f", %c: {ACC}")


def test_barrier_after_the_wait_of_an_async_dot():
    dot = (f"ttng.warp_group_dot %a, %a, %c {{inputPrecision = 0 : i32, isAsync = true}} : "
           f"{MD} * {MD} -> {ACC}")
    ops = _barriers(f"""    %a = ttg.local_alloc %x : (tensor<64x64xf16, {BL}>) -> {MD}
    %d = {dot}
    %w = ttng.warp_group_dot_wait %d {{pendings = 0 : i32}} : {ACC}
    %b = ttg.local_alloc %x : (tensor<64x64xf16, {BL}>) -> {MD}
""")
    # RAW before the dot; the write after the wait needs every warp group past its wait
    assert ops == ["ttg.local_alloc", "gpu.barrier", "ttng.warp_group_dot",
                   "ttng.warp_group_dot_wait", "gpu.barrier", "ttg.local_alloc"], ops


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
@pytest.mark.parametrize("num_warps", [4, 8])
def test_interpreter_runs_the_wgmma_ttgir(stages, num_warps):
    module = pipelined_ttgir(tutorial_mm, SIG_DIV16, stages=stages, num_warps=num_warps,
                             target="cuda:90", **TILE)
    assert "warp_group_dot" in _text(module)
    assert ("async_copy_global_to_local" in _text(module)) == (stages > 1)
    m, n, k = 200, 144, 320  # N, K multiples of 16, as SIG_DIV16 promises
    rng = np.random.default_rng(stages * 10 + num_warps)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    run_ttgir(module, (2, 2, 1), [a, b, c, m, n, k, k, n, n])
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.astype(np.float64), want, atol=2e-2 * np.sqrt(k), rtol=1e-2)
