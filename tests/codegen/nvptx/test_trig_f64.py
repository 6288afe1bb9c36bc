"""float64 sin, cos (``math.sin``/``math.cos``, ``__nv_sin``/``__nv_cos``) and tan
(``__nv_tan``) on the CUDA backend (:mod:`workbench.codegen.nvptx.trig_f64`).

Without a GPU: the algorithm the PTX is generated from, evaluated with numpy, against numpy's
sin/cos/tan over random inputs from 2^-30 to the largest double, special values and the double
closest to a multiple of pi/2; the LLVM IR the CUDA backend emits for it, compiled for the host
CPU, gives the same bits as the numpy evaluation; the kernels compile for cuda:80 and cuda:90
and ptxas accepts them. With a GPU (``gpu`` mark): the kernels against numpy, within 2 ulp
(tan: 3)."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from llvmlite import ir

import workbench as wb
import workbench.language as tl
from tests.codegen.nvptx.test_misc_ops import PTXAS, N, _cuda, _dev, _sync, extern_kernel
from workbench.backends import nvidia_tools
from workbench.codegen.nvptx.trig_f64 import numpy_trig
from workbench.codegen.nvptx.trig_llvm import trig_f64_llvm
from workbench.ir.types import f64

#: the double nearest a multiple of pi/2 (Muller, Elementary Functions, ch. 11): it is
#: 4.6871659242546276e-19 above k pi/2 with k odd, so cos(WORST) = -4.6871659242546276e-19
#: (exact reduction, 3000-bit arithmetic). glibc's cos gives -4.68716592425462e-19 (8 ulp off),
#: so this value is checked on its own rather than against numpy.
WORST = 6381956970095103 * 2.0 ** 797
COS_WORST = -4.6871659242546276e-19
NP_FN = {"sin": np.sin, "cos": np.cos, "tan": np.tan}


@wb.jit
def sincos_k(x_ptr, s_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(s_ptr + offs, tl.sin(x), mask=m)
    tl.store(c_ptr + offs, tl.cos(x), mask=m)


def random_inputs(rng, n: int, lo: float = -30.0, hi: float = 1023.9) -> np.ndarray:
    """Signed doubles with log2 magnitude uniform in [lo, hi), plus special values."""
    x = rng.choice([-1.0, 1.0], n) * 2.0 ** rng.uniform(lo, hi, n)
    x[:7] = [0.0, -0.0, np.inf, -np.inf, np.nan, np.pi / 2, 1.7976931348623157e308]
    return x


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units of want's last place (NaN where both are NaN counts as 0)."""
    both_nan = np.isnan(got) & np.isnan(want)
    err = np.abs(got - want) / np.spacing(np.abs(want))
    return np.where(both_nan, 0.0, err)


@pytest.mark.parametrize("name,limit", [("sin", 2), ("cos", 2), ("tan", 3)])
@pytest.mark.parametrize("lo,hi", [(-30, 0), (0, 20), (20, 64), (64, 1023.9)])
def test_algorithm_in_numpy_matches_numpy(name, limit, lo, hi):
    rng = np.random.default_rng()
    x = random_inputs(rng, 20000, lo, hi)
    got = numpy_trig(name, x)
    with np.errstate(invalid="ignore"):
        want = NP_FN[name](x)
    err = ulps(got, want)
    worst = int(np.argmax(err))
    assert err.max() <= limit, (x[worst], got[worst], want[worst])


def test_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])
    s, c, t = (numpy_trig(n, x) for n in ("sin", "cos", "tan"))
    assert list(np.signbit(s[:2])) == [False, True] and list(np.signbit(t[:2])) == [False, True]
    assert list(c[:2]) == [1.0, 1.0]
    assert np.isnan(s[2:]).all() and np.isnan(c[2:]).all() and np.isnan(t[2:]).all()
    # no cancellation error in the reduction of the hardest argument
    assert numpy_trig("cos", np.array([WORST]))[0] == COS_WORST
    assert numpy_trig("sin", np.array([WORST]))[0] in (1.0, -1.0)


class _HostKernel:
    """The little of the CUDA lowering's context :class:`LlvmOps` uses, on a host module."""

    def __init__(self, module, builder):
        self.module, self.b = module, builder

    def intrinsic(self, name, ret, args):
        if name in self.module.globals:
            return self.module.globals[name]
        return ir.Function(self.module, ir.FunctionType(ret, list(args)), name)


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_llvm_ir_on_the_host_equals_the_numpy_evaluation(name):
    import llvmlite.binding as llvm
    m = ir.Module(name="trig")
    fn = ir.Function(m, ir.FunctionType(ir.DoubleType(), [ir.DoubleType()]), "f")
    b = ir.IRBuilder(fn.append_basic_block())
    b.ret(trig_f64_llvm(_HostKernel(m, b), name, fn.args[0]))
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(str(m))
    mod.verify()
    ee = llvm.create_mcjit_compiler(mod, llvm.Target.from_default_triple()
                                    .create_target_machine())
    ee.finalize_object()
    f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(ee.get_function_address("f"))
    x = random_inputs(np.random.default_rng(), 4000)
    x[7] = WORST
    got = np.array([f(float(v)) for v in x])
    want = numpy_trig(name, x)
    same = (got.view(np.int64) == want.view(np.int64)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), x[~same][:5]


@pytest.mark.parametrize("arch", [80, 90])
def test_kernels_compile_and_assemble(arch):
    ck = wb.compile(sincos_k, "*fp64", "*fp64", "*fp64", "i32", target=f"cuda:{arch}",
                    BLOCK=128)
    ptx = ck.asm["ptx"]
    assert "fma.rn.f64" in ptx and "wb_two_over_pi_digits" in ptx
    assert "sin.approx" not in ptx and "cvt.rn.f32.f64" not in ptx  # no float32 shortcut
    if PTXAS:
        nvidia_tools.assemble(ptx, arch, PTXAS)
    from workbench.codegen.nvptx import libdevice_link
    for sym in ("__nv_sin", "__nv_cos", "__nv_tan"):
        res = _cuda(extern_kernel(sym, [f64], f64).module, arch)
        # the libdevice symbols are NVIDIA's own where libdevice is installed, ours without it
        ours = libdevice_link.path() is None
        assert ("wb_two_over_pi_digits" in res.extra["ptx"]) == ours
        if PTXAS:
            assert "cubin" in res.extra


@pytest.mark.gpu
def test_sin_cos_gpu_against_numpy():
    rng = np.random.default_rng()
    n = 1 << 16
    x = random_inputs(rng, n)
    xd, ds, dc = _dev(x), _dev(np.full(n, np.nan)), _dev(np.full(n, np.nan))
    sincos_k[(n // 128,)](xd, ds, dc, n, BLOCK=128)
    _sync()
    with np.errstate(invalid="ignore"):
        assert ulps(ds.to_numpy(), np.sin(x)).max() <= 2
        assert ulps(dc.to_numpy(), np.cos(x)).max() <= 2


@pytest.mark.gpu
@pytest.mark.parametrize("name,limit", [("sin", 2), ("cos", 2), ("tan", 3)])
def test_extern_gpu_against_numpy(name, limit):
    rng = np.random.default_rng()
    res = _cuda(extern_kernel(f"__nv_{name}", [f64], f64).module)
    for _ in range(8):
        x = random_inputs(rng, N)
        xd, out = _dev(x), _dev(np.full(N, np.nan))
        res.launcher((1, 1, 1), [xd.pointer_arg(), out.pointer_arg()])
        _sync()
        with np.errstate(invalid="ignore"):
            assert ulps(out.to_numpy(), NP_FN[name](x)).max() <= limit
