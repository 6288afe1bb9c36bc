"""``cp.async`` destination addresses: one base per thread plus constant register offsets where
the swizzle allows it (Triton's form), checked against every thread's own offsets, and the PTX
and SASS of the benchmarked sm_90 matmul main loop."""
from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import workbench as wb
from workbench.backends import nvidia_tools
from workbench.codegen.nvptx import async_copy
from workbench.codegen.nvptx.async_copy import constant_strides, swizzle_strides, thread_parts
from workbench.codegen.nvptx.smem_access import swizzle_offset_py
from workbench.codegen.nvptx.threads import thread_layout
from workbench.ir.types import TensorType, f16
from workbench.layouts.encodings import BlockedLayout, NVMMASharedLayout, SwizzledSharedLayout
from workbench.testing.examples import matmul_fp16_kernel

NVMMA128 = NVMMASharedLayout(128, False, 16)
# (register layout, shared encoding, shape, group width, anchors expected)
CASES = [
    # the matmul's A tile 128x64 and B tile 64x256 (8 warps, 16-byte copies): the 128-byte
    # swizzle phase is row % 8, which the register bits never change -> one base each
    (BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0)), NVMMA128, (128, 64), 8, 1),
    (BlockedLayout((1, 8), (1, 32), (8, 1), (1, 0)), NVMMA128, (64, 256), 8, 1),
    # 4 warps: a thread's rows are 4 apart, so phases r % 8 and (r + 4) % 8 alternate
    (BlockedLayout((1, 8), (1, 32), (4, 1), (1, 0)), NVMMA128, (64, 256), 8, 2),
    # two rows per thread: the second row's phase differs (row ^ 1), so it needs its own base
    (BlockedLayout((2, 8), (8, 4), (4, 1), (1, 0)), SwizzledSharedLayout(8, 1, 8, (1, 0)),
     (64, 32), 8, 2),
    # 4-element groups of an 8-wide swizzle vector: halves of one vector stay together, and
    # the second row block (32 rows on) is in phase with the first
    (BlockedLayout((1, 8), (8, 4), (4, 1), (1, 0)), SwizzledSharedLayout(8, 2, 4, (1, 0)),
     (64, 32), 4, 1),
]


@pytest.mark.parametrize("layout,enc,shape,v,n_anchors", CASES,
                         ids=[f"{s[0]}x{s[1]}-{type(e).__name__}-{a}" for _, e, s, _, a in CASES])
def test_constant_strides_hold_in_every_thread(layout, enc, shape, v, n_anchors):
    tl = thread_layout(TensorType(shape, f16, layout))
    groups = list(range(0, tl.num_regs, v))
    plan = constant_strides(tl, groups, lambda c: swizzle_offset_py(enc, shape, c))
    assert set(plan) == set(groups)
    assert sum(1 for g, (a, _) in plan.items() if a == g) == n_anchors
    for w in range(8):
        for lane in range(32):
            coords = tl.coords(w, lane)
            for g, (a, delta) in plan.items():
                assert swizzle_offset_py(enc, shape, coords[g]) == \
                    swizzle_offset_py(enc, shape, coords[a]) + delta, (w, lane, g, a)


def test_an_unrelated_offset_gets_its_own_anchor():
    tl = thread_layout(TensorType((64, 256), f16, CASES[1][0]))
    groups = list(range(0, tl.num_regs, 8))
    # a made-up map whose group distance depends on the column: no constant stride
    plan = constant_strides(tl, groups, lambda c: c[0] * (c[1] + 1))
    assert all(a == g for g, (a, _) in plan.items())


def _exhaustive_plan(tl, groups, offset) -> dict:
    """The plan computed thread by thread on Python ints (the definition)."""
    per_thread = [[offset(c) for c in tl.coords(w, ln)] for w in range(1 << len(tl.warp))
                  for ln in range(1 << len(tl.lane))]
    plan: dict = {}
    anchors: list = []
    for g in groups:
        for a in anchors:
            deltas = {offs[g] - offs[a] for offs in per_thread}
            if len(deltas) == 1:
                plan[g] = (a, deltas.pop())
                break
        else:
            anchors.append(g)
            plan[g] = (g, 0)
    return plan


def _random_case(rng):
    """A random 2-D blocked register layout, a shared encoding and a tile it covers."""
    rank_bits = [int(x) for x in rng.integers(0, 4, size=2)]
    spt = tuple(1 << b for b in rank_bits)
    t0 = 1 << int(rng.integers(0, 6))
    tpw = (t0, 32 // t0)
    w0 = 1 << int(rng.integers(0, 4))
    wpc = (w0, (1 << int(rng.integers(0, 2))))
    order = (1, 0) if rng.random() < 0.7 else (0, 1)
    layout = BlockedLayout(spt, tpw, wpc, order)
    shape = tuple(int(max(s * t * w, 8) << int(rng.integers(0, 2)))
                  for s, t, w in zip(spt, tpw, wpc, strict=True))
    if rng.random() < 0.5:
        enc = NVMMASharedLayout(int(rng.choice([0, 32, 64, 128])), bool(rng.random() < 0.3), 16)
    else:
        vec = 1 << int(rng.integers(0, 4))
        per_phase = 1 << int(rng.integers(0, 3))
        max_phase = 1 << int(rng.integers(0, 4))
        enc = SwizzledSharedLayout(vec, per_phase, max_phase, order)
    return layout, enc, shape


def test_cached_strides_equal_the_exhaustive_ones_on_random_layouts():
    rng = np.random.default_rng()
    async_copy._STRIDES.clear()
    checked = 0
    while checked < 25:
        layout, enc, shape = _random_case(rng)
        tl = thread_layout(TensorType(shape, f16, layout))
        v = 1 << int(rng.integers(0, 4))
        groups = tuple(range(0, tl.num_regs, min(v, tl.num_regs)))
        want = _exhaustive_plan(tl, groups, functools.partial(swizzle_offset_py, enc, shape))
        assert swizzle_strides(tl, groups, enc, shape) == want, (layout, enc, shape, v)
        assert (tl, groups, enc, shape) in async_copy._STRIDES
        assert swizzle_strides(tl, groups, enc, shape) == want  # from the cache
        checked += 1


def test_thread_parts_are_the_per_thread_parts():
    rng = np.random.default_rng()
    for _ in range(10):
        layout, _, shape = _random_case(rng)
        tl = thread_layout(TensorType(shape, f16, layout))
        parts = thread_parts(tl)
        lanes = 1 << len(tl.lane)
        assert parts.shape == (lanes << len(tl.warp), 2)
        for t in rng.integers(0, parts.shape[0], size=20):
            assert tuple(parts[t]) == tl.thread_part(int(t) // lanes, int(t) % lanes)


def _loop(ptx: str) -> str:
    """The K loop of a single-loop kernel: from its label to the backward branch."""
    m = re.search(r"^(\$L__BB\d+_\d+):\n(.*?)^\s*@%p\d+ bra\s+\1;", ptx, re.M | re.S)
    assert m, "no loop found"
    return m.group(2)


def test_matmul_loop_copies_add_constants_to_one_base_ptx():
    c = wb.compile(matmul_fp16_kernel, "*fp16:16", "*fp16:16", "*fp16:16", "i32:16",
                   "i32:16", "i32:16", target="cuda:90", num_warps=8, num_stages=3, BM=128,
                   BN=256, BK=64, GROUP_M=8)
    body = _loop(c.asm["ptx"])
    dsts = re.findall(r"cp\.async\.cg\.shared\.global \[(%r\d+)\]", body)
    assert len(dsts) == 12  # 4 A copies, 8 B copies of 16 bytes per thread
    imm = dict(re.findall(r"add\.s32\s+(%r\d+), (%r\d+), -?\d+;", body))
    regs = dict((d, (x, y)) for d, x, y in
                re.findall(r"add\.s32\s+(%r\d+), (%r\d+), (%r\d+);", body))
    smem = re.search(r"mov\.b32\s+(%r\d+), global_smem;", c.asm["ptx"]).group(1)
    roots = set()
    for d in dsts:
        while d in imm:  # a common address plus an immediate: one immediate offset in SASS
            d = imm[d]
        roots.add(d)
        # Triton's form: the slot's start (global_smem + the stage's offset, the same for
        # every thread) first, then the thread's loop-invariant offset
        start, thread = regs[d]
        leaves, todo = set(), [start]
        while todo:  # the registers the start is a sum of, within the loop
            r = todo.pop()
            if r in regs:
                todo.extend(regs[r])
            else:
                leaves.add(r)
        assert start in regs and smem in leaves, (d, start, leaves)
        assert thread not in regs and thread not in imm  # defined outside the loop
    assert len(roots) == 2, roots  # one per operand's slot; the rest add immediates
    if nvidia_tools.find_tool("ptxas") and nvidia_tools.find_tool("nvdisasm"):
        sass = str(c.asm["sass"])
        imm = re.findall(r"LDGSTS\.E\.BYPASS\.128 \[R\d+\+0x[0-9a-f]+\]", sass)
        assert len(imm) >= 8 * 3  # the loop's and both prologue stages' copies
        assert c.metadata.n_regs <= 195 and c.metadata.n_spills == 0


#: benchmarks/gpu.py's matmul tile configurations (BM, BN, BK, warps, stages)
GPU_CONFIGS = [(128, 256, 64, 8, 3), (128, 128, 64, 8, 3), (128, 128, 32, 4, 4),
               (128, 256, 32, 8, 3)]


def _gpu_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    return torch


def _check(torch, c, a, b):
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    got = c.double().cpu().numpy()
    assert not np.isnan(got).any()
    tol = 2e-2 if c.dtype == torch.bfloat16 else 4e-3
    assert np.abs(got - want).max() <= tol * np.abs(want).max()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("cfg", GPU_CONFIGS, ids=[",".join(map(str, c)) for c in GPU_CONFIGS])
def test_benchmarked_matmul_gpu(dtype, cfg):
    from workbench.testing.examples import matmul_typed_kernel
    torch = _gpu_torch()
    bm, bn, bk, nw, st = cfg
    m, n, k = 3 * bm, 2 * bn, 5 * bk  # more K steps than stages; a 3x2 grid of tiles
    dt = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda", dtype=dt)
    b = torch.randn(k, n, device="cuda", dtype=dt)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    matmul_typed_kernel[((m // bm) * (n // bn),)](a, b, c, m, n, k, BM=bm, BN=bn, BK=bk,
                                                   GROUP_M=8, num_warps=nw, num_stages=st)
    torch.cuda.synchronize()
    _check(torch, c, a, b)


@pytest.mark.gpu
@pytest.mark.parametrize("cfg", GPU_CONFIGS[:3], ids=[",".join(map(str, c))
                                                       for c in GPU_CONFIGS[:3]])
@pytest.mark.parametrize("k", [448, 1000])  # a whole number of K steps, and a masked tail
def test_tutorial_matmul_gpu(cfg, k):
    from workbench.testing.examples import matmul_tutorial_kernel
    torch = _gpu_torch()
    bm, bn, bk, nw, st = cfg
    m, n = 2 * bm, 3 * bn
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    matmul_tutorial_kernel[((m // bm) * (n // bn),)](
        a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
        BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, num_warps=nw, num_stages=st)
    torch.cuda.synchronize()
    _check(torch, c, a, b)
