"""SSA names as MLIR's printer gives them: one conflict counter per function for all names
(``%x``, ``%z_0``, ``%x_1``), nested regions numbered after their parent's values and
starting from the same state (two sibling loops reuse ``%i``, each ``tt.func`` restarts at
``%0``), quoted symbols for noinline callees; the parser scopes names by region so the text
reads back. With Triton installed, Triton's own ttir of a kernel with a noinline helper
prints back identically."""
from __future__ import annotations

import re

import pytest

from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module

TWO_FUNCS = '''module {
  tt.func public @k(%x_ptr: !tt.ptr<f32>, %n: i32) attributes {noinline = false} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %x = tt.load %x_ptr : !tt.ptr<f32>
    %x_0 = tt.call @"mod.helper__(1,)"(%x_ptr, %n) : (!tt.ptr<f32>, i32) -> f32
    %x_1 = arith.addf %x, %x_0 : f32
    %x_2 = scf.for %i = %c0_i32 to %n step %c1_i32 iter_args(%x_5 = %x_1) -> (f32)  : i32 {
      %x_6 = arith.addf %x_5, %x : f32
      scf.yield %x_6 : f32
    }
    %x_3 = scf.for %i = %c0_i32 to %n step %c1_i32 iter_args(%x_5 = %x_2) -> (f32)  : i32 {
      %1 = arith.sitofp %i : i32 to f32
      %x_6 = arith.mulf %x_5, %1 : f32
      scf.yield %x_6 : f32
    }
    %x_4 = arith.mulf %x_3, %x : f32
    %0 = arith.addf %x_4, %x_4 : f32
    tt.store %x_ptr, %0 : !tt.ptr<f32>
    tt.return
  }
  tt.func private @"mod.helper__(1,)"(%x_ptr: !tt.ptr<f32>, %n: i32) -> f32 attributes {noinline = true} {
    %x = tt.load %x_ptr : !tt.ptr<f32>
    %x_0 = arith.sitofp %n : i32 to f32
    %0 = arith.mulf %x, %x_0 : f32
    tt.return %0 : f32
  }
}
'''  # noqa: E501


def test_two_functions_and_sibling_loops_print_as_mlir_numbers_them():
    module = parse_module(TWO_FUNCS)
    assert print_module(module, locations=False) == TWO_FUNCS
    for value in _all_values(module):  # names are re-derived, not remembered from the text
        if value.name and not value.name.isidentifier():
            value.name = None
    assert print_module(module, locations=False) == TWO_FUNCS


def _all_values(op):
    for region in op.regions:
        for block in region.blocks:
            yield from block.args
            for inner in block.ops:
                yield from inner.results
                yield from _all_values(inner)


def test_a_name_from_a_region_is_not_visible_after_it():
    text = TWO_FUNCS.replace("%x_4 = arith.mulf %x_3, %x", "%x_4 = arith.mulf %x_3, %x_6")
    with pytest.raises(Exception, match="undefined value %x_6"):
        parse_module(text)


def test_tritons_ttir_of_a_noinline_helper_prints_back_identically():
    pytest.importorskip("triton", reason="real Triton 3.6 prints the reference text")
    from tests.ir.noinline_kernel import caller
    from workbench.runtime.triton_oracle import triton_compile
    theirs = triton_compile(caller, ["*fp32", "*fp32", "i32"], "cuda:90", 4, 3,
                            {"BLOCK": 64})["asm"]["ttir"]
    assert "tt.func private" in theirs and "noinline = true" in theirs
    drop = re.compile(r" loc\([^()]*(\([^()]*\))?\)")
    want = [drop.sub("", ln) for ln in theirs.splitlines()
            if ln.strip() and not ln.startswith("#loc")]
    ours = print_module(parse_module(theirs), locations=False).splitlines()
    assert ours == want
