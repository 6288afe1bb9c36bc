"""The ``maxnreg`` and ``enable_reflect_ftz`` options on the CUDA backend, and float64 math
that only libdevice provides (``tl.math.erf``), compiled for sm_80/sm_90 and run on a GPU."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.codegen.nvptx import libdevice_link
from workbench.compiler import ASTSource, GPUTarget
from workbench.errors import LaunchError


@wb.jit
def exp2_k(X, Y, N: tl.constexpr):
    p = tl.arange(0, N)
    tl.store(Y + p, tl.math.exp2(tl.load(X + p)))


@wb.jit
def erf_k(X, Y, N: tl.constexpr):
    p = tl.arange(0, N)
    tl.store(Y + p, tl.math.erf(tl.load(X + p)))


def _compile(fn, sig, arch=90, **options):
    src = ASTSource(fn, signature=sig, constexprs={"N": 128})
    return wb.compile(src, target=GPUTarget("cuda", arch, 32), options=options)


SIG32 = {"X": "*fp32", "Y": "*fp32", "N": "constexpr"}


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("maxnreg", [32, 40, 168])
def test_maxnreg_on_the_entry(arch, maxnreg):
    c = _compile(exp2_k, SIG32, arch, maxnreg=maxnreg)
    assert re.search(rf"\.visible \.entry [^{{;]*\.maxnreg {maxnreg}\b", c.asm["ptx"])
    assert re.search(rf"ttg\.maxnreg = {maxnreg} : i32", c.asm["ttgir"])
    assert f'"nvvm.maxnreg"="{maxnreg}"' in c.asm["llir"]


def test_no_maxnreg_by_default():
    c = _compile(exp2_k, SIG32)
    assert ".maxnreg" not in c.asm["ptx"] and "maxnreg" not in c.asm["ttgir"]


def test_maxnreg_must_be_a_positive_int():
    x = np.zeros(128, np.float32)
    for bad in (0, -3, 2.5, "32"):
        with pytest.raises(LaunchError, match="maxnreg"):
            exp2_k[(1,)](x, x, N=128, maxnreg=bad)


@pytest.mark.parametrize("ftz", [True, False])
def test_reflect_ftz_picks_the_exp2_instruction(ftz):
    c = _compile(exp2_k, SIG32, enable_reflect_ftz=ftz)
    ptx = c.asm["ptx"]
    assert ("ex2.approx.ftz.f32" in ptx) == ftz
    assert ("ex2.approx.f32" in ptx) == (not ftz)
    assert ('"nvvm-reflect-ftz"' in c.asm["llir"]) == ftz


def test_reflect_ftz_is_part_of_the_cache_key():
    a = _compile(exp2_k, SIG32, enable_reflect_ftz=True)
    b = _compile(exp2_k, SIG32, enable_reflect_ftz=False)
    assert a.asm["ptx"] != b.asm["ptx"]


needs_libdevice = pytest.mark.skipif(libdevice_link.path() is None,
                                     reason="libdevice.10.bc is not installed (sass extra)")


@needs_libdevice
@pytest.mark.parametrize("arch", [80, 90])
def test_f64_erf_links_libdevice(arch):
    c = _compile(erf_k, {"X": "*fp64", "Y": "*fp64", "N": "constexpr"}, arch)
    assert "declare double @__nv_erf(double)" in c.asm["llir"] or \
        "__nv_erf" not in c.asm["llir"]  # called, then linked from the bitcode and inlined
    assert "fma.rn.f64" in c.asm["ptx"] and "__nv_erf" not in c.asm["ptx"]


@pytest.mark.gpu
@needs_libdevice
def test_f64_erf_gpu():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng().uniform(-4, 4, 128)
    xt = torch.tensor(x, device="cuda")
    yt = torch.empty_like(xt)
    erf_k[(1,)](xt, yt, N=128)
    want = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(yt.cpu().numpy(), want, rtol=4e-16, atol=1e-300)


@pytest.mark.gpu
@pytest.mark.parametrize("ftz", [True, False])
def test_exp2_subnormal_results_gpu(ftz):
    """exp2(-127) = 2**-127 is an fp32 subnormal: flushed to 0 with ftz, kept without."""
    torch = pytest.importorskip("torch")
    xt = torch.full((128,), -127.0, device="cuda", dtype=torch.float32)
    yt = torch.empty_like(xt)
    exp2_k[(1,)](xt, yt, N=128, enable_reflect_ftz=ftz)
    got = yt.cpu().numpy()
    if ftz:
        assert (got == 0).all()
    else:
        np.testing.assert_allclose(got, np.float32(2.0 ** -127), rtol=1e-6)


@pytest.mark.gpu
def test_maxnreg_limits_registers_gpu():
    torch = pytest.importorskip("torch")
    x = torch.randn(128, device="cuda")
    y = torch.empty_like(x)
    k = exp2_k[(1,)](x, y, N=128, maxnreg=32)
    assert k.metadata.n_regs <= 32
    np.testing.assert_allclose(y.cpu().numpy(), np.exp2(x.cpu().numpy()), rtol=1e-5)
