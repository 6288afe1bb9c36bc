"""The PTX peephole that fuses ``mul.wide`` + ``add.s64`` into ``mad.wide`` (Triton's LLVM
emits the fused form): exact texts for the cases it takes and the ones it must leave, and on
a compiled matmul, that the K loop's B addresses become ``mad.wide.s32`` as in Triton's PTX
and that ptxas still assembles it."""
import re

import pytest

import workbench as wb
from workbench.backends import nvidia_tools
from workbench.codegen.nvptx.mad_wide import fuse_mad_wide
from workbench.testing import examples as E


def _body(*lines: str) -> str:
    return "\n".join("\t" + ln for ln in lines) + "\n"


def test_a_pair_becomes_one_mad_wide_at_the_adds_place():
    src = _body("mul.wide.s32 \t%rd7, %r3, 2;", "add.s32 \t%r9, %r9, 1;",
                "add.s64 \t%rd8, %rd1, %rd7;", "ld.global.b32 \t%r4, [%rd8];")
    assert fuse_mad_wide(src) == _body("add.s32 \t%r9, %r9, 1;",
                                       "mad.wide.s32 \t%rd8, %r3, 2, %rd1;",
                                       "ld.global.b32 \t%r4, [%rd8];")


def test_either_add_operand_and_unsigned_products():
    src = _body("mul.wide.u32 \t%rd7, %r3, 4;", "add.s64 \t%rd8, %rd7, %rd2;",
                "mul.wide.s32 \t%rd9, %r5, %r6;", "add.s64 \t%rd10, %rd3, %rd9;")
    assert fuse_mad_wide(src) == _body("mad.wide.u32 \t%rd8, %r3, 4, %rd2;",
                                       "mad.wide.s32 \t%rd10, %r5, %r6, %rd3;")


def test_a_group_of_products_then_adds_with_the_addend_defined_between():
    src = _body("mul.wide.s32 \t%rd40, %r133, 2;", "mul.wide.s32 \t%rd41, %r134, 2;",
                "mad.wide.s32 \t%rd6, %r121, 2, %rd33;", "add.s64 \t%rd12, %rd6, %rd40;",
                "add.s64 \t%rd13, %rd6, %rd41;")
    assert fuse_mad_wide(src) == _body("mad.wide.s32 \t%rd6, %r121, 2, %rd33;",
                                       "mad.wide.s32 \t%rd12, %r133, 2, %rd6;",
                                       "mad.wide.s32 \t%rd13, %r134, 2, %rd6;")


@pytest.mark.parametrize("src", [
    # the product read twice (one multiply shared by two addresses, as Triton keeps it)
    _body("mul.wide.s32 \t%rd7, %r3, 2;", "add.s64 \t%rd8, %rd1, %rd7;",
          "add.s64 \t%rd9, %rd2, %rd7;"),
    # the 32-bit factor written between (a loop-carried register updated in place)
    _body("mul.wide.s32 \t%rd7, %r3, 2;", "add.s32 \t%r3, %r3, 64;",
          "add.s64 \t%rd8, %rd1, %rd7;"),
    # a label between: another block
    _body("mul.wide.s32 \t%rd7, %r3, 2;", "$L__BB0_2:", "add.s64 \t%rd8, %rd1, %rd7;"),
    # a branch between
    _body("mul.wide.s32 \t%rd7, %r3, 2;", "@%p1 bra \t$L__BB0_3;", "add.s64 \t%rd8, %rd1, %rd7;"),
    # the product read by something else than an add
    _body("mul.wide.s32 \t%rd7, %r3, 2;", "ld.global.b32 \t%r4, [%rd7];"),
    # a product added to itself
    _body("mul.wide.s32 \t%rd7, %r3, 2;", "add.s64 \t%rd8, %rd7, %rd7;"),
])
def test_pairs_it_must_leave(src):
    assert fuse_mad_wide(src) == src


def test_the_matmul_loop_addresses_match_tritons_form():
    ck = wb.compile(E.matmul_fp16_kernel, "*fp16:16", "*fp16:16", "*fp16:16", "i32:16",
                    "i32:16", "i32:16", target="cuda:90", num_warps=8, num_stages=3, BM=128,
                    BN=256, BK=64, GROUP_M=8)
    ptx = ck.asm["ptx"]
    loop = ptx[ptx.index("wgmma.wait_group.sync.aligned 1;"):]
    loop = loop[:loop.index("bra.uni")] if "bra.uni" in loop else loop
    # the 8 B-tile addresses of one stage: base + sext(offset) * 2, fused as Triton's LLVM does
    assert len(re.findall(r"mad\.wide\.s32\s+%rd\d+, %r\d+, 2, %rd\d+;", loop)) >= 8
    ptxas = nvidia_tools.find_tool("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed (the sass extra)")
    nvidia_tools.assemble(ptx, 90, ptxas)  # raises PtxasError with ptxas's message
