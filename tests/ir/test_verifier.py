"""Verifier: good modules pass; each kind of broken module raises naming the op and place."""
from __future__ import annotations

import pytest

from tests.ir.samples import every_op_module, ttgir_ops_module
from workbench.ir.core import Location, Operation
from workbench.ir.parser import parse_module
from workbench.ir.parser_lex import IRParseError
from workbench.ir.types import i32
from workbench.ir.verifier import VerificationError, verify

HEAD = ('module {\n  tt.func public @k(%p: !tt.ptr<f32>, %n: i32, %f: f32) '
        'attributes {noinline = false} {\n')
TAIL = ('    tt.return loc(#loc1)\n  } loc(#loc1)\n}\n#loc1 = loc("k.py":1:1)\n'
        '#loc2 = loc("k.py":7:9)\n')


def body(*lines):
    return HEAD + "".join(f"    {ln} loc(#loc2)\n" for ln in lines) + TAIL


def test_good_modules_pass():
    verify(every_op_module())
    verify(ttgir_ops_module())
    verify(parse_module(body("%r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>",
                             "%s = tt.splat %p : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>",
                             "%a = tt.addptr %s, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>",
                             "%x = tt.load %a : tensor<8x!tt.ptr<f32>>")))


BROKEN = [
    (['%0 = "tt.frobnicate"(%n) : (i32) -> i32'], "tt.frobnicate", "unknown op"),
    (['%0 = "arith.addi"(%n, %f) : (i32, f32) -> i32'], "arith.addi",
     "operand #1 has type f32 but the result has i32"),
    (['%0 = "arith.addf"(%n, %n) : (i32, i32) -> i32'], "arith.addf", "expects float operands"),
    (['%0 = "arith.cmpi"(%n, %n) <{predicate = "slt"}> : (i32, i32) -> i32'], "arith.cmpi",
     "result must be i1"),
    (['%0 = "arith.cmpi"(%n, %n) <{predicate = "lt"}> : (i32, i32) -> i1'], "arith.cmpi",
     "unknown predicate 'lt'"),
    (['%0 = "tt.load"(%p) : (!tt.ptr<f32>) -> i32'], "tt.load",
     "result must be f32 (the pointee of !tt.ptr<f32>)"),
    (['%0 = "tt.addptr"(%p, %f) : (!tt.ptr<f32>, f32) -> !tt.ptr<f32>'], "tt.addptr",
     "adds an integer offset"),
    (['%r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>',
      '%0 = "tt.splat"(%r) : (tensor<8xi32>) -> tensor<8xi32>'], "tt.splat", "splats a scalar"),
    (['%r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>',
      '%0 = "tt.broadcast"(%r) : (tensor<8xi32>) -> tensor<16xi32>'], "tt.broadcast",
     "can only grow size-1 dims"),
    (['%r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>',
      '%0 = tt.expand_dims %r {axis = 0 : i32} : tensor<8xi32> -> tensor<8x1xi32>'],
     "tt.expand_dims", "result must be (1, 8) of i32"),
    (['%r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>',
      '%0 = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<4xi32>'], "tt.make_range",
     "result must be tensor<8xi32>"),
    (['%0 = "tt.load"(%p, %n) : (!tt.ptr<f32>, i32) -> f32'], "tt.load", "mask must be i1"),
]


@pytest.mark.parametrize("lines,opname,message", BROKEN)
def test_broken_ops_raise_with_op_and_location(lines, opname, message):
    m = parse_module(body(*lines))
    with pytest.raises(VerificationError) as info:
        verify(m)
    text = str(info.value)
    assert text.startswith(f"'{opname}' at k.py:7:9: "), text
    assert message in text


def test_use_before_definition():
    m = parse_module(body("%a = arith.addi %n, %n : i32", "%b = arith.addi %a, %n : i32"))
    block = m.regions[0].blocks[0].ops[0].regions[0].blocks[0]
    block.ops.reverse()  # now %b comes first; tt.return moves to the front as well
    block.ops.append(block.ops.pop(0))
    with pytest.raises(VerificationError, match=r"'arith.addi' at k.py:7:9: operand #0 .* used "
                                                r"before it is defined"):
        verify(m)


def test_value_of_a_region_is_not_visible_after_it():
    text = HEAD + """    %c0 = arith.constant 0 : i32
    scf.for %i = %c0 to %n step %n : i32 {
      %inner = arith.addi %i, %n : i32
      scf.yield
    }
    %bad = arith.addi %n, %n : i32 loc(#loc2)
""" + TAIL
    # the parser scopes names by region, as MLIR's does: the text cannot even name %inner there
    with pytest.raises(IRParseError, match="use of undefined value %inner"):
        parse_module(text.replace("%bad = arith.addi %n", "%bad = arith.addi %inner"))
    m = parse_module(text)
    body_ops = m.regions[0].blocks[0].ops[0].regions[0].blocks[0].ops
    loop, bad = body_ops[1], body_ops[2]
    bad.set_operand(0, loop.regions[0].blocks[0].ops[0].result)  # built in code, it can
    with pytest.raises(VerificationError, match="operand #0 .*not visible here"):
        verify(m)


def test_missing_and_misplaced_terminators():
    m = parse_module(body("%a = arith.addi %n, %n : i32"))
    func = m.regions[0].blocks[0].ops[0]
    func.regions[0].blocks[0].ops[-1].erase()
    with pytest.raises(VerificationError, match="'tt.func' at k.py:1:1: region #0 must end with "
                                                "'tt.return', found 'arith.addi'"):
        verify(m)
    m = parse_module(body("%a = arith.addi %n, %n : i32"))
    block = m.regions[0].blocks[0].ops[0].regions[0].blocks[0]
    block.ops.reverse()
    with pytest.raises(VerificationError, match="'tt.return' at k.py:1:1: a terminator must be "
                                                "the last op"):
        verify(m)


def test_reduce_region_arguments_and_results():
    text = HEAD + """    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %s = "tt.reduce"(%r) <{axis = 0 : i32}> ({
    ^bb0(%a: i32):
      tt.reduce.return %a : i32
    }) : (tensor<8xi32>) -> i32 loc(#loc2)
""" + TAIL
    with pytest.raises(VerificationError, match="'tt.reduce' at k.py:7:9: combine region needs "
                                                "2 arguments"):
        verify(parse_module(text))
    text = text.replace("^bb0(%a: i32)", "^bb0(%a: i32, %b: i32)").replace(") -> i32", ") -> f32")
    with pytest.raises(VerificationError, match=r"result #0 must have shape \(\) of i32, got f32"):
        verify(parse_module(text))


def test_scf_yields_must_match_results():
    text = HEAD + """    %c0 = arith.constant 0 : i32
    %x = scf.for %i = %c0 to %n step %n iter_args(%acc = %n) -> (i32) : i32 {
      scf.yield %f : f32 loc(#loc2)
    } loc(#loc1)
    %c = arith.cmpi slt, %n, %x : i32
    %y = scf.if %c -> (i32) {
      scf.yield %n : i32
    } else {
      scf.yield %f : f32 loc(#loc2)
    } loc(#loc1)
""" + TAIL
    with pytest.raises(VerificationError, match=r"'scf.yield' at k.py:7:9: the loop body yields "
                                                r"\['f32'\] but the results are \['i32'\]"):
        verify(parse_module(text))
    fixed = text.replace("      scf.yield %f : f32 loc(#loc2)\n    } loc(#loc1)\n    %c",
                         "      scf.yield %acc : i32\n    } loc(#loc1)\n    %c", 1)
    with pytest.raises(VerificationError, match="the else branch yields"):
        verify(parse_module(fixed))


def test_counts_and_return_types():
    m = parse_module(body())
    func = m.regions[0].blocks[0].ops[0]
    block = func.regions[0].blocks[0]
    block.insert(0, Operation("tt.get_program_id", [], [i32, i32], {"axis": 0},
                              loc=Location("k.py", 3, 4)))
    with pytest.raises(VerificationError, match="'tt.get_program_id' at k.py:3:4: must have 1 "
                                                "result, has 2"):
        verify(m)
    m = parse_module(body().replace("    tt.return loc(#loc1)",
                                    "    tt.return %n : i32 loc(#loc1)"))
    with pytest.raises(VerificationError, match=r"returns \['i32'\], the function declares \[\]"):
        verify(m)


TTGIR_HEAD = ('#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], '
              'warpsPerCTA = [4, 1], order = [0, 1]}>\n'
              '#blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], '
              'warpsPerCTA = [4], order = [0]}>\n'
              'module attributes {"ttg.num-warps" = 4 : i32} {\n'
              '  tt.func public @k(%n: i32) attributes {noinline = false} {\n')


def test_ttgir_layout_rules():
    no_layout = TTGIR_HEAD + ("    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : "
                              "tensor<8xi32> loc(#loc2)\n") + TAIL
    with pytest.raises(VerificationError, match="tensor<8xi32> has no layout in a ttgir module"):
        verify(parse_module(no_layout))
    not_slice = TTGIR_HEAD + (
        "    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #blocked1>\n"
        "    %e = tt.expand_dims %r {axis = 1 : i32} : tensor<8xi32, #blocked1> -> "
        "tensor<8x1xi32, #blocked> loc(#loc2)\n") + TAIL
    with pytest.raises(VerificationError, match=r"'tt.expand_dims' at k.py:7:9: operand layout "
                                                r"must be #ttg.slice"):
        verify(parse_module(not_slice))
    good = not_slice.replace("tensor<8xi32, #blocked1>",
                             "tensor<8xi32, #ttg.slice<{dim = 1, parent = #blocked}>>")
    verify(parse_module(good))
