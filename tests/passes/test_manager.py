"""PassManager snapshots and timings, pipelines and the registry."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.passes.util import kernel
from workbench.config import CompileContext, Options, Target
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.ir.verifier import VerificationError
from workbench.passes import (
    CSE,
    DCE,
    Canonicalize,
    ConvertToTTGIR,
    Pass,
    PassManager,
    get_pass,
    ttgir_passes,
    ttir_passes,
)

BODY = """
    %c = arith.constant 2 : i32
    %d = arith.constant 3 : i32
    %e = arith.muli %c, %d : i32
    %a = arith.addi %n, %e : i32
    %b = arith.addi %n, %e : i32
    %dead = arith.muli %a, %b : i32
    %v = tt.addptr %p, %a : !tt.ptr<f32>, i32
    %w = tt.addptr %p, %b : !tt.ptr<f32>, i32
    tt.store %v, %f : !tt.ptr<f32>
    tt.store %w, %f : !tt.ptr<f32>
"""


def test_snapshots_after_every_pass_and_timings():
    m = parse_module(kernel(BODY))
    ctx = CompileContext(keep_snapshots=True)
    PassManager(ttir_passes(Options()), verify=True).run(m, ctx, "ttir")
    snaps = ctx.snapshots["ttir"]
    assert [name for name, _ in snaps] == ["input", "canonicalize", "triton-combine",
                                          "triton-reorder-broadcast", "cse", "dce",
                                          "triton-loop-unroll"]
    assert snaps[0][1] == print_module(parse_module(kernel(BODY)))
    assert "arith.muli %c, %d" in snaps[0][1] and "arith.muli %c, %d" not in snaps[1][1]
    assert "%c6_i32 = arith.constant 6 : i32" in snaps[1][1]
    assert "%b = arith.addi" in snaps[3][1] and "%b = arith.addi" not in snaps[4][1]
    assert snaps[-1][1] == print_module(m)
    # snapshots parse back (they carry their locations)
    assert print_module(parse_module(snaps[2][1])) == snaps[2][1]
    assert set(ctx.timings) == {"ttir:canonicalize", "ttir:triton-combine",
                                "ttir:triton-reorder-broadcast", "ttir:cse", "ttir:dce",
                                "ttir:triton-loop-unroll"}
    assert all(isinstance(t, float) and 0.0 <= t < 5.0 for t in ctx.timings.values())


def test_no_snapshots_unless_asked_and_timings_accumulate():
    ctx = CompileContext()
    m = parse_module(kernel(BODY))
    PassManager([Canonicalize(), Canonicalize()]).run(m, ctx, "s")
    assert ctx.snapshots == {} and list(ctx.timings) == ["s:canonicalize"]
    PassManager([CSE()]).run(m, None, "s")  # ctx is optional


@dataclass
class _Breaker(Pass):
    name = "breaker"

    def run(self, module, ctx=None):
        func = module.regions[0].blocks[0].ops[0]
        func.regions[0].blocks[0].ops[-1].erase()  # drop tt.return


def test_verify_names_the_pass_that_broke_the_ir():
    m = parse_module(kernel(BODY))
    with pytest.raises(VerificationError, match="after pass 'breaker': 'tt.func' .* must end with "
                                                "'tt.return'"):
        PassManager([CSE(), _Breaker()], verify=True).run(m, None, "ttir")


def test_pipelines_and_registry():
    assert [p.name for p in ttir_passes(Options())] == [
        "canonicalize", "triton-combine", "triton-reorder-broadcast", "cse", "dce",
        "triton-loop-unroll"]
    conv, *rest = ttgir_passes(Options(num_warps=8), Target.parse("cuda:80"))
    assert [p.name for p in rest][:3] == ["tritongpu-coalesce", "tritongpu-F32DotTC",
                                          "tritongpu-remove-layout-conversions"]
    assert isinstance(conv, ConvertToTTGIR) and conv.name == "convert-triton-to-tritongpu"
    assert conv.options == {"num_warps": 8, "target": "cuda:80", "threads_per_warp": 32,
                            "num_ctas": 1}
    assert conv.describe() == ("convert-triton-to-tritongpu{num_warps=8 target=cuda:80 "
                               "threads_per_warp=32 num_ctas=1}")
    assert isinstance(get_pass("symbol-dce"), DCE) and isinstance(get_pass("cse"), CSE)
    assert get_pass("convert-triton-to-tritongpu", num_warps=2).num_warps == 2
    with pytest.raises(KeyError, match="unknown pass 'licm'; known passes: canonicalize"):
        get_pass("licm")
    with pytest.raises(TypeError):
        get_pass("cse", bogus=1)
