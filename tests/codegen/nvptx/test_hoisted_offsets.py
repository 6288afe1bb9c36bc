"""The PTX peephole that writes a widened offset hoisted out of a loop as ``cvt`` + ``shl``
(Triton's LLVM's form) instead of ``mul.wide``: exact texts for the cases it takes and the
ones it must leave, and on the tutorial-form matmul, that the K loop's B offsets take that
form as in Triton's PTX and that ptxas still assembles it."""
import re

import pytest

import workbench as wb
from workbench.backends import nvidia_tools
from workbench.codegen.nvptx.hoisted_offsets import split_hoisted_mul_wide
from workbench.testing import examples as E


def _body(*lines: str) -> str:
    return "\n".join(ln if ln.endswith(":") else "\t" + ln for ln in lines) + "\n"


def test_an_offset_read_only_in_the_loop_becomes_cvt_and_shl():
    src = _body("mul.wide.s32 \t%rd5, %r104, 2;", "mul.wide.u32 \t%rd6, %r105, 8;",
                "$L__BB0_2:", "add.s64 \t%rd70, %rd117, %rd5;", "add.s64 \t%rd71, %rd6, %rd117;",
                "@%p22 bra \t$L__BB0_2;")
    assert split_hoisted_mul_wide(src) == _body(
        "cvt.s64.s32 \t%rd5, %r104;", "shl.b64 \t%rd5, %rd5, 1;",
        "cvt.u64.u32 \t%rd6, %r105;", "shl.b64 \t%rd6, %rd6, 3;",
        "$L__BB0_2:", "add.s64 \t%rd70, %rd117, %rd5;", "add.s64 \t%rd71, %rd6, %rd117;",
        "@%p22 bra \t$L__BB0_2;")


def test_a_branch_also_ends_the_block():
    src = _body("mul.wide.s32 \t%rd5, %r1, 4;", "@%p1 bra \t$L__BB0_3;",
                "add.s64 \t%rd6, %rd2, %rd5;")
    assert split_hoisted_mul_wide(src) == _body(
        "cvt.s64.s32 \t%rd5, %r1;", "shl.b64 \t%rd5, %rd5, 2;", "@%p1 bra \t$L__BB0_3;",
        "add.s64 \t%rd6, %rd2, %rd5;")


@pytest.mark.parametrize("src", [
    # read in its own block (the loop body itself, or left to mad.wide fusion)
    _body("$L__BB0_2:", "mul.wide.s32 \t%rd5, %r1, 2;", "add.s64 \t%rd6, %rd2, %rd5;",
          "@%p1 bra \t$L__BB0_2;"),
    # read in its own block and in another
    _body("mul.wide.s32 \t%rd5, %r1, 2;", "add.s64 \t%rd6, %rd2, %rd5;", "$L__BB0_2:",
          "add.s64 \t%rd7, %rd3, %rd5;"),
    # not a power of two, or a factor of 1, or a register factor
    _body("mul.wide.s32 \t%rd5, %r1, 6;", "$L__BB0_2:", "add.s64 \t%rd6, %rd2, %rd5;"),
    _body("mul.wide.s32 \t%rd5, %r1, 1;", "$L__BB0_2:", "add.s64 \t%rd6, %rd2, %rd5;"),
    _body("mul.wide.s32 \t%rd5, %r1, %r2;", "$L__BB0_2:", "add.s64 \t%rd6, %rd2, %rd5;"),
    # never read
    _body("mul.wide.s32 \t%rd5, %r1, 2;", "$L__BB0_2:", "ret;"),
])
def test_products_it_must_leave(src):
    assert split_hoisted_mul_wide(src) == src


def test_the_tutorial_matmul_loop_offsets_match_tritons_form():
    sig = ["*fp16:16"] * 3 + ["i32:16"] * 3 + ["i32:16", "i32:1", "i32:16", "i32:1",
                                                "i32:16", "i32:1"]
    ck = wb.compile(E.matmul_tutorial_kernel, *sig, target="cuda:90", num_warps=8,
                    num_stages=3, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64,
                    GROUP_SIZE_M=8)
    ptx = ck.asm["ptx"]
    head, body = ptx.split("$L__BB0_2:", 1)
    # the 8 B-tile offsets (sext(offset) * 2) are made before the loop and added in it
    pairs = re.findall(r"cvt\.s64\.s32 \t(%rd\d+), %r\d+;\n\tshl\.b64 \t\1, \1, 1;", head)
    assert len(pairs) >= 8
    added = [r for r in pairs
             if re.search(rf"add\.s64\s+%rd\d+, (%rd\d+, {r}|{r}, %rd\d+);", body)]
    assert len(added) >= 8
    ptxas = nvidia_tools.find_tool("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed (the sass extra)")
    nvidia_tools.assemble(ptx, 90, ptxas)  # raises PtxasError with ptxas's message
