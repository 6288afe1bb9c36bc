"""The ``arch`` option and ``knobs.runtime.override_arch`` (Triton's ``arch`` and
``TRITON_OVERRIDE_ARCH``): a CUDA compile makes another architecture's decisions while ptxas
assembles for the GPU (or target) compiled for."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench import knobs
from workbench.errors import LaunchError


@wb.jit
def axpy(X, Y, N: tl.constexpr):
    p = tl.arange(0, N)
    tl.store(Y + p, tl.load(X + p) * 1.5 + tl.load(Y + p))


@wb.jit
def mm(A, B, C, M: tl.constexpr):
    r = tl.arange(0, M)
    a = tl.load(A + r[:, None] * M + r[None, :])
    b = tl.load(B + r[:, None] * M + r[None, :])
    tl.store(C + r[:, None] * M + r[None, :], tl.dot(a, b))


def _ttgir_target(k) -> str:
    return re.search(r'ttg\.target = "(cuda:\d+)"', k.asm["ttgir"]).group(1)


@pytest.mark.parametrize("arch,want", [("sm80", "cuda:80"), ("sm90", "cuda:90")])
def test_arch_option_sets_the_decisions(arch, want):
    k = wb.compile(axpy, "*fp32", "*fp32", target="cuda:90", N=128, arch=arch)
    assert _ttgir_target(k) == want
    assert k.metadata.target == "cuda:90"  # still assembled for (and loaded on) sm_90


def test_sm80_decisions_on_sm90_take_mma_sync():
    ours = wb.compile(mm, "*fp16", "*fp16", "*fp32", target="cuda:90", M=64, arch="sm80")
    assert "mma.sync.aligned" in ours.asm["ptx"] and "wgmma" not in ours.asm["ptx"]
    native = wb.compile(mm, "*fp16", "*fp16", "*fp32", target="cuda:90", M=64)
    assert "wgmma.mma_async" in native.asm["ptx"]


def test_override_arch_knob_is_the_default():
    try:
        knobs.runtime.override_arch = "sm80"
        k = wb.compile(axpy, "*fp32", "*fp32", target="cuda:90", N=128)
        assert _ttgir_target(k) == "cuda:80"
        k = wb.compile(axpy, "*fp32", "*fp32", target="cuda:90", N=128, arch="sm90")
        assert _ttgir_target(k) == "cuda:90"  # the option wins over the knob
    finally:
        knobs.runtime.override_arch = None
    assert _ttgir_target(wb.compile(axpy, "*fp32", "*fp32", target="cuda:90", N=128)) == \
        "cuda:90"


@pytest.mark.parametrize("bad,match", [("90", "form sm<capability>"), ("gfx942", "form"),
                                       ("sm70", "decisions of sm80")])
def test_bad_arch_is_refused(bad, match):
    with pytest.raises((ValueError, LaunchError), match=match):
        wb.compile(axpy, "*fp32", "*fp32", target="cuda:90", N=128, arch=bad)


@pytest.mark.gpu
def test_sm80_decisions_run_on_the_gpu():
    torch = pytest.importorskip("torch")
    a = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    b = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    c = torch.empty(64, 64, device="cuda", dtype=torch.float32)
    k = mm[(1,)](a, b, c, M=64, arch="sm80")
    assert _ttgir_target(k) == "cuda:80"
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    np.testing.assert_allclose(c.cpu().numpy(), want, atol=2e-2, rtol=1e-3)
