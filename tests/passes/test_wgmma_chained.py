"""Attention-style chained dots on Hopper with 8 warps: both dots on wgmma as Triton 3.6 does
(the first, which feeds the second, with every warp along M: two warp groups compute the same
64 rows), the alpha rescale converted before its broadcast, nvmma swizzle from the contiguous
extent alone. Compile-only (ttgir, PTX through ptxas), the interpreter running the ttgir
against numpy, and the comparison with real Triton where it is installed."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.passes.pipeline_kernels import pipelined_ttgir, run_ttgir
from workbench.ir.printer import print_module
from workbench.runtime.aot import compile as wb_compile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fidelity"))
from fidelity_kernels import CASES, attention_k  # noqa: E402

SIG = next(c for c in CASES if c.name == "attention").signature  # pointers 16-byte aligned
MMA = r"#ttg.nvidia_mma<\{versionMajor = 3, versionMinor = 0, warpsPerCTA = \[(\d+), (\d+)\], " \
      r"instrShape = \[16, (\d+), 16\]\}>"


def _mma_layouts(text: str) -> set:
    return {tuple(int(x) for x in m) for m in re.findall(MMA, text)}


@pytest.fixture(scope="module")
def attention_90_8():
    return wb_compile(attention_k, *SIG, target="cuda:90", num_warps=8, BM=64, BN=32, D=64)


def test_both_dots_are_wgmma_with_tritons_warps(attention_90_8):
    ttgir = attention_90_8.asm["ttgir"]
    assert ttgir.count("ttng.warp_group_dot %") == 2
    assert "tt.dot " not in ttgir
    # Q @ K^T feeds P @ V: all 8 warps along M, N = 16 per instruction; P @ V: [4, 2], N = 32
    assert _mma_layouts(ttgir) == {(8, 1, 16), (4, 2, 32)}
    swizzles = set(re.findall(r"swizzlingByteWidth = (\d+)", ttgir))
    assert swizzles == {"128"}  # 64 fp16 contiguous (Q, V) or K^T's 64 rows of K: 128 bytes
    assert attention_90_8.metadata.shared == 32768  # Q 8 KB + 3 stages of K and V (12 KB each)


def test_alpha_is_converted_before_its_broadcast(attention_90_8):
    ttgir = attention_90_8.asm["ttgir"]
    cvts = re.findall(r"ttg\.convert_layout %\S+ (?:\{[^}]*\} )?: tensor<([0-9x]+)x(f16|f32)",
                      ttgir)
    # alpha (64x1), P into the dot operand (64x32 f16), l_i after the loop (64x1), the result
    # into the store's layout (64x64): the rescale never converts a whole 64x64 tile
    assert sorted(cvts) == sorted([("64x1", "f32"), ("64x32", "f16"), ("64x1", "f32"),
                                   ("64x64", "f32")]), cvts


def test_ptx_issues_tritons_wgmma_shapes(attention_90_8):
    ptx = attention_90_8.asm["ptx"]
    shapes = re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m64n\d+k16)", ptx)
    # Q @ K^T: 2 N repetitions x 4 K steps of m64n16k16; P @ V: 2 K steps of m64n32k16
    assert sorted(set(shapes)) == ["m64n16k16", "m64n32k16"]
    assert shapes.count("m64n16k16") == 8 and shapes.count("m64n32k16") == 2
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas is not installed: the PTX text was checked, not assembled")
    with __import__("tempfile").TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(ptx)
        subprocess.run(["ptxas", "-arch=sm_90a", str(src), "-o", str(Path(d) / "k.cubin")],
                       check=True, capture_output=True)


@pytest.mark.parametrize("bm,bn,d", [(64, 32, 64), (64, 16, 64), (128, 64, 64)])
def test_interpreter_runs_the_8_warp_attention_ttgir(bm, bn, d):
    """The rewritten ttgir (wgmma layouts, hoisted conversion) computes attention."""
    module = pipelined_ttgir(attention_k, SIG, stages=3, num_warps=8, target="cuda:90",
                             BM=bm, BN=bn, D=d)
    assert print_module(module, locations=False).count("ttng.warp_group_dot %") == 2
    rng = np.random.default_rng()
    L = 2 * bm
    q, k, v = (rng.standard_normal((L, d)).astype(np.float16) for _ in range(3))
    o = np.full((L, d), np.nan, np.float32)
    run_ttgir(module, (L // bm, 1, 1), [q, k, v, o, L])
    s = q.astype(np.float32) @ k.astype(np.float32).T
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v.astype(np.float32)
    np.testing.assert_allclose(o, ref, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name", ["attention", "matmul_f16", "trans_dot", "block_ptr_matmul"])
def test_layouts_agree_with_triton_on_8_warps(name):
    pytest.importorskip("triton", reason="the comparison needs real Triton 3.6 (extra 'triton')")
    from workbench.runtime.compare import compare
    case = next(c for c in CASES if c.name == name)
    c = compare(case.kernel, *case.signature, target="cuda:90", num_warps=8, **case.constexprs)
    assert c.agree["layouts"], c.summary()
    assert c.agree["converts"] and c.agree["shared"], c.summary()
