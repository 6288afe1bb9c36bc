"""Instruction help: every PTX opcode the CUDA backend emits has an entry, and the parsing of
PTX and SASS lines into opcodes."""
from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

import workbench as wb
from workbench.testing import examples as ex
from workbench.viz.isa_help import describe, help_table, ptx_opcode, sass_opcode
from workbench.viz.stage_data import shared_bytes

NVPTX = Path(wb.__file__).parent / "codegen" / "nvptx"
F32, F16, I32 = "*fp32:16", "*fp16:16", "i32"

# (kernel, signature, constexprs, archs): the example kernels, covering elementwise code,
# reductions, loops, mma.sync, wgmma and cp.async pipelines
CASES = [
    (ex.add_kernel, (F32, F32, F32, I32), {"BLOCK_SIZE": 1024}, ("cuda:80", "cuda:90")),
    (ex.softmax_kernel, (F32, F32, I32, I32, I32), {"BLOCK_SIZE": 1024}, ("cuda:90",)),
    (ex.layer_norm_fwd_kernel, (F32, F32, F32, F32, F32, F32, I32, I32, "fp32"),
     {"BLOCK_SIZE": 256}, ("cuda:80",)),
    (ex.matmul_fp16_kernel, (F16, F16, F16, I32, I32, I32),
     {"BM": 64, "BN": 64, "BK": 32, "GROUP_M": 8}, ("cuda:80", "cuda:90")),
    (ex.attention_fwd_kernel, (F16, F16, F16, F16, "fp32", I32),
     {"D": 64, "BM": 64, "BN": 64}, ("cuda:90",)),
]


def _opcodes(ptx: str) -> set[str]:
    return {op for op in map(ptx_opcode, ptx.splitlines()) if op}


@functools.cache
def _compiled(case: int, arch: str):
    """One compilation per (case, arch) for the whole module (the SASS test reuses the PTX
    test's compilations and only adds ptxas and nvdisasm)."""
    kernel, sig, consts, _ = CASES[case]
    return wb.compile(kernel, *sig, target=arch, **consts)


_IDS = [c[0].__name__ for c in CASES]


@pytest.mark.parametrize("case", range(len(CASES)), ids=_IDS)
def test_every_emitted_ptx_opcode_has_help(case):
    for arch in CASES[case][3]:
        ops = _opcodes(_compiled(case, arch).asm["ptx"])
        assert len(ops) >= 10, ops
        missing = sorted(op for op in ops if describe("ptx", op) is None)
        assert missing == [], f"{_IDS[case]} on {arch}: no help for {missing}"


@pytest.mark.parametrize("case", [k for k, c in enumerate(CASES) if "cuda:90" in c[3]],
                         ids=[c[0].__name__ for c in CASES if "cuda:90" in c[3]])
def test_every_sass_opcode_on_sm90_has_help(case):
    """The SASS nvdisasm prints for the sm_90 compilations (ptxas's own instruction choice:
    uniform-datapath U* forms, predicate packing, sm_90's VIADD/VIMNMX, HGMMA, ...)."""
    compiled = _compiled(case, "cuda:90")
    if "sass" not in compiled.asm:
        pytest.skip("ptxas or nvdisasm is not installed: no SASS stage "
                    "(pip install 'tile-workbench[sass]')")
    ops = {op for op in map(sass_opcode, compiled.asm["sass"].splitlines()) if op}
    assert len(ops) >= 10, ops
    missing = sorted(op for op in ops if describe("sass", op) is None)
    assert missing == [], f"{_IDS[case]} on sm_90: no SASS help for {missing}"
    # a uniform-datapath opcode is explained as the plain one plus the uniform note
    for op in ops:
        if op.startswith("U") and op.split(".")[0][1:] in ("IADD3", "IMAD", "SHF", "LOP3"):
            assert "Uniform datapath" in describe("sass", op).summary, op


# dotted names in codegen/nvptx's strings that are not PTX: MLIR op names the lowering
# dispatches on, NVVM intrinsics, special registers, basic-block labels
NOT_PTX = {"tt", "ttg", "ttng", "arith", "scf", "math", "llvm", "nvvm", "gpu", "cf", "tid",
           "ctaid", "ntid", "nctaid", "laneid", "print", "while", "for", "if", "atomic",
           "allocation", "workbench", "amdgpu", "ub"}


def test_every_inline_asm_opcode_of_the_backend_has_help():
    """Every PTX-looking opcode in the strings of workbench/codegen/nvptx (its inline asm)."""
    found = {}
    for path in NVPTX.glob("*.py"):
        for m in re.finditer(r'f?"((?:@!?[%$]?[\w{}]+\s+)?[a-z][a-z0-9]*(?:\.[\w:{}]+)+)',
                             path.read_text()):
            op = ptx_opcode(m.group(1))
            if op and op.split(".")[0] not in NOT_PTX:
                found.setdefault(op, path.name)
    assert {"cp.async.bulk.commit_group", "wgmma.fence.sync.aligned"} <= set(found)
    missing = sorted(f"{op} ({where})" for op, where in found.items()
                     if describe("ptx", op) is None)
    assert missing == [], missing


def test_help_explains_modifiers():
    h = describe("ptx", "ld.global.v4.b32")
    assert h.base == "ld" and "PTX ISA" in h.ref
    mods = dict(h.modifiers)
    assert "global memory" in mods[".global"] and "4 elements" in mods[".v4"]
    assert describe("ptx", "cp.async.cg.shared.global").base == "cp.async"
    assert describe("ptx", "frobnicate.b32") is None


def test_opcode_parsing():
    assert ptx_opcode("\t@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];") == \
        "ld.global.v4.b32"
    assert ptx_opcode("\t@!%p2 bra $L__BB0_2;") == "bra"
    for not_code in (".reg .b32 %r<4>;", "$L__BB0_1:", "// comment", "{", ")", ""):
        assert ptx_opcode(not_code) is None, not_code
    assert sass_opcode("        /*0040*/   @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;") == \
        "LDG.E.128"
    assert sass_opcode("\t//## File \"x.py\", line 3") is None
    keys, table = help_table("sass", ["        /*0000*/   IMAD.WIDE.U32 R2, R0, 0x4, R2 ;"])
    assert keys == ["IMAD.WIDE.U32"] and "64-bit result" in dict(
        table["IMAD.WIDE.U32"]["modifiers"])["WIDE"]


@pytest.mark.parametrize("op,line,expected", [
    ("ld.shared.v4.b32", "ld.shared.v4.b32 {%r1,%r2,%r3,%r4}, [%r5];", 16),
    ("st.shared.b8", "st.shared.b8 [%r1], %rs1;", 1),
    ("ld.shared.v2.b16", "", 4),
    ("cp.async.cg.shared.global", "cp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x8, "
     "%r2;", 8),
    ("cp.async.cg.shared.global", "cp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 16, "
     "%r2;", 16),
    ("ld.global.v4.b32", "", 0),
])
def test_shared_bytes(op, line, expected):
    assert shared_bytes(op, line) == expected
