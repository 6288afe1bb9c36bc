"""``tl.range`` options: ``num_stages``, ``loop_unroll_factor``, ``disallow_acc_multi_buffer``,
``flatten`` and ``warp_specialize`` leave the loop's values unchanged on both host backends,
print on the ``scf.for`` as Triton 3.6 prints them (unit attributes by bare name, sorted), and
the text parses back to the same text."""
import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module


@wb.jit
def ranged_sums(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in tl.range(0, n, num_stages=2, disallow_acc_multi_buffer=True, flatten=True,
                      warp_specialize=True):
        acc += tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK))
    total = 0.0
    for j in tl.range(0, n, 2, flatten=True):
        total += tl.sum(tl.load(x_ptr + j * BLOCK + tl.arange(0, BLOCK)))
    tl.store(out_ptr + tl.arange(0, BLOCK), acc + total)


def test_range_options_keep_the_values(backend, rng):
    n, block = 7, 16
    x = rng.standard_normal(n * block).astype(np.float32)
    out = np.zeros(block, np.float32)
    launch(backend, ranged_sums, (1,), x, out, n, BLOCK=block)
    rows = x.reshape(n, block).astype(np.float64)
    want = rows.sum(axis=0) + rows[::2].sum()
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def _loop_attrs(ttir: str) -> list:
    """The attribute dictionaries closing the loops of ``ttir``, in order."""
    return [ln.strip().split(" loc(")[0] for ln in ttir.splitlines()
            if ln.strip().startswith("} {")]


def test_range_options_print_as_triton_does():
    ttir = wb.compile(ranged_sums, "*fp32", "*fp32", "i32", BLOCK=16, target="cpu").asm["ttir"]
    attrs = _loop_attrs(ttir)
    assert attrs == ["} {tt.disallow_acc_multi_buffer, tt.flatten, tt.num_stages = 2 : i32, "
                     "tt.warp_specialize}", "} {tt.flatten}"]
    again = print_module(parse_module(ttir))
    assert _loop_attrs(again) == attrs


def test_range_options_match_triton():
    pytest.importorskip("triton", reason="real Triton 3.6 compares the loop attributes")
    from workbench.runtime.triton_oracle import triton_compile
    theirs = triton_compile(ranged_sums, ["*fp32", "*fp32", "i32"], "cuda:90", 4, 3,
                            {"BLOCK": 16})["asm"]["ttir"]
    ours = wb.compile(ranged_sums, "*fp32", "*fp32", "i32", BLOCK=16, target="cpu")
    assert _loop_attrs(ours.asm["ttir"]) == _loop_attrs(theirs)


@wb.jit
def unrolled(x_ptr, out_ptr, n, lo, BLOCK: tl.constexpr, F: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in tl.range(lo, n, 2, loop_unroll_factor=F, num_stages=1):
        acc = acc * 0.5 + tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK))
        for j in tl.range(0, 3, loop_unroll_factor=2):  # constant bounds, odd trip count
            acc += j * i
    for k in tl.range(0, 8, loop_unroll_factor=4):  # constant bounds, no epilogue
        acc += k
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


def _unrolled_reference(x, n, lo, block):
    acc = np.zeros(block)
    for i in range(lo, n, 2):
        acc = acc * 0.5 + x[i * block:(i + 1) * block]
        acc += 3 * i
    return acc + sum(range(8))


@pytest.mark.parametrize("n, lo, factor", [(13, 0, 4), (12, 1, 3), (0, 0, 2), (2, 1, 4)])
def test_loop_unroll_factor_keeps_the_values(backend, rng, n, lo, factor):
    block = 8
    x = rng.standard_normal(max(n, 1) * block).astype(np.float32)
    out = np.zeros(block, np.float32)
    launch(backend, unrolled, (1,), x, out, n, lo, BLOCK=block, F=factor)
    np.testing.assert_allclose(out, _unrolled_reference(x.astype(np.float64), n, lo, block),
                               rtol=1e-5, atol=1e-4)


def test_loop_unroll_prints_as_triton_does():
    ttir = wb.compile(unrolled, "*fp32", "*fp32", "i32", "i32", BLOCK=8, F=4,
                      target="cpu").asm["ttir"]
    assert "tt.loop_unroll_factor" not in ttir
    # the outer loop: a main loop (step * 4) and its epilogue (not pipelined); the inner
    # constant loop 0..3 by 2 leaves two single-iteration loops, both replaced by their
    # bodies (4 copies in the main loop, 1 in the epilogue); the last loop 0..8 by 4 needs
    # no epilogue
    assert _loop_attrs(ttir) == ["} {tt.num_stages = 1 : i32}"] * 2
    assert ttir.count("scf.for") == 3 and ttir.count("tt.load") == 5
    assert ttir.count("arith.divui") == 1  # the dynamic trip count of the outer loop
    pytest.importorskip("triton", reason="real Triton 3.6 compares the unrolled loops")
    from workbench.runtime.triton_oracle import triton_compile
    theirs = triton_compile(unrolled, ["*fp32", "*fp32", "i32", "i32"], "cuda:90", 4, 3,
                            {"BLOCK": 8, "F": 4})["asm"]["ttir"]
    for op in ("scf.for", "arith.divui", "arith.remsi", "tt.load", "arith.constant"):
        assert ttir.count(op) == theirs.count(op), op
    assert _loop_attrs(ttir) == _loop_attrs(theirs)
