"""Elementwise registers equal by constancy share one value (Triton's maybeDeduplicate):
the register map against every thread's coordinates, the tutorial matmul's K-tail masks in
PTX, and on the GPU block-constant compares against numpy."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.codegen.nvptx.dedup import representatives
from workbench.codegen.nvptx.threads import thread_layout
from workbench.ir.types import TensorType, f16
from workbench.layouts.encodings import BlockedLayout
from workbench.testing.examples import matmul_tutorial_kernel

LAYOUTS = [
    (BlockedLayout((1, 8), (1, 32), (8, 1), (1, 0)), (64, 256)),  # the 8-warp B tile
    (BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0)), (128, 64)),   # the A tile
    (BlockedLayout((2, 4), (8, 4), (2, 2), (1, 0)), (64, 64)),
    (BlockedLayout((1, 1), (32, 1), (1, 4), (0, 1)), (64, 32)),
]


@pytest.mark.parametrize("layout,shape", LAYOUTS, ids=[str(s) for _, s in LAYOUTS])
@pytest.mark.parametrize("constancy", [(16, 1), (1, 8), (16, 256), (12, 1), (64, 64)])
def test_shared_registers_lie_in_one_constant_block(layout, shape, constancy):
    tly = thread_layout(TensorType(shape, f16, layout))
    constancy = tuple(min(c, s) for c, s in zip(constancy, shape, strict=True))
    reps = representatives(tly.regs, constancy)
    assert all(reps[r] <= r for r in range(len(reps)))
    p2 = [c & -c for c in constancy]
    for w in range(1 << len(tly.warp)):
        for lane in range(32):
            coords = tly.coords(w, lane)
            for r, s in enumerate(reps):
                # same aligned block of the power-of-two part of the constancy in every dim
                assert all(a // p == b // p for a, b, p in zip(coords[r], coords[s], p2,
                                                               strict=True)), (w, lane, r, s)
    # with constancy 1 everywhere every register computes its own value
    assert representatives(tly.regs, (1, 1)) == list(range(len(tly.regs)))


def test_tutorial_matmul_masks_one_compare_per_16_rows_ptx():
    c = wb.compile(matmul_tutorial_kernel, "*fp16:16", "*fp16:16", "*fp16:16", "i32:16",
                   "i32:16", "i32:16", "i32:16", 1, "i32:16", 1, "i32:16", 1,
                   target="cuda:90", num_warps=8, num_stages=3, BLOCK_SIZE_M=128,
                   BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8)
    ptx = c.asm["ptx"]
    m = re.search(r"^(\$L__BB\d+_\d+):\n(.*?)^\s*@%p\d+ bra\s+\1;", ptx, re.M | re.S)
    assert m
    # K - k * 64 against the A columns (one compare: 8 contiguous columns per copy) and the
    # B rows (a thread copies rows w, w + 8, ..., w + 56; K is a multiple of 16, so rows
    # 16 apart share a mask): 1 + 4 compares, as Triton 3.6 emits (8 B rows before)
    tails = re.findall(r"setp\.lt\.s32\s+%p\d+, %r\d+, (%r\d+);", m.group(2))
    counts = {r: tails.count(r) for r in set(tails)}
    assert sorted(counts.values())[-1] == 5, tails


@wb.jit
def block_mask_k(out_ptr, lim, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)[:, None]
    cols = tl.arange(0, C)[None, :]
    m = (rows < lim) & (cols < lim + 16)  # lim % 16 == 0: constant over 16-row blocks
    tl.store(out_ptr + rows * C + cols, tl.where(m, rows * 1000 + cols, -1))


@pytest.mark.gpu
@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("lim", [16, 48, 96])
def test_block_constant_compares_gpu(num_warps, lim):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    r, c = 128, 64
    out = torch.full((r, c), 7, device="cuda", dtype=torch.int32)
    block_mask_k[(1,)](out, lim, R=r, C=c, num_warps=num_warps)
    torch.cuda.synchronize()
    rows, cols = np.mgrid[0:r, 0:c]
    want = np.where((rows < lim) & (cols < lim + 16), rows * 1000 + cols, -1)
    np.testing.assert_array_equal(out.cpu().numpy(), want)
