"""Two tensor-core decisions of Triton 3.6 on the CUDA backend, compared with Triton compiling
the same kernels (no GPU needed; ptxas assembles where installed) and run on a GPU against
numpy by the ``gpu``-marked tests:

* dots smaller than one ``mma.sync`` tile (M < 16 or N < 8, e.g. 2 x 4 x 32 on one warp) take
  MMA v2 all the same (Triton's ``supportMMA`` has no M/N minimum for version 2): the layouts'
  bases past the tile are zero, so rows and columns repeat to fill the m16n8 instruction;
* fp32 dots with ``input_precision = "tf32"`` on ``cuda:90`` take wgmma
  (``wgmma...m64nNk8.f32.tf32.tf32``) where the tile fits MMA v3, both operands K-major in
  shared memory (wgmma transposes 16-bit operands only); ``cuda:80`` keeps
  ``mma.sync...m16n8k8...tf32``.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends import nvidia_tools

PTXAS = nvidia_tools.find_tool("ptxas")
MMA = r"\b((?:wgmma\.mma_async|mma)\.sync\.aligned\.[\w.]+)"
NP = {"fp16": np.float16, "fp32": np.float32, "int8": np.int8}


@wb.jit
def dot_k(X, sxm, sxk, Y, syk, syn, Z, szm, szn, BM: tl.constexpr, BN: tl.constexpr,
          BK: tl.constexpr, PREC: tl.constexpr):
    """Z (BM x BN) = X (BM x BK) @ Y (BK x BN), strides given (Triton's test_dot kernel)."""
    m, n, k = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    x = tl.load(X + m[:, None] * sxm + k[None, :] * sxk)
    y = tl.load(Y + k[:, None] * syk + n[None, :] * syn)
    z = tl.dot(x, y, input_precision=PREC)  # int8: an int32 result
    tl.store(Z + m[:, None] * szm + n[None, :] * szn, z)


@wb.jit
def mm_loop_k(A, B, C, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
              SCALE_A: tl.constexpr):
    """C (BM x BN, fp32) = A (BM x K) @ B (K x BN), row-major, K a multiple of BK, tf32; with
    ``SCALE_A`` A is doubled in registers first (wgmma's register operand)."""
    m, n, k = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    pa = A + m[:, None] * K + k[None, :]
    pb = B + k[:, None] * BN + n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        a = tl.load(pa)
        if SCALE_A:
            a = a * 2.0
        acc = tl.dot(a, tl.load(pb), acc, input_precision="tf32")
        pa += BK
        pb += BK * BN
    tl.store(C + m[:, None] * BN + n[None, :], acc)


def _sig(dt, out="fp32"):
    dt = {"int8": "i8"}.get(dt, dt)
    return [f"*{dt}", "i32", "i32", f"*{dt}", "i32", "i32", f"*{out}", "i32", "i32"]


def _forms(ptx: str) -> dict:
    out: dict = {}
    for f in re.findall(MMA, ptx):
        out[f] = out.get(f, 0) + 1
    return out


def _assemble(ptx: str, arch: int) -> None:
    if PTXAS is not None:
        cubin, _ = nvidia_tools.assemble(ptx, arch, PTXAS)
        assert cubin


SMALL = [(2, 4, 32, 1, "fp16", "ieee"), (1, 2, 32, 1, "fp8e5", "ieee"),
         (2, 4, 32, 4, "fp16", "ieee"), (16, 4, 32, 4, "bf16", "ieee"),
         (4, 64, 16, 2, "fp16", "ieee"), (8, 8, 16, 2, "fp32", "tf32"),
         (2, 16, 32, 1, "int8", "ieee")]


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("m,n,k,nw,dt,prec", SMALL)
def test_small_dots_take_mma_v2(m, n, k, nw, dt, prec, arch):
    c = wb.compile(dot_k, *_sig(dt, "i32" if dt == "int8" else "fp32"), target=f"cuda:{arch}",
                   num_warps=nw, BM=m, BN=n, BK=k, PREC=prec)
    ttgir, ptx = c.asm["ttgir"], c.asm["ptx"]
    assert "versionMajor = 2" in ttgir and "instrShape = [16, 8]" in ttgir
    kin = {"fp32": 8, "int8": 32}.get(dt, 16)
    forms = _forms(ptx)
    assert len(forms) == 1 and next(iter(forms)).startswith(f"mma.sync.aligned.m16n8k{kin}.")
    # per warp: one instruction per m16n8 tile (M, N padded to the warps' tiles) and K step
    wm, wn = map(int, re.search(r"warpsPerCTA = \[(\d+), (\d+)\], instrShape = \[16, 8\]",
                                ttgir).groups())
    tiles = max(m // (16 * wm), 1) * max(n // (8 * wn), 1)
    assert sum(forms.values()) == tiles * (k // kin)
    _assemble(ptx, arch)


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("m,n,k,nw,dt,prec", SMALL[:1] + SMALL[2:])
def test_small_dots_as_triton(m, n, k, nw, dt, prec, arch):
    pytest.importorskip("triton", reason="comparing with Triton needs Triton 3.6 (the extra)")
    from workbench.runtime.compare import compare
    c = compare(dot_k, *_sig(dt, "i32" if dt == "int8" else "fp32"), target=f"cuda:{arch}",
                num_warps=nw, BM=m, BN=n, BK=k, PREC=prec)
    assert _forms(c.ours["ptx"]) == _forms(c.theirs["ptx"])
    assert c.agree["layouts"] and c.agree["op_layouts"], c.summary()
    assert c.ours_shared <= c.theirs_shared


def test_small_fp8_dot_widens_to_fp16_mma():
    """Triton widens fp8 operands of an MMA v2 dot to fp16 (``decomposeMixedModeDotOp``)."""
    c = wb.compile(dot_k, *_sig("fp8e5"), target="cuda:90", num_warps=1, BM=1, BN=2, BK=32,
                   PREC="ieee")
    assert _forms(c.asm["ptx"]) == {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32": 2}


# tf32 ----------------------------------------------------------------------------------------
TF32 = [(64, 64, 64, 4), (128, 64, 32, 4), (64, 128, 32, 8), (128, 128, 32, 8)]


@pytest.mark.parametrize("m,n,k,nw", TF32)
def test_tf32_takes_wgmma_on_cuda90(m, n, k, nw):
    c = wb.compile(dot_k, *_sig("fp32"), target="cuda:90", num_warps=nw, BM=m, BN=n, BK=k,
                   PREC="tf32")
    ttgir, ptx = c.asm["ttgir"], c.asm["ptx"]
    # both buffers K-major: A (M x K) not transposed, B (K x N) transposed
    assert "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, " \
           "elementBitWidth = 32}>" in ttgir
    assert "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, " \
           "elementBitWidth = 32}>" in ttgir
    assert "ttng.warp_group_dot" in ttgir
    forms = _forms(ptx)
    assert len(forms) == 1
    form = next(iter(forms))
    assert re.fullmatch(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k8\.f32\.tf32\.tf32", form)
    _assemble(ptx, 90)


def test_tf32_keeps_mma_sync_on_cuda80():
    c = wb.compile(dot_k, *_sig("fp32"), target="cuda:80", num_warps=4, BM=64, BN=64, BK=64,
                   PREC="tf32")
    assert _forms(c.asm["ptx"]) == {"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32": 64}
    _assemble(c.asm["ptx"], 80)


def test_ieee_fp32_stays_on_fma():
    c = wb.compile(dot_k, *_sig("fp32"), target="cuda:90", num_warps=4, BM=64, BN=64, BK=64,
                   PREC="ieee")
    assert not _forms(c.asm["ptx"]) and "warp_group_dot" not in c.asm["ttgir"]


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("m,n,k,nw", TF32[:3])
def test_tf32_as_triton(m, n, k, nw, arch):
    pytest.importorskip("triton", reason="comparing with Triton needs Triton 3.6 (the extra)")
    from workbench.runtime.compare import compare
    c = compare(dot_k, *_sig("fp32"), target=f"cuda:{arch}", num_warps=nw, BM=m, BN=n, BK=k,
                PREC="tf32")
    assert _forms(c.ours["ptx"]) == _forms(c.theirs["ptx"])
    assert c.agree["layouts"] and c.agree["op_layouts"], c.summary()
    assert c.ours_shared <= c.theirs_shared


@pytest.mark.parametrize("nw,stages", [(4, 3), (8, 2)])
def test_tf32_loop_as_triton(nw, stages):
    """A pipelined K loop (async wgmma), both operands from loads. (With A computed in
    registers Triton's pipeliner also splits the dot along K into k8 dots; ours does not.)"""
    pytest.importorskip("triton", reason="comparing with Triton needs Triton 3.6 (the extra)")
    from workbench.runtime.compare import compare
    c = compare(mm_loop_k, "*fp32:16", "*fp32:16", "*fp32:16", "i32:16", target="cuda:90",
                num_warps=nw, num_stages=stages, BM=128, BN=64, BK=32, SCALE_A=False)
    assert _forms(c.ours["ptx"]) == _forms(c.theirs["ptx"])
    assert c.agree["layouts"] and c.agree["shared"], c.summary()
    _assemble(c.ours["ptx"], 90)


@pytest.mark.parametrize("nw,stages", [(4, 3), (8, 2), (4, 1)])
def test_tf32_register_a_takes_wgmma(nw, stages):
    """A computed in registers (A * 2): wgmma's register form, four 32-bit registers of A
    per instruction (the m16n8k8 tf32 A fragment), B from shared memory."""
    c = wb.compile(mm_loop_k, "*fp32:16", "*fp32:16", "*fp32:16", "i32:16", target="cuda:90",
                   num_warps=nw, num_stages=stages, BM=128, BN=64, BK=32, SCALE_A=True)
    a_args = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k8\.f32\.tf32\.tf32 "
                        r"\{[^}]*\}, (\{[^}]*\}|%rd\d+)", c.asm["ptx"])
    assert a_args and all(len(a.split(",")) == 4 for a in a_args)
    _assemble(c.asm["ptx"], 90)


# on the GPU ----------------------------------------------------------------------------------
def _cuda(arch_min=80):
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability()[0] * 10 < arch_min:
        pytest.skip(f"needs sm_{arch_min} or newer")
    return torch


def _tile(rng, dt, shape):
    if dt == "int8":
        return rng.integers(-8, 8, shape).astype(np.int8)
    if dt == "fp32":  # tf32: keep 10 mantissa bits so the tensor core's sum is exact-ish
        x = rng.standard_normal(shape).astype(np.float32)
        return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    if dt == "bf16":  # float32 values a bf16 holds exactly (numpy has no bf16)
        x = (rng.standard_normal(shape) * 0.5).astype(np.float32)
        return (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    return (rng.standard_normal(shape) * 0.5).astype(NP[dt])


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,nw,dt,prec", [s for s in SMALL if s[4] != "fp8e5"])
def test_small_dots_gpu(m, n, k, nw, dt, prec):
    torch = _cuda()
    rng = np.random.default_rng()
    x, y = _tile(rng, dt, (m, k)), _tile(rng, dt, (k, n))
    out_np = np.int32 if dt == "int8" else np.float32
    xd, yd = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    if dt == "bf16":
        xd, yd = xd.to(torch.bfloat16), yd.to(torch.bfloat16)
    zd = torch.full((m, n), -7 if dt == "int8" else float("nan"), device="cuda",
                    dtype=torch.int32 if dt == "int8" else torch.float32)
    kern = dot_k[(1,)](xd, k, 1, yd, n, 1, zd, n, 1, BM=m, BN=n, BK=k, PREC=prec,
                       num_warps=nw)
    assert "mma.sync" in kern.asm["ptx"]
    want = x.astype(np.float64) @ y.astype(np.float64)
    got = zd.cpu().numpy()
    if dt == "int8":
        np.testing.assert_array_equal(got, want.astype(out_np))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


@pytest.mark.gpu
def test_small_fp8_dot_gpu():
    torch = _cuda()
    ml = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng()
    x = rng.integers(-3, 4, (1, 32)).astype(np.float32).astype(ml.float8_e5m2)
    y = rng.integers(-3, 4, (32, 2)).astype(np.float32).astype(ml.float8_e5m2)

    def dev(a):
        return torch.from_numpy(np.ascontiguousarray(a).view(np.uint8)).cuda().view(
            torch.float8_e5m2)
    zd = torch.full((1, 2), float("nan"), device="cuda", dtype=torch.float32)
    dot_k[(1,)](dev(x), 32, 1, dev(y), 2, 1, zd, 2, 1, BM=1, BN=2, BK=32, PREC="ieee",
                num_warps=1)
    np.testing.assert_array_equal(zd.cpu().numpy(),
                                  x.astype(np.float32) @ y.astype(np.float32))


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k,nw", TF32)
def test_tf32_dot_gpu(m, n, k, nw):
    torch = _cuda()
    rng = np.random.default_rng()
    x, y = _tile(rng, "fp32", (m, k)), _tile(rng, "fp32", (k, n))
    zd = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    kern = dot_k[(1,)](torch.from_numpy(x).cuda(), k, 1, torch.from_numpy(y).cuda(), n, 1, zd,
                       n, 1, BM=m, BN=n, BK=k, PREC="tf32", num_warps=nw)
    if torch.cuda.get_device_capability() == (9, 0):
        assert "tf32.tf32" in kern.asm["ptx"] and "wgmma" in kern.asm["ptx"]
    np.testing.assert_allclose(zd.cpu().numpy(), x.astype(np.float64) @ y.astype(np.float64),
                               rtol=1e-2, atol=1e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("scale_a", [False, True])
@pytest.mark.parametrize("nw,stages", [(4, 3), (8, 2)])
def test_tf32_loop_gpu(scale_a, nw, stages):
    torch = _cuda()
    rng = np.random.default_rng()
    K = 256
    a, b = _tile(rng, "fp32", (128, K)), _tile(rng, "fp32", (K, 64))
    c = torch.full((128, 64), float("nan"), device="cuda", dtype=torch.float32)
    mm_loop_k[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, K, BM=128,
                    BN=64, BK=32, SCALE_A=scale_a, num_warps=nw, num_stages=stages)
    want = (a.astype(np.float64) * (2 if scale_a else 1)) @ b.astype(np.float64)
    np.testing.assert_allclose(c.cpu().numpy(), want, rtol=1e-2, atol=5e-2)
