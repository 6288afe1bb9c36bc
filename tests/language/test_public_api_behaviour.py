"""What the Triton 3.6 names added by the public-API audit do (test_public_api.py checks
that they exist): the AMD-only ``tl.extra.hip`` names and the CUDA-only ``tl.extra.cuda``
helpers refused at the user's line with the target named, ``block_ptr.advance``, the
constexpr and dtype methods, ``MockTensor`` warmups, ``AsyncCompileMode``, autotune's
deprecated timing keywords, ``Config(ir_override=)``, the GPU helpers of ``triton.testing``
and the renamed parameters (``rand4x(offsets=)``, ``cdiv(x, y)``, ``static_print(file=)``)."""
from __future__ import annotations

import io
import shutil
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError, LaunchError, TargetError, ToolMissingError
from workbench.language.extra import cuda as tlc
from workbench.language.extra import hip

TARGETS = ["interpreter", "cpu", "cuda:80", "cuda:90"]
_TARGET_WORDS = {"interpreter": "host targets", "cpu": "host targets",
                 "cuda:80": "target cuda:80", "cuda:90": "target cuda:90"}


@wb.jit
def hip_kernel(x_ptr, out_ptr, i_ptr, CASE: tl.constexpr):
    r = tl.arange(0, 16)
    x = tl.load(x_ptr + r)
    if CASE == "libdevice":
        tl.store(out_ptr + r, hip.libdevice.exp(x))  # case libdevice
    if CASE == "memrealtime":
        tl.store(i_ptr, hip.memrealtime())  # case memrealtime


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", ["libdevice", "memrealtime"])
def test_amd_only_names_are_refused_at_the_line_naming_the_target(target, case):
    with pytest.raises(CompilationError) as info:
        wb.compile(hip_kernel, "*fp32", "*fp32", "*i64", CASE=case, target=target)
    text = str(info.value)
    first = text.splitlines()[0]
    assert f"test_public_api_behaviour.py:{_line_of(f'# case {case}')}:" in first
    assert "is AMD-only" in first and _TARGET_WORDS[target] in first
    assert f"# case {case}" in text  # the user's source line is shown


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if marker in line and "_line_of" not in
                    line)


@wb.jit
def cuda_helper_kernel(out_ptr, CASE: tl.constexpr):
    if CASE == "globaltimer":
        tl.store(out_ptr, tlc.globaltimer())  # case globaltimer
    if CASE == "smid":
        tl.store(out_ptr, tlc.smid().to(tl.int64))  # case smid


@pytest.mark.parametrize("case", ["globaltimer", "smid"])
def test_cuda_only_helpers_name_themselves_on_the_host_targets(case):
    for target, who in (("interpreter", "the interpreter"), ("cpu", "the CPU backend")):
        with pytest.raises(CompilationError) as info:
            wb.compile(cuda_helper_kernel, "*i64", CASE=case, target=target)
        first = str(info.value).splitlines()[0]
        assert f"tl.extra.cuda.{case}" in first and who in first
        assert f":{_line_of(f'# case {case}')}:" in first
    for target in ("cuda:80", "cuda:90"):
        ptx = wb.compile(cuda_helper_kernel, "*i64", CASE=case, target=target).asm["ptx"]
        assert f"%{case}" in ptx


@wb.jit
def advance_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, STEP: tl.constexpr):
    bp = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (STEP, N), (1, 0))
    r = tl.arange(0, STEP)[:, None] * N + tl.arange(0, N)[None, :]
    for i in range(M // STEP):
        tl.store(out_ptr + i * STEP * N + r, tl.load(bp) * (i + 1))
        bp = bp.advance((STEP, 0))  # Triton's method form of tl.advance


def test_block_pointer_advance_method(backend, rng):
    x = rng.standard_normal((32, 16)).astype(np.float32)
    out = np.full_like(x, np.nan)
    launch(backend, advance_kernel, (1,), x, out, M=32, N=16, STEP=8)
    want = x * np.repeat(np.arange(1, 5, dtype=np.float32), 8)[:, None]
    np.testing.assert_array_equal(out, want)
    for target in ("cuda:80", "cuda:90"):
        wb.compile(advance_kernel, "*fp32", "*fp32", M=32, N=16, STEP=8, target=target)


SCALE = tl.constexpr(3)


@wb.jit
def constexpr_kernel(out_ptr, A: tl.constexpr, T: tl.constexpr):
    tl.static_assert(A.value == A)  # Triton's BLOCK.value on a constexpr parameter
    tl.store(out_ptr, T[1] + T[2] * A.value + SCALE.value)


def test_constexpr_value_and_methods(backend, rng):
    t = tuple(int(v) for v in rng.integers(-50, 50, 3))
    a = int(rng.integers(-9, 9))
    out = np.zeros(1, np.int32)
    launch(backend, constexpr_kernel, (1,), out, A=a, T=t)
    assert out[0] == t[1] + t[2] * a + 3
    c = tl.constexpr((4, 5, 6))
    assert c[tl.constexpr(2)] == 6 and list(c) == [4, 5, 6]
    assert (3 > tl.constexpr(2)).value is True and tl.constexpr(0).__not__().value is True
    assert tl.constexpr(0).logical_or(7).value == 7
    assert tl.constexpr(2).logical_and(0).value == 0


@wb.jit
def scale_kernel(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3, mask=m)


def test_warmup_with_mock_tensors_and_torch_dtypes(rng, monkeypatch):
    torch = pytest.importorskip("torch")
    # the interpreter for both the warmups and the launch, on a machine with a GPU too (a
    # MockTensor warms up for the GPU when one is active, as in Triton)
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    jf = wb.jit(scale_kernel.fn)
    k16 = jf.warmup(wb.MockTensor(torch.float16, [64]), torch.float16, 64, B=32, grid=(2,))
    assert "!tt.ptr<f16>" in k16.asm["ttir"]
    k32 = jf.warmup(torch.float32, torch.float32, 64, B=32, grid=(2,))
    assert "!tt.ptr<f32>" in k32.asm["ttir"] and len(jf.cache) == 2
    assert wb.MockTensor(torch.float32, [2, 3, 4]).stride() == (12, 4, 1)
    x = rng.standard_normal(64).astype(np.float32)
    out = np.zeros_like(x)
    jf[(2,)](x, out, 64, B=32)
    np.testing.assert_array_equal(out, x * 3)
    assert len(jf.cache) == 2  # the launch found the warmed-up kernel


def test_async_compile_mode_compiles_on_the_executor(rng):
    jf = wb.jit(scale_kernel.fn)
    x = rng.standard_normal(100).astype(np.float32)
    with ThreadPoolExecutor(2) as pool, wb.AsyncCompileMode(pool):
        futures = [jf.warmup(x, x, 100, B=b, grid=(1,)) for b in (16, 32, 16)]
        assert all(isinstance(f, wb.FutureKernel) for f in futures)
        assert futures[0] is futures[2]  # the same compile asked twice is one job
        with pytest.raises(RuntimeError, match="already active"):
            with wb.AsyncCompileMode(pool):
                pass
    assert len(jf.cache) == 2 and futures[1].result().asm["ttir"]
    for b in (16, 32):
        out = np.zeros_like(x)
        jf[(wb.cdiv(100, b),)](x, out, 100, B=b)
        np.testing.assert_array_equal(out, x * 3)
    assert len(jf.cache) == 2


def test_async_compile_mode_reports_or_ignores_failed_compiles():
    @wb.jit
    def bad(x_ptr):
        tl.store(x_ptr, tl.arange(0, 3))  # not a power of two

    x = np.zeros(4, np.float32)
    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(CompilationError):
            with wb.AsyncCompileMode(pool):
                bad.warmup(x, grid=(1,))
        with wb.AsyncCompileMode(pool, ignore_errors=True):
            future = bad.warmup(x, grid=(1,))
        assert future.result(ignore_errors=True) is None


def test_autotune_takes_tritons_deprecated_timing_keywords(rng):
    configs = [wb.Config({"B": 16}), wb.Config({"B": 64})]
    with pytest.warns(DeprecationWarning, match="deprecated"):
        tuned = wb.autotune(configs, key=["n"], warmup=1, rep=2)(wb.jit(scale_kernel.fn))
    assert (tuned.num_warmups, tuned.num_reps) == (1, 2)
    x = rng.standard_normal(200).astype(np.float32)
    out = np.zeros_like(x)
    tuned[lambda meta: (wb.cdiv(200, meta["B"]),)](x, out, 200)
    np.testing.assert_array_equal(out, x * 3)
    assert tuned.best_config in configs


def test_config_ir_override_and_an_empty_prune_are_refused():
    with pytest.raises(LaunchError, match="ir_override"):
        wb.Config({"B": 16}, ir_override="kernel.ttgir")
    tuned = wb.autotune([wb.Config({"B": 16})], key=["n"],
                        prune_configs_by={"early_config_prune": lambda c, a, **k: []})(
        wb.jit(scale_kernel.fn))
    x = np.zeros(16, np.float32)
    with pytest.raises(wb.runtime.errors.AutotunerError, match="at least one config"):
        tuned[(1,)](x, x, 16)
    assert issubclass(wb.runtime.errors.AutotunerError, wb.TritonError)


def test_gpu_helpers_of_testing_say_what_they_need():
    if wb.runtime.driver.active.get_current_target().backend == "cuda":
        pytest.skip("a CUDA device is active: the gpu test below checks the figures")
    for f in (lambda: wb.testing.get_dram_gbps(),
              lambda: wb.testing.get_max_tensorcore_tflops(tl.float16, 1_500_000),
              lambda: wb.testing.get_max_simd_tflops(tl.float32, 1_500_000)):
        with pytest.raises(TargetError, match="no CUDA device is active"):
            f()
    if shutil.which("nvidia-smi") is None:
        with pytest.raises(ToolMissingError, match="nvidia-smi"):
            wb.testing.nvsmi(["clocks.current.sm"])


@pytest.mark.gpu
def test_gpu_figures_of_testing_on_the_device():
    """On the GPU: DRAM bandwidth from clock x bus width (an H200's HBM3e: about 4.8 TB/s),
    and peak figures that scale with the clock given, fp16 tensor cores 16x the fp32 SIMD
    rate (Triton's per-sub-core counts)."""
    props = wb.runtime.driver.active.utils.get_device_properties(0)
    gbps = wb.testing.get_dram_gbps()
    assert gbps == pytest.approx(props["mem_clock_rate"] * props["mem_bus_width"] * 2 / 8e6)
    assert 1000 < gbps < 10000
    clock = props["sm_clock_rate"]  # kHz
    tc = wb.testing.get_max_tensorcore_tflops(tl.float16, clock)
    simd = wb.testing.get_max_simd_tflops(tl.float32, clock)
    # SMs x 4 x clock x 32 FLOPs (Triton's count): 33 TFLOP/s on an H200 at 1980 MHz
    assert tc == pytest.approx(16 * simd) and 10 < simd < 200
    assert wb.testing.get_max_tensorcore_tflops(tl.float16, clock / 2) == pytest.approx(tc / 2)


@wb.jit
def rand_kernel(out_ptr, seed, N: tl.constexpr):
    offs = tl.arange(0, N)
    a, b, c, d = tl.rand4x(seed, offsets=offs)
    e, f, g, h = tl.rand4x(seed, offs)
    tl.store(out_ptr + offs, a + b * 2 + c * 4 + d * 8 - (e + f * 2 + g * 4 + h * 8))
    tl.store(out_ptr + N + offs, a)


def test_renamed_parameters_take_tritons_keywords(backend, rng):
    out = np.full(64, np.nan, np.float32)
    launch(backend, rand_kernel, (1,), out, int(rng.integers(1, 2**31)), N=32)
    assert (out[:32] == 0).all() and ((out[32:] >= 0) & (out[32:] < 1)).all()
    n, d = (int(v) for v in rng.integers(1, 10_000, 2))
    assert wb.cdiv(x=n, y=d) == -(-n // d)


@wb.jit
def print_kernel(x_ptr, BUF: tl.constexpr):
    tl.static_print("block", x_ptr.dtype, 7, sep="|", file=BUF, flush=True)


def test_static_print_writes_to_the_file_given():
    buf = io.StringIO()
    wb.compile(print_kernel, "*fp16", BUF=buf, target="interpreter")
    assert buf.getvalue() == "block|pointer<fp16>|7\n"


def test_knob_sets_of_absent_backends_say_why():
    with pytest.raises(AttributeError, match="no AMD backend"):
        wb.knobs.amd  # noqa: B018
    wb.knobs.refresh_knobs()


@wb.jit
def sass_kernel(x_ptr):
    tl.store(x_ptr + tl.arange(0, 16), 1.0)


def test_get_sass_disassembles_a_cubin():
    from workbench.backends.nvidia_tools import find_tool
    from workbench.tools import disasm
    if find_tool("ptxas") is None or find_tool("nvdisasm") is None:
        pytest.skip("needs ptxas and nvdisasm (the sass extra)")
    k = wb.compile(sass_kernel, "*fp32", target="cuda:90")
    sass = disasm.get_sass(k.extra["cubin"])
    assert sass == k.asm["sass"] and "STG.E" in sass
    assert disasm.get_sass(k.extra["cubin"], k.name).lstrip().startswith(".section\t.text.")
    with pytest.raises(TypeError, match="extra\\['cubin'\\]"):
        disasm.get_sass(k.asm["cubin"])
    with pytest.raises(KeyError):
        disasm.get_sass(k.extra["cubin"], "no_such_kernel")


def test_pre_run_hooks_see_each_launch_and_version_changes_the_cache_key(rng):
    seen = []
    jf = wb.jit(scale_kernel.fn)
    jf.add_pre_run_hook(lambda *args, **kwargs: seen.append((len(args), sorted(kwargs))))
    x = rng.standard_normal(40).astype(np.float32)
    out = np.zeros_like(x)
    for _ in range(2):
        jf[(1,)](x, out, 40, B=64)
    np.testing.assert_array_equal(out, x * 3)
    assert seen == [(3, ["B"]), (3, ["B"])]
    with pytest.raises(TypeError):
        jf.add_pre_run_hook(3)
    assert wb.jit(version=2)(scale_kernel.fn).cache_key != jf.cache_key
    assert wb.jit(version=None)(scale_kernel.fn).cache_key == jf.cache_key


@pytest.mark.gpu
def test_mock_tensor_warmup_compiles_for_the_gpu():
    torch = pytest.importorskip("torch")
    jf = wb.jit(scale_kernel.fn)
    k = jf.warmup(torch.float16, torch.float16, 64, B=64, grid=(1,))
    assert k.target.backend == "cuda" and "!tt.ptr<f16>" in k.asm["ttir"]
    x = torch.randn(64, device="cuda", dtype=torch.float16)
    out = torch.empty_like(x)
    jf[(1,)](x, out, 64, B=64)
    assert torch.equal(out, x * 3) and len(jf.cache) == 1  # the warmed-up kernel was used


def test_active_driver_answers_on_the_host(rng):
    active = wb.runtime.driver.active
    if active.get_current_target().backend == "cuda":
        pytest.skip("a CUDA device is active: torch.cuda answers there")
    dev = active.get_device_interface()
    dev.synchronize()
    assert (dev.current_device(), dev.device_count(), active.get_current_stream()) == (0, 1, 0)
    with pytest.raises(ValueError):
        active.set_current_device(1)
    cache = active.get_empty_cache_for_benchmark()
    cache[rng.integers(0, cache.size, 8)] = 5
    active.clear_cache(cache)
    assert cache.nbytes == 256 << 20 and not cache.any()
    bench = active.get_benchmarker()
    assert bench is wb.testing.do_bench and bench(lambda: None, rep=2) >= 0
