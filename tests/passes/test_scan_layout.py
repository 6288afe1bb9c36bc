"""A scan of a ``tl.dot`` result: the ``#mma`` layout of the dot does not flow into
``tt.scan`` (Triton 3.6's ``inferDstEncoding`` lets only blocked layouts through a scan), so
the ttgir converts to a blocked layout before the scan, as Triton's does, and the CUDA backend
lowers it for cuda:80 and cuda:90."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.nvidia_tools import assemble, find_tool


@wb.jit
def dot_cumsum(a_ptr, b_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c = tl.dot(a, b)
    d = tl.cumsum(c, axis=0)
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], d)


SIG = ("*fp16", "*fp16", "*fp32")
TILE = {"BM": 32, "BN": 16, "BK": 16}


def scan_operand_source(ttgir: str) -> str:
    """The line defining the first ``tt.scan``'s operand in printed ttgir."""
    m = re.search(r'"tt\.scan"\((%[\w.]+)\)', ttgir)
    assert m, "no tt.scan in the ttgir"
    name = re.escape(m.group(1))
    line = re.search(rf"^\s*{name} = .*$", ttgir, re.M)
    assert line, f"no definition of {m.group(1)}"
    return line.group(0).strip()


def scan_type(ttgir: str) -> str:
    """The ``(operand type) -> result type`` text of the first ``tt.scan``."""
    m = re.search(r'"tt\.scan"\(.*?\}\) : (\(.*?\) -> [^\n]*?) loc', ttgir, re.S)
    assert m
    return m.group(1)


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_scan_of_a_dot_gets_a_conversion_to_blocked(target):
    ck = wb.compile(dot_cumsum, *SIG, target=target, **TILE)
    ttgir = ck.asm["ttgir"]
    assert "#mma" in ttgir  # the dot is on the tensor cores
    src = scan_operand_source(ttgir)
    assert src.split("=")[1].strip().startswith("ttg.convert_layout"), src
    assert re.search(r"#mma> -> tensor<32x16xf32, #blocked\d*>", src), src
    assert "#mma" not in scan_type(ttgir)
    ptxas = find_tool("ptxas")
    if ptxas:
        assemble(ck.asm["ptx"], int(target[5:]), ptxas)


def test_scan_of_a_dot_values_on_the_cpu():
    rng = np.random.default_rng()
    a = rng.standard_normal((32, 16)).astype(np.float16)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    out = np.zeros((32, 16), np.float32)
    dot_cumsum[(1,)](a, b, out, **TILE)
    want = np.cumsum(a.astype(np.float32) @ b.astype(np.float32), axis=0)
    np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-3)


def test_ttgir_matches_triton_around_the_scan():
    pytest.importorskip("triton", reason="real Triton 3.6 is the oracle for the ttgir")
    import triton
    import triton.language as ttl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def ref(a_ptr, b_ptr, out_ptr, BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr):
        rm = ttl.arange(0, BM)
        rn = ttl.arange(0, BN)
        rk = ttl.arange(0, BK)
        a = ttl.load(a_ptr + rm[:, None] * BK + rk[None, :])
        b = ttl.load(b_ptr + rk[:, None] * BN + rn[None, :])
        c = ttl.dot(a, b)
        d = ttl.cumsum(c, axis=0)
        ttl.store(out_ptr + rm[:, None] * BN + rn[None, :], d)

    sig = dict(zip(("a_ptr", "b_ptr", "out_ptr"), SIG, strict=True))
    sig.update({k: "constexpr" for k in TILE})
    for cap in (80, 90):
        theirs = triton.compile(ASTSource(ref, signature=sig, constexprs=dict(TILE)),
                                target=GPUTarget("cuda", cap, 32)).asm["ttgir"]
        ours = wb.compile(dot_cumsum, *SIG, target=f"cuda:{cap}", **TILE).asm["ttgir"]
        for text in (theirs, ours):
            src = scan_operand_source(text)
            assert "ttg.convert_layout" in src and "#mma> -> " in src, src
            assert "#mma" not in scan_type(text)
