"""libdevice functions the CUDA backend does not compute itself are called as NVIDIA's own,
linked from libdevice's bitcode: they compile and assemble for sm_80 and sm_90 with no call
left in the PTX, and on a GPU they agree with the interpreter (float64 reference rounded once)
on fresh random inputs."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.codegen.nvptx import libdevice_link
from workbench.language.extra import libdevice as ld

pytestmark = pytest.mark.skipif(
    libdevice_link.path() is None,
    reason="libdevice.10.bc is not installed (pip install 'tile-workbench[sass]' or triton)")


@wb.jit
def unary(x_ptr, y_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    if FN == "j0":
        y = ld.j0(x)
    elif FN == "y1":
        y = ld.y1(x)
    elif FN == "erfcinv":
        y = ld.erfcinv(x)
    elif FN == "tgamma":
        y = ld.tgamma(x)
    elif FN == "normcdfinv":
        y = ld.normcdfinv(x)
    else:
        y = ld.cyl_bessel_i1(x)
    tl.store(y_ptr + offs, y)


@wb.jit
def binary(x_ptr, z_ptr, y_ptr, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    z = tl.load(z_ptr + offs)
    if FN == "fmod":
        y = ld.fmod(x, z)
    elif FN == "add_rz":
        y = ld.add_rz(x, z)
    elif FN == "div_ru":
        y = ld.div_ru(x, z)
    else:
        y = ld.nextafter(x, z)
    tl.store(y_ptr + offs, y)


UNARY = {"j0": (0.1, 30.0), "y1": (0.5, 30.0), "erfcinv": (0.01, 1.99), "tgamma": (0.2, 8.0),
         "normcdfinv": (0.01, 0.99), "cyl_bessel_i1": (-5.0, 5.0)}
BINARY = ["fmod", "add_rz", "div_ru", "nextafter"]


@pytest.mark.parametrize("arch", ["cuda:80", "cuda:90"])
@pytest.mark.parametrize("fn", ["j0", "erfcinv", "tgamma"])
def test_linked_functions_compile_and_assemble(arch, fn):
    k = wb.compile(unary, "*fp32", "*fp32", target=arch, FN=fn, BLOCK=128)
    assert "__nv_" not in k.asm["ptx"]                 # inlined from libdevice, no call left
    assert f"__nv_{fn}f" in k.asm["llir"]              # the llir stage shows the call


def test_binary_linked_functions_compile():
    for fn in BINARY:
        k = wb.compile(binary, "*fp64", "*fp64", "*fp64", target="cuda:90", FN=fn, BLOCK=64)
        assert "__nv_" not in k.asm["ptx"], fn


@pytest.mark.gpu
@pytest.mark.parametrize("fn", sorted(UNARY))
def test_unary_on_the_gpu_matches_the_interpreter(fn):
    rng = np.random.default_rng()
    torch = pytest.importorskip("torch")
    lo, hi = UNARY[fn]
    x = rng.uniform(lo, hi, 128).astype(np.float32)
    want = np.zeros_like(x)
    wb.compile(unary, x, want, target="interpreter", FN=fn, BLOCK=128)[(1,)](x, want)
    got = torch.zeros(128, dtype=torch.float32, device="cuda")
    unary[(1,)](torch.from_numpy(x).cuda(), got, FN=fn, BLOCK=128)
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=2e-5, atol=2e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("fn", BINARY)
def test_binary_on_the_gpu_matches_the_interpreter(fn):
    rng = np.random.default_rng()
    torch = pytest.importorskip("torch")
    x = rng.uniform(-50, 50, 64)
    z = rng.uniform(0.5, 7, 64) * rng.choice([-1, 1], 64)
    want = np.zeros_like(x)
    wb.compile(binary, x, z, want, target="interpreter", FN=fn, BLOCK=64)[(1,)](x, z, want)
    got = torch.zeros(64, dtype=torch.float64, device="cuda")
    binary[(1,)](torch.from_numpy(x).cuda(), torch.from_numpy(z).cuda(), got, FN=fn, BLOCK=64)
    np.testing.assert_array_equal(got.cpu().numpy(), want)
