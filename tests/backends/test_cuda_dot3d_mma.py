"""Batched (3-D) ``tl.dot`` on the CUDA backend takes MMA v2 as in Triton 3.6:
``#ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [W, 1, 1], instrShape = [1, 16, 8]}>``
(every warp along the batch), operands staged through rank-3 ``#ttg.swizzled_shared``
buffers, one ``mma.sync`` per (batch, M tile, N tile, K step), also on ``cuda:90`` (Triton's
MMA v3 falls back to v2 for batched dots). Before, these dots took the FMA path, whose
unrolled code for Triton's ``test_dot3d[8-1-64-64-64-32-32-...]`` ran ptxas past two
minutes. Compile-only checks here (ptxas assembles where installed), comparisons with Triton
where it is installed, and ``gpu``-marked runs against numpy."""
from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl

MMA = r"\bmma\.sync\.aligned\.[\w.]+"
NP = {"fp16": np.float16, "fp32": np.float32, "i8": np.int8}


@wb.jit
def dot3d_k(q_ptr, k_ptr, o_ptr, sqb, sqm, sqk, skb, skk, skn, sob, som, son,
            BLOCK_B: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
            BLOCK_K: tl.constexpr, PREC: tl.constexpr, ODT: tl.constexpr):
    """O[b] = Q[b] @ K[b] for BLOCK_B batches of one BLOCK_M x BLOCK_N tile (Triton's
    test_dot3d kernel; ``ODT`` names its out_dtype: "fp16", "i8" or "fp32")."""
    rb = tl.arange(0, BLOCK_B)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    q = tl.load(q_ptr + rb[:, None, None] * sqb + rm[None, :, None] * sqm +
                rk[None, None, :] * sqk)
    k = tl.load(k_ptr + rb[:, None, None] * skb + rk[None, :, None] * skk +
                rn[None, None, :] * skn)
    if ODT == "fp16":
        o = tl.dot(q, k, input_precision=PREC, out_dtype=tl.float16)
    elif ODT == "i8":
        o = tl.dot(q, k, input_precision=PREC, out_dtype=tl.int8)
    else:
        o = tl.dot(q, k, input_precision=PREC, out_dtype=tl.float32)
    tl.store(o_ptr + rb[:, None, None] * sob + rm[None, :, None] * som +
             rn[None, None, :] * son, o)


def _sig(dt, odt):
    return [f"*{dt}", f"*{dt}", f"*{'i32' if dt == 'i8' else odt}"] + ["i32"] * 9


def _cx(b, m, n, k, dt, odt):
    return dict(BLOCK_B=b, BLOCK_M=m, BLOCK_N=n, BLOCK_K=k,
                PREC="tf32" if dt == "fp32" else "ieee", ODT=odt)


CASES = [(2, 4, "fp16", "fp16"), (2, 2, "fp16", "fp32"), (4, 1, "i8", "i8"),
         (2, 8, "fp32", "fp32"), (1, 16, "fp16", "fp32")]


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("b,nw,dt,odt", CASES)
def test_dot3d_takes_mma_v2(b, nw, dt, odt, arch):
    c = wb.compile(dot3d_k, *_sig(dt, odt), target=f"cuda:{arch}", num_warps=nw,
                   **_cx(b, 32, 32, 32, dt, odt))
    ttgir = c.asm["ttgir"]
    assert (f"#ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = [{nw}, 1, 1]"
            f", instrShape = [1, 16, 8]}}>") in ttgir
    assert "warp_group_dot" not in ttgir
    forms = Counter(re.findall(MMA, c.asm["ptx"]))
    kin = {"fp32": 8, "i8": 32}.get(dt, 16)
    assert len(forms) == 1 and next(iter(forms)).startswith(f"mma.sync.aligned.m16n8k{kin}.")
    # each warp: its batches (all when the warps outnumber them) x 2 M tiles x 4 N tiles x K
    per_warp = max(b // nw, 1) * 2 * 4 * (32 // kin)
    assert sum(forms.values()) == per_warp


@pytest.mark.parametrize("b,nw,dt,odt", CASES[:4])
def test_dot3d_as_triton(b, nw, dt, odt):
    pytest.importorskip("triton", reason="comparing with Triton needs Triton 3.6 (the extra)")
    from workbench.runtime.compare import compare
    c = compare(dot3d_k, *_sig(dt, odt), target="cuda:90", num_warps=nw,
                **_cx(b, 32, 32, 32, dt, odt))
    assert Counter(re.findall(MMA, c.ours["ptx"])) == Counter(re.findall(MMA, c.theirs["ptx"]))
    assert c.agree["layouts"] and c.agree["op_layouts"], c.summary()
    assert c.ours_shared <= c.theirs_shared


def test_triton_s_timed_out_case_compiles_to_mma():
    """test_dot3d[8-1-64-64-64-32-32-float16-float16]: 8 batches of 32 x 32 x 64, one warp."""
    c = wb.compile(dot3d_k, *_sig("fp16", "fp16"), target="cuda:90", num_warps=1,
                   **_cx(8, 32, 32, 64, "fp16", "fp16"))
    forms = Counter(re.findall(MMA, c.asm["ptx"]))
    assert forms == {"mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16": 8 * 2 * 4 * 4}
    assert "fma" not in c.asm["ptx"]


@pytest.mark.gpu
@pytest.mark.parametrize("b,nw,dt,odt", CASES + [(8, 1, "fp16", "fp16"), (8, 1, "i8", "i8"),
                                                 (8, 1, "fp16", "fp32")])
def test_dot3d_gpu(b, nw, dt, odt):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    M = N = K = 64 if b == 8 else 32
    if dt == "i8":
        q, k = (rng.integers(-8, 8, s).astype(np.int8) for s in ((b, M, K), (b, K, N)))
    else:
        q, k = ((rng.standard_normal(s) * 0.3).astype(NP[dt]) for s in ((b, M, K), (b, K, N)))
        if dt == "fp32":  # tf32 inputs: 10 mantissa bits
            q, k = ((x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32) for x in (q, k))
    o_np = np.int32 if dt == "i8" else NP[odt]
    o = torch.from_numpy(np.full((b, M, N), -1, o_np)).cuda()
    qd, kd = torch.from_numpy(q).cuda(), torch.from_numpy(k).cuda()
    dot3d_k[(M // 32, N // 32)](qd, kd, o, M * K, K, 1, K * N, N, 1, M * N, N,
                                1, num_warps=nw, **_cx(b, 32, 32, K, dt, odt))
    want = np.matmul(q.astype(np.float64), k.astype(np.float64))
    got = o.cpu().numpy()
    if dt == "i8":  # int8 inputs: int32 sums whatever out_dtype says (as Triton's dot)
        np.testing.assert_array_equal(got, want.astype(np.int32))
    else:
        tol = 2e-2 if odt == "fp16" else 1e-2
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
