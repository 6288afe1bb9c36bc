"""``tl.multiple_of`` on a kernel argument (a block argument of the ``tt.func``): Triton 3.6
neither raises nor records anything (its ``Value.set_attr`` binding skips arguments of the
function's entry block, ``python/src/ir.cc``), so the ttir is the one without the hint; the
workbench does the same. On an op result the hint is an attribute of the defining op."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl


@wb.jit
def hinted(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    n = tl.multiple_of(n, 4)
    x_ptr = tl.multiple_of(x_ptr, 16)
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@wb.jit
def plain(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@wb.jit
def hinted_result(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    m = tl.multiple_of(n * 4, 4)
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < m), mask=offs < m)


SIG = ("*fp32", "*fp32", "i32")


def _body(ttir: str) -> list:
    """The ttir's op lines with names and locations dropped."""
    lines = [ln.split(" loc(")[0].strip() for ln in ttir.splitlines()]
    return [ln.split("=", 1)[-1] for ln in lines if ln and not ln.startswith(("#loc", "tt.func",
                                                                              "module"))]


def test_hint_on_an_argument_changes_nothing():
    a = wb.compile(hinted, *SIG, target="cuda:90", BLOCK=128).asm["ttir"]
    b = wb.compile(plain, *SIG, target="cuda:90", BLOCK=128).asm["ttir"]
    assert "divisibility" not in a
    assert _body(a) == _body(b)
    x = np.random.default_rng().standard_normal(128).astype(np.float32)
    out = np.full(128, np.nan, np.float32)
    hinted[(1,)](x, out, 100, BLOCK=128)
    np.testing.assert_array_equal(out[:100], x[:100])


def test_hint_on_a_result_is_recorded():
    t = wb.compile(hinted_result, *SIG, target="cuda:90", BLOCK=128).asm["ttir"]
    assert "tt.divisibility = dense<4> : tensor<1xi32>" in t


def test_triton_does_the_same():
    pytest.importorskip("triton", reason="real Triton 3.6 is the oracle for the ttir")
    import triton
    import triton.language as ttl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def t_hinted(x_ptr, out_ptr, n, BLOCK: ttl.constexpr):
        n = ttl.multiple_of(n, 4)
        x_ptr = ttl.multiple_of(x_ptr, 16)
        offs = ttl.arange(0, BLOCK)
        ttl.store(out_ptr + offs, ttl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    @triton.jit
    def t_plain(x_ptr, out_ptr, n, BLOCK: ttl.constexpr):
        offs = ttl.arange(0, BLOCK)
        ttl.store(out_ptr + offs, ttl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    texts = [triton.compile(ASTSource(f, signature=sig, constexprs={"BLOCK": 128}),
                            target=GPUTarget("cuda", 90, 32)).asm["ttir"]
             for f in (t_hinted, t_plain)]
    assert "divisibility" not in texts[0]
    assert _body(texts[0]) == _body(texts[1])
