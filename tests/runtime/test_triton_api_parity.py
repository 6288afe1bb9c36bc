"""Triton 3.6's runtime API as the workbench takes it: @jit's keywords, testing.assert_close,
and the compile errors whose words Triton's own tests compare (test_compile_errors.py)."""
import warnings

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError, LaunchError

GLOBAL_INT = 42


def _kernel_src(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0, mask=m)


def _launch_and_specs(jf, n):
    x = np.random.default_rng().standard_normal(n + 16).astype(np.float32)
    x = x[(-x.ctypes.data % 16) // 4:][:n]  # 16-byte aligned
    out = np.full(n, np.nan, np.float32)
    jf[(wb.cdiv(n, 16),)](x, out, n, BLOCK=16)
    np.testing.assert_allclose(out, x * 3.0, rtol=1e-6)
    (kernel,) = jf.cache.values()
    return {a.name: (a.divisible_by_16, a.equal_to_1) for a in kernel.spec.args}


@pytest.mark.parametrize("n", [32, 1])
def test_do_not_specialize_on_alignment_keeps_only_equal_to_one(n):
    plain = wb.jit(_kernel_src)
    no_align = wb.jit(do_not_specialize_on_alignment=["x_ptr", 2])(_kernel_src)
    none = wb.jit(do_not_specialize=["n"])(_kernel_src)
    assert _launch_and_specs(plain, n)["n"] == (n == 32, n == 1)
    got = _launch_and_specs(no_align, n)
    assert got["n"] == (False, n == 1) and got["x_ptr"] == (False, False)
    assert got["out_ptr"][0] == _launch_and_specs(plain, n)["out_ptr"][0]
    assert _launch_and_specs(none, n)["n"] == (False, False)


def test_launch_metadata_is_kept_and_repr_names_the_kernel():
    def meta(grid, kernel, args):
        return {"name": "k"}

    jf = wb.jit(launch_metadata=meta, version=3)(_kernel_src)
    assert jf.launch_metadata is meta

    def name(spec):
        ones = "_".join(k for k, v in spec.constants.items() if v == 1)
        return f"scale_{spec.signature['x_ptr'][1:]}_{spec.constants['BLOCK']}_{ones}"

    named = wb.jit(repr=name)(_kernel_src)
    for n in (1, 40):
        _launch_and_specs(named, n)
        kernel = next(k for k in named.cache.values() if k.spec.args[2].equal_to_1 == (n == 1))
        assert kernel.name == ("scale_fp32_16_n" if n == 1 else "scale_fp32_16_")
        assert f"tt.func public @{kernel.name}(" in kernel.asm["ttir"]
        named.cache.clear()
    with pytest.raises(LaunchError, match="identifier"):
        _launch_and_specs(wb.jit(repr=lambda spec: "not a name")(_kernel_src), 8)
    bad = wb.jit(do_not_specialize_on_alignment=["nope"])(_kernel_src)
    with pytest.raises(LaunchError, match="do_not_specialize_on_alignment entry 'nope'"):
        _launch_and_specs(bad, 8)


def test_assert_close_uses_tritons_defaults():
    rng = np.random.default_rng()
    x = rng.standard_normal(64).astype(np.float32)
    wb.testing.assert_close(x, x + 0.009)              # atol 1e-2, rtol 0
    with pytest.raises(AssertionError):
        wb.testing.assert_close(x, x + 0.02)
    wb.testing.assert_close(x, x * 1.5, atol=0, rtol=lambda dtype: 0.6)
    with pytest.raises(AssertionError, match="mine"):
        wb.testing.assert_close(1.0, 1.5, err_msg="mine")
    wb.testing.assert_close([np.nan, 1.0], [np.nan, 1.0])


def _compile(fn):
    return wb.compile(wb.compiler.ASTSource(fn=wb.jit(fn), signature={}, constexprs={}),
                      target="interpreter")


def k_arange():
    tl.arange(2, 7)


def k_full():
    tl.full((33,), 0, dtype=tl.int64)


def k_global():
    a = GLOBAL_INT  # noqa: F841


def k_where():
    a = tl.full((64,), 0, tl.uint32)
    tl.where(a, tl.full((64,), 1.0, tl.float32), 2.0)


@pytest.mark.parametrize("fn, cause, words, at", [
    (k_arange, "arange's range must be a power of 2", "tl.arange(0, 8)", "2:4"),
    (k_full, "Shape element 0 must be a power of 2", "[33]", "2:4"),
    (k_global, None, "Cannot access global variable 'GLOBAL_INT'", "2:8"),
])
def test_messages_in_tritons_words(fn, cause, words, at):
    with pytest.raises(CompilationError) as info:
        _compile(fn)
    if cause is not None:
        assert str(info.value.__cause__) == cause
    assert words in str(info.value) and f"at {at}: of {fn.__name__}" in str(info.value)


def test_where_with_a_non_boolean_condition_warns_as_triton():
    with pytest.warns(UserWarning, match="non-boolean condition .* Got uint32"):
        _compile(k_where)
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        def k_bool():
            tl.where(tl.full((64,), 1, tl.int1), 1.0, 2.0)
        _compile(k_bool)


def test_do_bench_cudagraph_times_the_function_in_milliseconds():
    calls = []
    x = np.random.default_rng().standard_normal(1 << 16)

    def work():
        calls.append(float(np.sort(x)[0]))

    ms = wb.testing.do_bench_cudagraph(work, rep=5)
    assert isinstance(ms, float) and 0 < ms < 1000 and len(calls) >= 3
    lo, hi = wb.testing.do_bench_cudagraph(work, rep=5, quantiles=(0.1, 0.9))
    assert 0 < lo <= hi


def test_host_kernel_init_handles_reports_its_sm90_figures():
    """Triton's tutorial 02 sizes its grid from kernel.n_regs and metadata.shared after
    _init_handles(); a host kernel gives its cuda:90 compile's figures, and the host's
    device properties the sm_90 limits that go with them."""
    from workbench.backends.limits import ARCH_SHARED_OPTIN
    from workbench.backends.nvidia_tools import find_tool
    from workbench.config import Target
    from workbench.runtime import driver

    jf = wb.jit(_kernel_src)
    n = 40
    x = np.random.default_rng().standard_normal(n).astype(np.float32)
    k = jf.warmup(x, np.empty_like(x), n, BLOCK=16, grid=(1,))
    assert k.target.backend == "cpu" and k.n_regs is None and k.metadata.shared == 0
    k._init_handles()
    gpu = jf.compile_for(k.spec, k.options, Target("cuda", 90))
    assert k.extra["gpu_figures"] == "cuda:90"
    assert k.metadata.shared == gpu.metadata.shared
    assert k.n_regs == gpu.n_regs and (k.n_regs is None) == (find_tool("ptxas") is None)
    props = driver.active.utils.get_device_properties(None)
    assert props["max_shared_mem"] == ARCH_SHARED_OPTIN[90] and props["warpSize"] == 1
    out = np.full(n, np.nan, np.float32)
    k[(wb.cdiv(n, 16),)](x, out, n)  # still the host kernel
    np.testing.assert_allclose(out, x * 3.0, rtol=1e-6)


def test_a_constexpr_listed_in_do_not_specialize_is_refused_as_triton():
    def k(x_ptr, N: tl.constexpr):
        tl.store(x_ptr, N)

    for kw in ("do_not_specialize", "do_not_specialize_on_alignment"):
        jf = wb.jit(**{kw: ["N"]})(k)
        with pytest.raises(CompilationError, match=f"N marked as constexpr and listed in {kw}"):
            jf[(1,)](np.zeros(1, np.int32), 5)
        with pytest.raises(CompilationError, match="N marked as constexpr"):
            wb.compile(wb.compiler.ASTSource(fn=jf, signature={"x_ptr": "*i32"},
                                             constexprs={"N": 5}), target="interpreter")
