"""Kernels from our frontend through the ttir and ttgir pipelines: the IR verifies after every
pass, every snapshot parses back to the same text, and the ttgir reads like Triton's."""
from __future__ import annotations

import pytest

from tests.filecheck_util import check
from workbench.config import CompileContext, Options
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.passes import PassManager, ttgir_passes, ttir_passes
from workbench.runtime.specialization import ArgSpec, Specialization

wb = pytest.importorskip("workbench")
tl = pytest.importorskip("workbench.language")
frontend = pytest.importorskip("workbench.frontend")


@wb.jit
def rowsum_scaled(x_ptr, o_ptr, n, N: tl.constexpr):
    om = tl.arange(0, 64)
    x = tl.load(x_ptr + tl.arange(0, 64)[:, None] * N + tl.arange(0, N)[None, :])
    s = tl.sum(x, axis=1)
    tl.store(o_ptr + om, s * 2 + n)


def _spec():
    return Specialization([ArgSpec("x_ptr", "pointer", "*fp32", True),
                           ArgSpec("o_ptr", "pointer", "*fp32", True),
                           ArgSpec("n", "scalar", "i32", False),
                           ArgSpec("N", "constexpr", "constexpr", value=128)])


def test_frontend_kernel_through_both_pipelines():
    options = Options(num_warps=4)
    module = frontend.generate_ttir(rowsum_scaled.src, _spec(), options)
    ctx = CompileContext(keep_snapshots=True)
    PassManager(ttir_passes(options), verify=True).run(module, ctx, "ttir")
    PassManager(ttgir_passes(options, "cuda:90"), verify=True).run(module, ctx, "ttgir")
    for stage in ("ttir", "ttgir"):
        for name, text in ctx.snapshots[stage]:
            assert print_module(parse_module(text)) == text, (stage, name)
    out = print_module(module, locations=False)
    # as Triton 3.6 final rowsum TTGIR (ir_rowsum.txt): coalesced 2-D load layout, slice layouts
    # for the reduce, one conversion towards the 1-D store
    check(out, """
CHECK: #blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
CHECK-NEXT: #blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
CHECK: "tt.reduce"
CHECK: -> tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
CHECK: ttg.convert_layout %{{[0-9a-z_]+}} : tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64xf32, #blocked1>
CHECK-NOT: ttg.convert_layout
CHECK: tt.store
""")  # noqa: E501
