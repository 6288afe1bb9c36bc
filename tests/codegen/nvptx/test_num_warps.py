"""The warps per program reach the NVPTX code generator from one place, the module's
``"ttg.num-warps"`` attribute: the kernel's ``.reqntid``, the lowered kernel's ``num_warps``
and the CUDA backend's metadata all agree with it. No GPU needed."""
from __future__ import annotations

import pytest

import workbench as wb
import workbench.language as tl
from workbench.codegen.nvptx import compile_ttgir, lower_module, samples
from workbench.errors import UnsupportedError


@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_reqntid_follows_the_module_attribute(num_warps):
    out = compile_ttgir(samples.softmax(block=256, num_warps=num_warps), arch=90)
    assert out.num_warps == num_warps
    assert f".reqntid {32 * num_warps}" in out.ptx


def test_module_without_num_warps_is_rejected():
    mod = samples.vector_add()
    del mod.attributes["ttg.num-warps"]
    with pytest.raises(UnsupportedError, match="ttg.num-warps"):
        lower_module(mod, arch=90)


@wb.jit
def _scalar_store(p, x):
    tl.store(p, x + 1)


@pytest.mark.parametrize("num_warps", [2, 8])
def test_scalar_kernel_gets_the_option_through_the_module(num_warps):
    """A kernel without tensors needs no layouts but still becomes ttgir, with the module
    attributes Triton gives it, so the option's warps reach the code generator."""
    c = wb.compile(_scalar_store, "*fp32", "fp32", target="cuda:90", num_warps=num_warps)
    assert f'"ttg.num-warps" = {num_warps} : i32' in c.asm["ttgir"]
    assert c.metadata.num_warps == num_warps
    assert f".reqntid {32 * num_warps}" in c.asm["ptx"]
