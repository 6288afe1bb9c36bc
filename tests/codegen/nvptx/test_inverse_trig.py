"""The CUDA backend's atan/atan2/asin/acos (libdevice names, our float64 code): the same LLVM
IR JIT-compiled on the host and checked against numpy, in float64 (a few ulp) and for
float32 arguments (rounded once: equal to numpy's float32 result almost everywhere); and a
kernel using them through ``tl.extra.libdevice`` compiles to PTX for sm_90."""
import ctypes

import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir

import workbench as wb
import workbench.language as tl
from workbench.codegen.nvptx import inverse_trig
from workbench.language.extra import libdevice


class _HostKL:
    """The two things inverse_trig needs of a kernel lowering: a builder and intrinsics."""

    def __init__(self, module, builder):
        self.module, self.b = module, builder

    def intrinsic(self, name, ret, args):
        return self.module.globals.get(name) or ir.Function(
            self.module, ir.FunctionType(ret, list(args)), name)


def _host(name, nargs):
    d = ir.DoubleType()
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(d, [d] * nargs), "f")
    b = ir.IRBuilder(fn.append_basic_block())
    b.ret(inverse_trig.inverse(_HostKL(mod, b), name, list(fn.args)))
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    ee = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)),
                                    llvm.Target.from_default_triple().create_target_machine())
    ee.finalize_object()
    cf = ctypes.CFUNCTYPE(ctypes.c_double, *[ctypes.c_double] * nargs)(
        ee.get_function_address("f"))
    return cf, ee


REF = {"atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "atan2": np.arctan2}


@pytest.mark.parametrize("name", sorted(REF))
def test_against_numpy_on_the_host(name):
    rng = np.random.default_rng()
    f, _ee = _host(name, 2 if name == "atan2" else 1)
    if name in ("asin", "acos"):
        xs = [np.concatenate([[-1.0, 1.0, 0.0, -0.0, 0.5, 1.5, np.nan],
                              rng.uniform(-1, 1, 2000), 1 - np.exp(rng.uniform(-40, 0, 200))])]
    else:
        xs = [np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-300],
                              rng.standard_normal(2000) * 3,
                              np.exp(rng.uniform(-30, 30, 500)) * rng.choice([-1, 1], 500)])]
        if name == "atan2":
            # (zeros and infinities against each other: test_atan2_zeros_and_infinities)
            xs.append(rng.permutation(np.concatenate([[1.0, -1.0, 1e300, -1e300, np.nan, 2.0,
                                                       -3.0, 1e-300], xs[0][8:]])))
    got = np.array([f(*a) for a in zip(*xs, strict=True)])
    with np.errstate(all="ignore"):
        want = REF[name](*xs)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    close = np.abs(got - want) <= 4 * np.spacing(np.abs(want))
    assert (same | close).all(), [a[~(same | close)][:4] for a in xs]
    # float32 arguments: computed in float64, rounded once
    x32 = [a.astype(np.float32).astype(np.float64) for a in xs]
    got32 = np.array([f(*a) for a in zip(*x32, strict=True)]).astype(np.float32)
    with np.errstate(all="ignore"):
        want32 = REF[name](*x32).astype(np.float32)
    off = ~((got32 == want32) | (np.isnan(got32) & np.isnan(want32)))
    assert off.mean() < 0.002 and (np.abs(got32 - want32)[off] <= np.spacing(
        np.abs(want32[off]))).all()


def test_atan2_zeros_and_infinities():
    """C99 Annex F.10.1.4 (numpy follows it): atan2 of two zeros is +-0 or +-pi by the signs,
    of two infinities +-pi/4 or +-3pi/4."""
    f, _ee = _host("atan2", 2)
    special = [0.0, -0.0, np.inf, -np.inf]
    pairs = [(y, x) for y in special for x in special] + [(0.0, 2.0), (-0.0, -2.0),
                                                           (np.inf, 1.0), (1.0, -np.inf)]
    got = np.array([f(y, x) for y, x in pairs])
    want = np.array([np.arctan2(y, x) for y, x in pairs])
    assert (got == want).all() and (np.signbit(got) == np.signbit(want)).all(), (got, want)


@wb.jit
def inverse_trig_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    r = libdevice.asin(x) + libdevice.acos(x) + libdevice.atan(y) + libdevice.atan2(y, x)
    tl.store(out_ptr + offs, r)


@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_compiles_for_sm90(dtype):
    ptx = wb.compile(inverse_trig_kernel, f"*{dtype}", f"*{dtype}", f"*{dtype}", N=128,
                     target="cuda:90").asm["ptx"]
    assert ".entry inverse_trig_kernel" in ptx


@pytest.mark.gpu
def test_on_the_gpu():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    x = rng.uniform(-1, 1, 128).astype(np.float32)
    y = rng.standard_normal(128).astype(np.float32)
    out = torch.zeros(128, dtype=torch.float32, device="cuda")
    inverse_trig_kernel[(1,)](torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda(), out, 128)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    want = np.arcsin(x64) + np.arccos(x64) + np.arctan(y64) + np.arctan2(y64, x64)
    np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-6, atol=1e-6)
