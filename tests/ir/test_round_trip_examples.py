"""Round trip of the example kernels' IR (workbench/testing/examples.py) for cpu, cuda:80 and
cuda:90: the printed ttir and ttgir parse, verify and print back to the same text, and
every op prints in its custom form (only tt.reduce and tt.scan are generic, as in Triton)."""
from __future__ import annotations

import re

import pytest

import workbench as wb
from tests.ir.round_trip import assert_round_trip
from workbench.ir.parser import parse_module
from workbench.ir.verifier import verify
from workbench.testing import examples as ex

F32, F16 = "*fp32:16", "*fp16:16"
# small tiles (the ops and the syntax are those of the benchmark sizes; code generation is
# quicker)
CASES = {
    "add": (ex.add_kernel, (F32,) * 3 + ("i32:16",), dict(BLOCK_SIZE=1024)),
    "triad": (ex.triad_kernel, (F32,) * 3 + ("fp32", "i32:16"), dict(BLOCK_SIZE=1024)),
    "softmax": (ex.softmax_kernel, (F32, F32, "i32", "i32", "i32"), dict(BLOCK_SIZE=1024)),
    "softmax_fp16": (ex.softmax_fp32_acc_kernel, (F16, F16, "i32", "i32", "i32"),
                     dict(BLOCK_SIZE=1024)),
    "layer_norm_fwd": (ex.layer_norm_fwd_kernel, (F32,) * 6 + ("i32", "i32", "fp32"),
                       dict(BLOCK_SIZE=1024)),
    "layer_norm_row": (ex.layer_norm_row_kernel, (F32,) * 4 + ("i32", "i32", "fp32"),
                       dict(BLOCK_SIZE=1024)),
    "matmul": (ex.matmul_kernel, (F32,) * 3 + ("i32",) * 3, dict(BM=32, BN=32, BK=16,
                                                                 GROUP_M=8)),
    "matmul_fp16": (ex.matmul_fp16_kernel, (F16,) * 3 + ("i32:16",) * 3,
                    dict(BM=64, BN=64, BK=32, GROUP_M=8)),
    "matmul_tutorial": (ex.matmul_tutorial_kernel, (F16,) * 3 + ("i32:16",) * 9,
                        dict(BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32,
                             GROUP_SIZE_M=8)),
    "attention": (ex.attention_fwd_kernel, (F16,) * 4 + ("fp32", "i32:16"),
                  dict(D=32, BM=64, BN=32)),
}
GENERIC = re.compile(r'^\s*(?:%[\w#:, %]+= )?"([\w.]+)"\(', re.M)


@pytest.mark.parametrize("target", ["cpu", "cuda:80", "cuda:90"])
@pytest.mark.parametrize("name", list(CASES))
def test_example_ir_round_trips(name, target):
    fn, sig, consts = CASES[name]
    kernel = wb.compile(wb.jit(fn.fn), *sig, target=target, **consts)
    stages = [s for s in ("ttir", "ttgir") if s in kernel.asm]
    assert stages == (["ttir"] if target == "cpu" else ["ttir", "ttgir"])
    for stage in stages:
        text = kernel.asm[stage]
        assert_round_trip(text, f"{stage} of {name} for {target}")
        assert_round_trip(re.sub(r" loc\(#loc\d*\)|^#loc.*\n", "", text, flags=re.M),
                          f"{stage} of {name} for {target} without locations")
        verify(parse_module(text))
        assert set(GENERIC.findall(text)) <= {"tt.reduce", "tt.scan"}
        if "!ttg.memdesc" in text:
            assert "#smem = #ttg.shared_memory\n" in text
