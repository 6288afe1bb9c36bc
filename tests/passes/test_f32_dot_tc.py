"""fp32 dots with input_precision bf16x3, bf16x6 and tf32x3 on CUDA targets: split into several
tensor-core dots on bf16/tf32 pieces (tritongpu-F32DotTC), as Triton 3.6 does."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.compiler import ASTSource, GPUTarget
from workbench.passes.f32_dot_tc import decompose_f32_dots


@wb.jit
def dot_k(X, Y, Z, P: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    x = tl.load(X + rm[:, None] * K + rk[None, :])
    y = tl.load(Y + rk[:, None] * N + rn[None, :])
    acc = tl.load(Z + rm[:, None] * N + rn[None, :])
    tl.store(Z + rm[:, None] * N + rn[None, :], tl.dot(x, y, acc, input_precision=P))


SIG = {"X": "*fp32", "Y": "*fp32", "Z": "*fp32", "P": "constexpr", "M": "constexpr",
       "N": "constexpr", "K": "constexpr"}
MMA = r"(?:wgmma\.mma_async|mma)\.sync\.aligned\.\S+"


def _compile(precision, arch, mnk=(64, 64, 64), num_warps=4):
    m, n, k = mnk
    src = ASTSource(dot_k, signature=SIG, constexprs={"P": precision, "M": m, "N": n, "K": k})
    return wb.compile(src, target=GPUTarget("cuda", arch, 32), options={"num_warps": num_warps})


def _dots(ttgir: str) -> list[str]:
    return re.findall(r"(?:tt\.dot|ttng\.warp_group_dot) .*", ttgir)


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("precision,n_dots,piece", [("bf16x3", 3, "bf16"), ("bf16x6", 6, "bf16"),
                                                    ("tf32x3", 3, "f32")])
def test_split_into_tensor_core_dots(arch, precision, n_dots, piece):
    c = _compile(precision, arch)
    dots = _dots(c.asm["ttgir"])
    assert len(dots) == n_dots
    for d in dots:
        assert f"x{piece}" in d  # operand pieces: bf16 tiles, or fp32 rounded to tf32
    ttgir = c.asm["ttgir"]
    assert ttgir.count("arith.cmpf uno") == 1 and "arith.select" in ttgir  # NaN correction
    if precision == "tf32x3":
        assert ttgir.count("cvt.rna.tf32.f32 $0, $1;") == 2
        assert all("inputPrecision = tf32" in d or "inputPrecision = 0" in d for d in dots)
    else:
        assert ttgir.count("arith.truncf") == (4 if n_dots == 3 else 6)
    ptx = c.asm["ptx"]
    kinds = set(re.findall(MMA, ptx))
    want = "bf16.bf16" if piece == "bf16" else "tf32.tf32"
    assert kinds and all(want in k for k in kinds), kinds


def test_other_precisions_untouched():
    for precision in ("tf32", "ieee"):
        c = _compile(precision, 90)
        assert len(_dots(c.asm["ttgir"])) == 1
        assert "cmpf uno" not in c.asm["ttgir"]


def test_tf32x3_stays_whole_without_emulation():
    """Before sm_80 (no tf32 tensor cores) Triton leaves tf32x3 dots alone; so does the pass
    when ``emu_tf32`` is off."""
    from workbench.ir.parser import parse_module
    c = _compile("tf32x3", 90)
    module = parse_module(c.asm["ttir"])
    assert decompose_f32_dots(module, emu_tf32=False) == 0
    assert decompose_f32_dots(module, emu_tf32=True) == 1


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("precision", ["bf16x3", "bf16x6"])
def test_same_tensor_core_instructions_as_triton(arch, precision):
    triton = pytest.importorskip("triton", reason="the comparison needs Triton 3.6 (triton extra)")
    import triton.language as ttl
    from triton.backends.compiler import GPUTarget as TGPUTarget
    from triton.compiler import ASTSource as TASTSource

    @triton.jit
    def tdot_k(X, Y, Z, P: ttl.constexpr, M: ttl.constexpr, N: ttl.constexpr, K: ttl.constexpr):
        rm = ttl.arange(0, M)
        rn = ttl.arange(0, N)
        rk = ttl.arange(0, K)
        x = ttl.load(X + rm[:, None] * K + rk[None, :])
        y = ttl.load(Y + rk[:, None] * N + rn[None, :])
        acc = ttl.load(Z + rm[:, None] * N + rn[None, :])
        ttl.store(Z + rm[:, None] * N + rn[None, :], ttl.dot(x, y, acc, input_precision=P))

    theirs = triton.compile(TASTSource(tdot_k, signature=SIG, constexprs={
        "P": precision, "M": 64, "N": 64, "K": 64}), target=TGPUTarget("cuda", arch, 32))
    ours = _compile(precision, arch)

    def counts(ptx):
        found = re.findall(MMA, ptx)
        return {k: found.count(k) for k in set(found)}
    assert counts(ours.asm["ptx"]) == counts(theirs.asm["ptx"])
    assert len(_dots(ours.asm["ttgir"])) == len(_dots(theirs.asm["ttgir"]))


@pytest.mark.gpu
@pytest.mark.parametrize("precision", ["bf16x3", "bf16x6", "tf32x3"])
@pytest.mark.parametrize("mnk,num_warps", [((64, 64, 64), 4), ((128, 64, 32), 8),
                                           ((32, 32, 32), 4)])
def test_split_dots_are_accurate_gpu(precision, mnk, num_warps):
    """On the GPU the split dots are far closer to the exact product than one tf32 dot: fp32
    inputs with 24-bit mantissas, compared with a float64 product."""
    torch = pytest.importorskip("torch")
    m, n, k = mnk
    rs = np.random.default_rng()
    x = rs.standard_normal((m, k)).astype(np.float32)
    y = rs.standard_normal((k, n)).astype(np.float32)
    z0 = rs.standard_normal((m, n)).astype(np.float32)
    want = x.astype(np.float64) @ y.astype(np.float64) + z0
    errs = {}
    for p in (precision, "tf32"):
        xt, yt = torch.tensor(x, device="cuda"), torch.tensor(y, device="cuda")
        zt = torch.tensor(z0, device="cuda")
        dot_k[(1,)](xt, yt, zt, P=p, M=m, N=n, K=k, num_warps=num_warps)
        torch.cuda.synchronize()
        errs[p] = np.abs(zt.cpu().numpy().astype(np.float64) - want).max()
    scale = np.abs(x).max() * np.abs(y).max() * k
    bound = {"bf16x3": 2e-5, "bf16x6": 2e-6, "tf32x3": 2e-6}[precision]
    assert errs[precision] <= bound * scale, errs
    assert errs[precision] < errs["tf32"] / 4, errs
