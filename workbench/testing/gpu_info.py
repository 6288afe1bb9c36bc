"""Triton's GPU helpers of ``triton.testing``: peak figures from the device's properties
(:func:`get_dram_gbps`, :func:`get_max_simd_tflops`, :func:`get_max_tensorcore_tflops`), the
``nvidia-smi`` wrappers (:func:`nvsmi`, :func:`set_gpu_clock`) and :func:`cuda_memcheck`.

They need an NVIDIA GPU and its driver tools, as in Triton; where there is none they raise
:class:`~workbench.errors.TargetError` (no CUDA device) or
:class:`~workbench.errors.ToolMissingError` (no ``nvidia-smi``, no ``compute-sanitizer``)
saying so, never an error from inside the package. The workbench's own measured ceilings
(any machine) are :func:`workbench.testing.ceilings`.

Formulas (as Triton's ``testing.py``): DRAM bytes/s = memory clock (kHz) x bus width (bits)
x 2 (double data rate) / 8; peak FLOP/s = SMs x 4 sub-cores x clock (kHz) x FLOPs per
sub-core per clock, the per-clock figures of the CUDA C Programming Guide's arithmetic
instruction throughput table (FMA = 2 FLOPs) and Triton's tensor-core table.
"""
from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys

from ..config import child_env
from ..errors import TargetError, ToolMissingError
from ..runtime.driver import driver

# FLOPs per sub-core per clock: (compute capability >= 8.0, dtype name) -> figure
_SIMD = {(False, "float32"): 32, (False, "float16"): 64,
         (True, "float32"): 32, (True, "float16"): 64, (True, "bfloat16"): 64}
_TENSOR_CORE = {(False, "float16"): 256,
                **{(True, n): 256 for n in ("float32", "int32")},
                **{(True, n): 512 for n in ("float16", "bfloat16", "int16")},
                **{(True, n): 1024 for n in ("int8", "float8e4nv", "float8e4b15", "float8e5",
                                             "float8_e4m3fn", "float8_e5m2")}}


def _cuda_properties(what: str, device=None) -> tuple[dict, int]:
    """The CUDA device's properties and its compute capability as an int (90); TargetError
    when the active driver is not a CUDA device."""
    target = driver.active.get_current_target()
    if target.backend != "cuda":
        raise TargetError(f"triton.testing.{what} reads an NVIDIA GPU's properties, and no "
                          "CUDA device is active here (the workbench runs on the host); use "
                          "workbench.testing.ceilings() for this machine's measured figures")
    index = driver.active.get_current_device() if device is None else device
    if not isinstance(index, int):
        index = getattr(index, "index", None) or 0  # a torch.device
    return driver.active.utils.get_device_properties(index), target.arch


def _dtype_name(dtype) -> str:
    """``"float16"`` for torch.float16, tl.float16 or numpy's float16."""
    if hasattr(dtype, "short_name"):  # a tl dtype
        return dtype.name
    return str(dtype).replace("torch.", "")


def get_dram_gbps(device=None) -> float:
    """Peak DRAM bandwidth of the CUDA device in GB/s (1e9 bytes/s), from its memory clock
    and bus width. Raises TargetError without a CUDA device."""
    props, _ = _cuda_properties("get_dram_gbps", device)
    return props["mem_clock_rate"] * props["mem_bus_width"] * 2 / 1e6 / 8


def _peak(table: dict, what: str, dtype, clock_rate, device) -> float:
    props, arch = _cuda_properties(what, device)
    per_clock = table.get((arch >= 80, _dtype_name(dtype)))
    if per_clock is None:
        raise TypeError(f"triton.testing.{what}: dtype {dtype} is not supported (sm_{arch})")
    return props["multiprocessor_count"] * 4 * clock_rate * per_clock * 1e-9


def get_max_simd_tflops(dtype, clock_rate, device=None) -> float:
    """Peak non-tensor-core TFLOP/s for ``dtype`` (torch or tl float32/float16/bfloat16) at
    ``clock_rate`` kHz. Raises TargetError without a CUDA device, TypeError for another
    dtype."""
    return _peak(_SIMD, "get_max_simd_tflops", dtype, clock_rate, device)


def get_max_tensorcore_tflops(dtype, clock_rate, device=None) -> float:
    """Peak tensor-core TFLOP/s (dense) for ``dtype`` (fp32/tf32, fp16, bf16, int8, fp8) at
    ``clock_rate`` kHz. Raises TargetError without a CUDA device, TypeError for another
    dtype."""
    return _peak(_TENSOR_CORE, "get_max_tensorcore_tflops", dtype, clock_rate, device)


def _tool(name: str, what: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ToolMissingError(f"triton.testing.{what} runs {name}, which is not installed "
                               "here (it comes with the NVIDIA driver or CUDA toolkit)")
    return path


def nvsmi(attrs) -> list[int]:
    """``nvidia-smi --query-gpu=<attrs>`` for GPU 0 as ints (e.g. ``["clocks.current.sm"]``
    gives ``[1980]``, MHz). Raises ToolMissingError without nvidia-smi."""
    cmd = [_tool("nvidia-smi", "nvsmi"), "-i", "0", "--query-gpu=" + ",".join(attrs),
           "--format=csv,noheader,nounits"]
    out = subprocess.check_output(cmd).decode(sys.stdout.encoding or "utf-8")
    return [int(x) for x in out.split(",")]


@contextlib.contextmanager
def set_gpu_clock(ref_sm_clock: int = 1350, ref_mem_clock: int = 1215):
    """Lock GPU 0's SM and memory clocks (MHz) with nvidia-smi for the ``with`` block (needs
    the rights to do so) and yield ``(peak fp16 tensor TFLOP/s, DRAM GB/s)`` at those
    clocks; the clocks are unlocked on exit. Raises ToolMissingError without nvidia-smi."""
    smi = _tool("nvidia-smi", "set_gpu_clock")
    props, arch = _cuda_properties("set_gpu_clock")
    try:
        subprocess.check_output([smi, "-i", "0", "-pm", "1"])
        subprocess.check_output([smi, "-i", "0", f"--lock-gpu-clocks={ref_sm_clock},"
                                 f"{ref_sm_clock}"])
        subprocess.check_output([smi, "-i", "0", f"--lock-memory-clocks={ref_mem_clock},"
                                 f"{ref_mem_clock}"])
        sm, mem = nvsmi(["clocks.current.sm"])[0], nvsmi(["clocks.current.memory"])[0]
        if abs(sm - ref_sm_clock) >= 10 or abs(mem - ref_mem_clock) >= 10:
            raise AssertionError(f"GPU clocks are {sm}/{mem} MHz, not the {ref_sm_clock}/"
                                 f"{ref_mem_clock} MHz asked")
        per_clock = _TENSOR_CORE[(arch >= 80, "float16")]
        tflops = props["multiprocessor_count"] * 4 * per_clock * ref_sm_clock * 1e-6
        gbps = props["mem_bus_width"] / 8 * 2 * ref_mem_clock * 1e-3
        yield tflops, gbps
    finally:
        for flag in ("-pm 0", "-rgc", "-rmc"):
            subprocess.run([smi, "-i", "0", *flag.split()], check=False)


def _under_sanitizer() -> bool:
    try:
        with open(f"/proc/{os.getppid()}/comm") as f:
            return f.read().strip() in ("compute-sanitizer", "cuda-memcheck")
    except OSError:
        return False


def cuda_memcheck(**target_kwargs):
    """Decorator for a pytest test taking a ``request`` fixture: when the test's parameters
    include ``target_kwargs``, rerun that test case under NVIDIA's ``compute-sanitizer`` and
    fail unless it reports 0 errors (other cases run normally). Raises ToolMissingError
    when compute-sanitizer is not installed."""
    def decorator(test_fn):
        @functools.wraps(test_fn)
        def wrapper(*args, **kwargs):
            if not target_kwargs.items() <= kwargs.items() or _under_sanitizer():
                return test_fn(*args, **kwargs)
            tool = _tool("compute-sanitizer", "cuda_memcheck")
            if "request" not in kwargs:
                raise TypeError("a cuda_memcheck test must take the `request` fixture")
            path = os.path.realpath(test_fn.__globals__["__file__"])
            case = f"{path}::{test_fn.__name__}[{kwargs['request'].node.callspec.id}]"
            env = child_env(PYTORCH_NO_CUDA_MEMORY_CACHING="1")
            out = subprocess.run([tool, sys.executable, "-m", "pytest", "-vs", case],
                                 capture_output=True, env=env)
            assert out.returncode == 0, "compute-sanitizer found an error (bounds checking)"
            assert "ERROR SUMMARY: 0 errors" in out.stdout.decode(errors="replace")
        return wrapper
    return decorator
