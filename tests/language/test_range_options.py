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
