"""``workbench.compare`` and the text facts it reads (``workbench.runtime.ir_facts``): the
facts from hand-written ttgir/PTX, the error without Triton, and one real comparison where
Triton is installed."""
from __future__ import annotations

import sys

import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import ToolMissingError
from workbench.runtime import ir_facts

TTGIR = (  # printed IR lines are long
"""\
#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
module attributes {"ttg.num-warps" = 4 : i32, ttg.shared = 4096 : i32} {
  tt.func public @k(%p: !tt.ptr<f32>) {
    %0 = tt.load %a : tensor<32x!tt.ptr<f32>, #ttg.slice<{dim = 0, parent = #blocked}>>
    %1 = ttg.convert_layout %x : tensor<32x64xf32, #blocked> -> tensor<32x64xf32, #mma>
    %2 = "tt.reduce"(%1) <{axis = 1 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tt.reduce.return %s : f32
    }) : (tensor<32x64xf32, #mma>) -> tensor<32xf32, #ttg.slice<{dim = 1, parent = #mma}>>
    %3 = tt.dot %q, %k, %c : tensor<32x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>> * tensor<16x64xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>> -> tensor<32x64xf32, #mma>
    gpu.barrier
    tt.store %p2, %v : tensor<32x!tt.ptr<f32>, #blocked1>
    tt.return
  }
}
""")  # noqa: E501
PTX = """
    ld.global.L1::evict_last.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
    ld.global.b32 %r5, [ %rd2 + 0 ];
    @%p1 st.global.v2.b16 [ %rd3 + 0 ], { %rs1, %rs2 };
    bar.sync 0;
    barrier.sync.aligned 0;
    ld.shared.v4.b32 { %r1, %r2, %r3, %r4 }, [ %r9 ];
"""
MMA = ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], "
       "instrShape = [16, 8]}>")


def test_facts_from_text():
    f = ir_facts.facts_of(TTGIR, PTX)
    assert f.converts == 1 and f.shared == 4096 and f.ttgir_barriers == 1
    assert f.ptx_barriers == 2
    assert f.vectors == {"ld.global.v4.b32": 1, "ld.global.v1.b32": 1, "st.global.v2.b16": 1}
    assert len(f.layouts) == 3 and MMA in f.layouts
    ops = f.op_layouts
    assert ops["tt.load"][0][0].startswith("#ttg.slice<{dim = 0, parent = #ttg.blocked<")
    # the reduce's types come from the line that closes its region, aliases expanded
    assert ops["tt.reduce"] == [(MMA, f"#ttg.slice<{{dim = 1, parent = {MMA}}}>")]
    assert ops["tt.dot"][0][2] == MMA
    assert f"parent = {MMA}, kWidth = 2" in ops["tt.dot"][0][0]
    assert ops["tt.store"][0][0].startswith("#ttg.blocked<{sizePerThread = [1]")
    assert "arith.addf" not in ops


def test_tensor_encodings_nested_brackets():
    text = "tensor<4x8x!tt.ptr<f16>, #ttg.slice<{dim = 1, parent = #a}>> tensor<4xi32>"
    assert ir_facts.tensor_encodings(text) == ["#ttg.slice<{dim = 1, parent = #a}>", ""]


def test_differences_list_each_property():
    from workbench.runtime.compare import differences
    ours = ir_facts.facts_of(TTGIR, PTX)
    theirs = ir_facts.facts_of(TTGIR.replace("ttg.convert_layout", "arith.addf"), "")
    props = {d.prop for d in differences(ours, theirs, 4096, 0)}
    assert props == {"converts", "shared", "barriers", "vectors"}
    assert differences(ours, ours, 7, 7) == []


@wb.jit
def _scale_k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)


def test_without_triton_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)
    monkeypatch.setitem(sys.modules, "triton.language", None)
    with pytest.raises(ToolMissingError, match=r"tile-workbench\[triton\]"):
        wb.compare(_scale_k, "*fp32:16", "*fp32:16", "i32", BLOCK=256)


def test_compare_with_triton():
    pytest.importorskip("triton", reason="needs Triton 3.6 (the triton extra)")
    c = wb.compare(_scale_k, "*fp32:16", "*fp32:16", "i32:16", target="cuda:80", num_warps=2,
                   BLOCK=512)
    assert 'ttg.target = "cuda:80"' in c.theirs["ttgir"]
    assert '"ttg.num-warps" = 2' in c.theirs["ttgir"]
    # both vectorise the 16-byte-aligned accesses: 512 / (2 warps * 32 lanes) = 8 per lane
    assert c.theirs_facts.vectors == {"ld.global.v4.b32": 2, "st.global.v4.b32": 2}
    assert c.agree == {p: True for p in c.agree}, c.summary()
    with pytest.raises(ValueError, match="CUDA targets only"):
        wb.compare(_scale_k, "*fp32:16", "*fp32:16", "i32:16", target="cpu", BLOCK=512)
