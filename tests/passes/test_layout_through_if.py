"""tritongpu-remove-layout-conversions through ``scf.if`` (Triton 3.6
``RemoveLayoutConversions.cpp``, ``LayoutPropagation::propagateToUsers``): a branch's yield
gives the ``scf.if`` result its operand's layout, the other branch converts its own, so a
value that goes through an ``if`` keeps the coalesced layout of the loads it came from."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.runtime.aot import compile as wb_compile

rng = np.random.default_rng()


@wb.jit
def scaled_accumulate(x_ptr, acc_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(x_ptr + offs, mask=m, other=0.0) * 2.0
    if tl.load(flag_ptr) != 0:
        y += tl.load(acc_ptr + offs, mask=m, other=0.0)
    tl.store(acc_ptr + offs, y, mask=m)


@wb.jit
def choose_rows(x_ptr, out_ptr, flag, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + offs)
    if flag > 0:
        y = x * 3.0
    else:
        y = tl.zeros((BM, BN), dtype=tl.float32)
    tl.store(out_ptr + offs, y)


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_if_result_takes_the_loaded_layout(target):
    warps = int(rng.choice([4, 8]))
    text = wb_compile(scaled_accumulate, "*fp32:16", "*fp32:16", "*i32:16", "i32:16",
                      target=target, num_warps=warps, BLOCK=1024).asm["ttgir"]
    assert "ttg.convert_layout" not in text
    layouts = re.findall(r"^#blocked\d* = .*$", text, re.M)
    assert len(layouts) == 1 and "sizePerThread = [4]" in layouts[0]
    assert re.search(r"= scf\.if .* -> \(tensor<1024xf32, #blocked>\)", text)


def test_branch_with_a_constant_is_converted_not_the_result():
    bm, bn = int(rng.choice([16, 32])), int(rng.choice([32, 64]))
    text = wb_compile(choose_rows, "*fp32:16", "*fp32:16", "i32", target="cuda:80",
                      BM=bm, BN=bn).asm["ttgir"]
    assert text.count("ttg.convert_layout") == 0
    assert len(re.findall(r"^#blocked\d* = ", text, re.M)) == 1


@pytest.mark.gpu
def test_if_accumulate_on_the_gpu():
    from workbench.backends import cuda_driver
    from workbench.backends.cuda_driver import DeviceArray
    n = int(rng.integers(1000, 5000))
    x = rng.standard_normal(n).astype(np.float32)
    acc0 = rng.standard_normal(n).astype(np.float32)
    for flag in (0, 1):
        acc = DeviceArray.from_numpy(acc0.copy())
        scaled_accumulate[(-(-n // 1024),)](DeviceArray.from_numpy(x), acc,
                                            DeviceArray.from_numpy(np.array([flag], np.int32)),
                                            n, BLOCK=1024)
        cuda_driver.synchronize()
        np.testing.assert_allclose(acc.to_numpy(), 2 * x + (acc0 if flag else 0), rtol=1e-6)
