"""Op specs: every op has a well-formed format or custom syntax, the printer prints Triton's
custom forms from them, and the verifier's counts, attributes and terminators come from them."""
from __future__ import annotations

import re

import pytest

from tests.ir.samples import async_ops_module, every_op_module
from workbench.ir.core import Location, Operation
from workbench.ir.dialects import OPS
from workbench.ir.dialects.fmt import FunctionalType, Group, TypeOf, Var, parse_format
from workbench.ir.dialects.spec import base_name, op
from workbench.ir.parser import IRParseError, parse_module
from workbench.ir.printer import print_module
from workbench.ir.types import i32
from workbench.ir.verifier import VerificationError, verify


def _walk(elements):
    for e in elements:
        if isinstance(e, Group):
            yield from _walk(e.body)
        else:
            yield e


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_spec_has_a_syntax_whose_names_exist(name):
    spec = OPS[name]
    assert (spec.custom is None) != (not spec.parsed_format), "a format or a custom syntax"
    operands = {base_name(s) for s in spec.operands} | {"operands"}
    results = {base_name(s) for s in spec.results} | {"results"}
    attrs = {a.name for a in spec.attributes}
    for e in _walk(spec.parsed_format):
        if isinstance(e, Var):
            assert e.name in operands | attrs, e
        elif isinstance(e, TypeOf):
            assert e.of in operands | results, e
        elif isinstance(e, FunctionalType):
            assert e.ins in operands and e.outs in results, e
    for t in spec.terminators:
        assert t.rstrip("?") in OPS


def test_format_language_errors():
    with pytest.raises(ValueError, match="one anchor"):
        parse_format("$a (`,` $b)? attr-dict")
    with pytest.raises(ValueError, match="bad assembly format"):
        parse_format("$a % attr-dict")
    with pytest.raises(ValueError, match="unclosed"):
        parse_format("$a (`,` $b^ attr-dict")


def test_triton_custom_forms():
    text = print_module(async_ops_module(), locations=False)
    for line in [
        "#smem = #ttg.shared_memory",
        "%0 = tt.call @helper(%n) : (i32) -> i32",
        "%4 = ttg.memdesc_index %3[%c0_i32] : !ttg.memdesc<2x64x64xf16, #shared, #smem, "
        "mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>",
        "%7 = ttg.async_copy_global_to_local %1, %4 mask %6 {contiguity = 8 : i32} : "
        "tensor<64x64x!tt.ptr<f16>, #blocked> -> <64x64xf16, #shared, #smem, mutable>",
        "%8 = ttg.async_copy_global_to_local %1, %4 cacheModifier = cg : "
        "tensor<64x64x!tt.ptr<f16>, #blocked> -> <64x64xf16, #shared, #smem, mutable>",
        "%9 = ttg.async_commit_group tokens %7, %8\n",
        "%10 = ttg.async_wait %9 {num = 0 : i32}\n",
        "%11 = ttg.local_load %4 token %10 : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> "
        "-> tensor<64x64xf16, #blocked>",
        "%12 = ttg.async_wait {num = 0 : i32}\n",
        "%13 = ttng.warp_group_dot %4, %4, %cst_0 {inputPrecision = 0 : i32, isAsync = true} : "
        "!ttg.memdesc<64x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x64xf16, #shared, "
        "#smem, mutable> -> tensor<64x64xf32, #mma>",
        "%16 = tt.gather %15[%cst_1] {axis = 1 : i32} : (tensor<64x64xf16, #mma>, "
        "tensor<64x64xi32, #mma>) -> tensor<64x64xf16, #mma>",
    ]:
        assert line in text
    body = text[text.index("tt.func"):]
    assert '"' not in body  # no generic "op"(...) forms
    every = print_module(every_op_module(), locations=False)
    assert "tt.clampf %cst_2, %cst_2, %cst_2, propagateNan = none : tensor<128xf32>" in every
    # value numbers depend on how many ops the sample module holds: match them as patterns
    assert re.search(r"tt\.load %\d+, %\d+, %cst_2 cacheModifier = ca "
                     r"evictionPolicy = evict_last :", every)
    assert re.search(r"tt\.dot %\d+, %\d+, %cst_4, inputPrecision = tf32 :", every)  # ieee: default
    assert "arith.select %true, %c4_i32, %0 : i32\n" in every


def test_default_valued_attributes_fill_in_when_parsed():
    text = print_module(async_ops_module(), locations=False).replace("isAsync = true",
                                                                     "isAsync = false")
    dot = next(o for o in parse_module(text).walk() if o.name == "ttng.warp_group_dot")
    assert dot.attributes == {"inputPrecision": "tf32", "isAsync": False}
    again = print_module(parse_module(text), locations=False)
    assert "{inputPrecision = 0 : i32} :" in again  # false is the default: elided
    ieee = [o for o in parse_module(print_module(every_op_module())).walk() if o.name == "tt.dot"]
    assert [o.attributes["inputPrecision"] for o in ieee] == ["tf32", "ieee"]


def _module_with(op_: Operation):
    m = parse_module('module {\n  tt.func public @k(%n: i32) attributes {noinline = false} {\n'
                     '    tt.return\n  }\n}\n')
    block = m.regions[0].blocks[0].ops[0].regions[0].blocks[0]
    block.insert(0, op_)
    return m


def test_verifier_reads_attributes_from_specs():
    loc = Location("k.py", 3, 4)
    with pytest.raises(VerificationError, match="'tt.get_program_id' at k.py:3:4: missing "
                                                "'axis' attribute"):
        verify(_module_with(Operation("tt.get_program_id", [], [i32], {}, loc=loc)))
    with pytest.raises(VerificationError, match="attribute 'axis' = 'x' is not a valid axis"):
        verify(_module_with(Operation("tt.get_program_id", [], [i32], {"axis": "x"},
                                      loc=loc)))
    with pytest.raises(VerificationError, match="must have no results, has 1"):
        verify(_module_with(Operation("gpu.barrier", [], [i32], loc=loc)))
    with pytest.raises(VerificationError, match="must have 1 regions, has 0"):
        verify(_module_with(Operation("tt.reduce", [], [], {"axis": 0}, loc=loc)))


def test_unknown_op_names_are_parse_errors_but_generic_forms_parse():
    text = ('module {\n  tt.func public @k(%n: i32) attributes {noinline = false} {\n'
            '    %0 = tt.frobnicate %n : i32\n    tt.return\n  }\n}\n')
    with pytest.raises(IRParseError, match="line 3, column 10: unknown op 'tt.frobnicate'"):
        parse_module(text)
    generic = text.replace("tt.frobnicate %n : i32", '"tt.frobnicate"(%n) : (i32) -> i32')
    assert '"tt.frobnicate"(%n) : (i32) -> i32' in print_module(parse_module(generic))


def test_specs_reject_duplicates_and_give_operand_slots():
    from workbench.ir.dialects.spec import registry
    spec = op("t.x", ["a", "b?", "*rest"])
    assert spec.operand_slots(4) == {"a": [0], "b": [1], "rest": [2, 3]}
    assert OPS["tt.load"].operand_slots(2) == {"ptr": [0], "mask": [1], "other": []}
    with pytest.raises(ValueError, match="defined twice"):
        registry([spec], [spec])


def test_effect_tables_read_from_the_specs_classify_real_ops():
    from workbench.passes import effects
    # ops that must never be merged or removed
    for name in ("tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.print", "tt.assert",
                 "tt.call", "ttg.local_store", "ttg.local_dealloc", "gpu.barrier",
                 "ttg.async_copy_global_to_local", "ttg.async_commit_group", "ttg.async_wait",
                 "ttng.warp_group_dot_wait", "tt.func", "builtin.module"):
        assert name in effects.SIDE_EFFECTS, name
    # ops that read memory: removable when unused, never merged
    assert {"tt.load", "ttg.local_load", "ttg.local_alloc",
            "ttng.warp_group_dot"} <= effects.READS
    assert {"tt.return", "scf.yield", "scf.condition", "tt.reduce.return",
            "tt.scan.return"} <= effects.TERMINATORS
    # pure arithmetic is in none of them
    for name in ("arith.addf", "arith.constant", "tt.splat", "tt.addptr", "math.exp"):
        assert name not in effects.SIDE_EFFECTS | effects.READS | effects.TERMINATORS, name
    pure = {n for n, s in OPS.items() if "pure" in s.traits}
    assert not pure & (effects.SIDE_EFFECTS | effects.READS)
    assert all(not OPS[n].effects for n in pure)


def test_async_token_operands_are_checked():
    from workbench.ir.dialects.spec import VerificationError
    from workbench.ir.verifier import verify
    good = print_module(async_ops_module(), locations=False)
    verify(parse_module(good))
    bad = good.replace("ttg.async_wait %9 {num = 0 : i32}", "ttg.async_wait %2 {num = 0 : i32}")
    assert bad != good
    with pytest.raises(VerificationError, match="takes !ttg.async.token operands, got i1"):
        verify(parse_module(bad))
