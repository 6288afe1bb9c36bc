"""Which dots are connected (``workbench/passes/dot_slices.py``, Triton 3.6
``warpsPerTileV2``'s ``getSlice``) and what it decides: two accumulations yielded by one loop
take the chained-dot warps on sm_80; on sm_90 a tile read by two wgmma (one through
``memdesc_trans``) is pipelined once, both dots reading its slot."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.runtime.aot import compile as wb_compile

rng = np.random.default_rng()


@wb.jit
def two_acc(a_ptr, b_ptr, x_ptr, o_ptr, N, BM: tl.constexpr, BN: tl.constexpr,
            D: tl.constexpr, TRANS: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    a = tl.load(a_ptr + rm[:, None] * D + rd[None, :])
    b = tl.load(b_ptr + rm[:, None] * BN + rn[None, :])
    x_ptrs = x_ptr + rd[:, None] * BN + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    acc2 = tl.zeros((BM, D), dtype=tl.float32)
    for _ in range(0, N, BN):
        x = tl.load(x_ptrs)
        acc += tl.dot(a, x)
        if TRANS:
            acc2 += tl.dot(b, tl.trans(x))
        x_ptrs += D * BN
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], acc)
    tl.store(o_ptr + BM * BN + rm[:, None] * D + rd[None, :], acc2)


def _mma_warps(text: str) -> set:
    return set(re.findall(r"#ttg\.nvidia_mma<\{versionMajor = 2, versionMinor = 0, "
                          r"warpsPerCTA = \[(\d+), (\d+)\]", text))


def test_two_accumulations_of_one_loop_are_chained_on_sm80():
    warps = int(rng.choice([4, 8]))
    text = wb_compile(two_acc, "*fp16:16", "*fp16:16", "*fp16:16", "*fp32:16", "i32:16",
                      target="cuda:80", num_warps=warps, BM=64, BN=64, D=64,
                      TRANS=True).asm["ttgir"]
    assert _mma_warps(text) == {(str(warps), "1")}
    # one dot alone keeps the balanced warps
    text = wb_compile(two_acc, "*fp16:16", "*fp16:16", "*fp16:16", "*fp32:16", "i32:16",
                      target="cuda:80", num_warps=4, BM=64, BN=64, D=64,
                      TRANS=False).asm["ttgir"]
    assert _mma_warps(text) == {("2", "2")}


def test_tile_read_by_two_wgmma_is_one_pipelined_buffer():
    stages = int(rng.integers(2, 5))
    text = wb_compile(two_acc, "*fp16:16", "*fp16:16", "*fp16:16", "*fp32:16", "i32:16",
                      target="cuda:90", num_warps=4, num_stages=stages, BM=64, BN=64, D=64,
                      TRANS=True).asm["ttgir"]
    loop = text.split("scf.for", 1)[1].split("scf.yield", 1)[0]
    assert text.count(f"!ttg.memdesc<{stages}x64x64xf16") >= 1
    assert "local_alloc" not in loop and " tt.load " not in loop
    slot = re.search(r"(%\w+) = ttg\.memdesc_index %\w+\[%\w+\] : !ttg\.memdesc<"
                     rf"{stages}x64x64xf16", loop)
    assert slot
    assert re.search(rf"ttg\.memdesc_trans {slot.group(1)} .*mutable> -> .*mutable>", loop)
    assert len(re.findall(rf"ttng\.warp_group_dot %\w+, {slot.group(1)},", loop)) == 1


def test_tile_read_straight_and_transposed_is_one_buffer_on_sm80():
    stages = int(rng.integers(2, 5))
    text = wb_compile(two_acc, "*fp16:16", "*fp16:16", "*fp16:16", "*fp32:16", "i32:16",
                      target="cuda:80", num_warps=4, num_stages=stages, BM=64, BN=64, D=64,
                      TRANS=True).asm["ttgir"]
    loop = text.split("scf.for", 1)[1].split("scf.yield", 1)[0]
    assert len(re.findall(rf"= ttg\.local_alloc .*!ttg\.memdesc<{stages - 1}x64x64xf16",
                          text)) == 1
    assert "local_alloc" not in loop and " tt.load " not in loop
    reads = re.findall(r"ttg\.local_load (%\w+) token .* -> tensor<64x64xf16, (#[^>]+)", loop)
    assert len(reads) == 2 and len({slot for slot, _ in reads}) == 1  # one slot, read twice
    assert sorted(enc.split("<")[0] for _, enc in reads) == ["#linear", "#ttg.dot_op"]
    assert re.search(r"tt\.trans %\w+ .*#linear> -> tensor<64x64xf16, #ttg\.dot_op<\{opIdx = 1",
                     loop)


@pytest.mark.gpu
def test_two_accumulations_on_the_gpu():
    from workbench.backends import cuda_driver
    from workbench.backends.cuda_driver import DeviceArray
    n = 64 * int(rng.integers(1, 5))
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    x = rng.standard_normal((n // 64, 64, 64)).astype(np.float16)
    out = DeviceArray.from_numpy(np.full(2 * 64 * 64, np.nan, np.float32))
    two_acc[(1,)](DeviceArray.from_numpy(a), DeviceArray.from_numpy(b), DeviceArray.from_numpy(x),
                  out, n, BM=64, BN=64, D=64, TRANS=True)
    cuda_driver.synchronize()
    f = np.float32
    acc = sum(a.astype(f) @ xi.astype(f) for xi in x)
    acc2 = sum(b.astype(f) @ xi.astype(f).T for xi in x)
    got = out.to_numpy()
    np.testing.assert_allclose(got[:4096].reshape(64, 64), acc, rtol=1e-2, atol=5e-2)
    np.testing.assert_allclose(got[4096:].reshape(64, 64), acc2, rtol=1e-2, atol=5e-2)
