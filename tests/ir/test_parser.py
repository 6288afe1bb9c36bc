"""Parser: exact round trips of printed IR, locations and names kept, clear errors."""
from __future__ import annotations

import re

import pytest

from tests.filecheck_util import check
from tests.ir.samples import async_ops_module, every_op_module, ttgir_ops_module
from workbench.ir.core import Location
from workbench.ir.parser import IRParseError, parse_module
from workbench.ir.printer import print_module, print_module_with_map
from workbench.ir.verifier import verify
from workbench.layouts import BlockedLayout, SliceLayout

REF = "/work/shared/reference/triton-3.6-ir/"


@pytest.mark.parametrize("make", [every_op_module, ttgir_ops_module, async_ops_module])
@pytest.mark.parametrize("locations", [True, False])
def test_round_trip_is_exact(make, locations):
    text = print_module(make(), locations)
    parsed = parse_module(text)
    assert print_module(parsed, locations) == text
    verify(parsed)


def test_round_trip_keeps_locations_and_line_maps():
    m = every_op_module()
    parsed = parse_module(print_module(m))
    assert [op.loc for op in m.walk()][1:] == [op.loc for op in parsed.walk()][1:]
    assert print_module_with_map(m)[1] == print_module_with_map(parsed)[1]
    reduce_op = next(op for op in parsed.walk() if op.name == "tt.reduce")
    body = reduce_op.regions[0].blocks[0].ops[0]
    assert body.loc == Location("helper.py", 7, 12, "acc", Location("kern.py", 10, 3, "s"))


def test_names_become_hints_and_types_are_rebuilt():
    parsed = parse_module(print_module(every_op_module()))
    func = parsed.regions[0].blocks[0].ops[0]
    args = func.regions[0].blocks[0].args
    assert [a.name for a in args] == ["x_ptr", "y_ptr", "n", "c_ptr"]
    assert func.attributes["arg_attrs"][0] == {"tt.divisibility": 16}
    assert str(func.attributes["function_type"]) == \
        "(!tt.ptr<f32>, !tt.ptr<f32>, i32, !tt.ptr<i32>) -> ()"
    load = next(op for op in parsed.walk() if op.name == "tt.load")
    assert str(load.result.type) == "tensor<128xf32>"
    assert load.attributes == {"cache": "ca", "evict": "evict_last"}
    consts = [op.attributes["value"] for op in parsed.walk() if op.name == "arith.constant"]
    assert consts[:5] == [4, -1, True, 1.5, float("-inf")]
    assert consts[5] != consts[5]  # the f16 NaN came back as NaN


def test_layout_aliases_and_inline_slices():
    parsed = parse_module(print_module(ttgir_ops_module()))
    blocked = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    r = next(op for op in parsed.walk() if op.name == "tt.make_range")
    assert r.result.type.encoding == SliceLayout(1, blocked)
    assert parsed.attributes["ttg.num-warps"] == 4 and parsed.attributes["ttg.target"] == "cuda:90"


def _section(path, name):
    text = open(REF + path).read()
    body = text.split(f"===== {name} =====\n", 1)[1]
    return re.split(r"\n===== ", body, maxsplit=1)[0]


def test_parses_real_triton_ttgir_of_vector_add():
    # Triton prints #loc definitions before the module and locations on arguments.
    m = parse_module(_section("ir_add.txt", "ttgir"))
    verify(m)
    check(print_module(m, locations=False), """
CHECK: #blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
CHECK: module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}
CHECK: %offs_0 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #blocked>
CHECK: %x_5 = tt.load %x_4, %mask_3 : tensor<1024x!tt.ptr<f32>, #blocked>
CHECK: tt.store %1, %2, %mask_3 : tensor<1024x!tt.ptr<f32>, #blocked>
""")  # noqa: E501 (FileCheck lines are whole IR lines)
    pid = next(op for op in m.walk() if op.name == "tt.get_program_id")
    assert pid.loc == Location("probe_ir.py", 8, 24, "pid")


def test_parses_real_triton_ttgir_of_rowsum_with_callsites():
    m = parse_module(open(REF + "ir_rowsum.txt").read())
    verify(m)
    red = next(op for op in m.walk() if op.name == "tt.reduce")
    add = red.regions[0].blocks[0].ops[0]
    assert add.loc.file.endswith("standard.py") and add.loc.caller is not None
    assert add.loc.root() == Location("probe2.py", 32, 15, "s")


BAD = [
    ("module {\n  tt.func public @k() attributes {noinline = false} {\n"
     "    %0 = arith.addi %a, %a : i32\n  }\n}\n", 3, "%a,", "use of undefined value %a"),
    ("module {\n  tt.func public @k() attributes {noinline = false} {\n"
     "    %0 = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32, #blocked>\n"
     "  }\n}\n", 3, "#blocked>", "unknown layout alias '#blocked'"),
    ("module {\n  tt.func public @k() attributes {noinline = false} {\n"
     "    %0 = arith.constant 1 : q32\n  }\n}\n", 3, "q32", "expected a type"),
    ("modul {\n}\n", 1, "modul", "expected 'module'"),
    ("module {\n  tt.func public @k(%a: i32) attributes {noinline = false} {\n"
     "    %a = arith.addi %a, %a : i32\n  }\n}\n", 3, "%a =", "redefinition of %a"),
    ("module {\n  tt.func public @k(%a: i32) attributes {noinline = false} {\n"
     "    tt.return loc(#loc9)\n  }\n}\n", 3, "#loc9", "undefined location #loc9"),
    ("module {\n  tt.func public @k(%a: i32) attributes {noinline = false} {\n"
     "    %0 = arith.cmpi slt %a, %a : i32\n  }\n}\n", 3, "%a, %a : i32", "expected ','"),
]


@pytest.mark.parametrize("text,line,marker,message", BAD)
def test_parse_errors_name_line_and_column(text, line, marker, message):
    col = text.splitlines()[line - 1].index(marker) + 1
    with pytest.raises(ValueError) as info:
        parse_module(text)
    assert isinstance(info.value, IRParseError)
    assert str(info.value).startswith(f"line {line}, column {col}: ")
    assert message in str(info.value)


def test_parses_triton_result_groups_of_matmul_ttir():
    # Triton names the results of a loop as one group: %acc_32:3 = scf.for ..., %acc_32#2
    m = parse_module(_section("ir_matmul_sm90.txt", "ttir"))
    verify(m)
    loop = next(op for op in m.walk() if op.name == "scf.for")
    assert len(loop.results) == 3 and {r.name for r in loop.results} == {"acc_32"}
    dot_uses = [op for op in m.walk() if loop.results[2] in op.operands]
    assert [op.name for op in dot_uses] == ["arith.truncf"]
    text = print_module(m, locations=False)
    assert "%acc_32:3 = scf.for %kk" in text  # printed back as Triton printed it
    assert "arith.truncf %acc_32#2 " in text
    assert print_module(parse_module(text), locations=False) == text
