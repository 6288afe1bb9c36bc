"""Helpers for tests and users: example kernels (``workbench.testing.examples``) and
:func:`do_bench` (Triton's ``triton.testing.do_bench``, milliseconds; it lives in
:mod:`workbench.runtime.bench`, which the autotuner uses too).

Measuring: :func:`ceilings` (this machine's memory bandwidth and FLOP/s per dtype,
measured by the workbench's own micro-kernels, cached), :func:`count_work` (FLOPs and bytes of a
launch from its IR, or exactly on the interpreter), :class:`Run` (a timed launch: a roofline
point), :func:`launch` / :func:`measure` (time one launch) and :func:`sweep` (Triton's
``perf_report`` idea: sizes or configs against baselines). Triton's ``assert_close`` and
``do_bench_cudagraph`` (timed without graph capture) are in :mod:`.asserts`; its GPU
figures and nvidia-smi helpers (``get_dram_gbps``, ``nvsmi``...) in :mod:`.gpu_info`. None of them
imports matplotlib; plots live in :mod:`workbench.viz` (``roofline``, ``sweep_view``,
``autotune_view``).
"""
from ..runtime.bench import do_bench
from ..runtime.perf_report import Benchmark, Mark, perf_report
from .asserts import assert_close, do_bench_cudagraph
from .ceilings import Ceilings, ceilings
from .gpu_info import (
    cuda_memcheck,
    get_dram_gbps,
    get_max_simd_tflops,
    get_max_tensorcore_tflops,
    nvsmi,
    set_gpu_clock,
)
from .sweep import Launch, SweepResult, launch, measure, sweep
from .tuned import NotTunedError
from .work import Run, Work, WorkCountError, count_work

__all__ = ["Benchmark", "Ceilings", "Launch", "Mark", "NotTunedError", "Run", "SweepResult",
           "Work", "WorkCountError", "perf_report",
           "assert_close", "ceilings", "count_work", "do_bench", "do_bench_cudagraph", "launch",
           "measure", "sweep", "cuda_memcheck", "get_dram_gbps", "get_max_simd_tflops",
           "get_max_tensorcore_tflops", "nvsmi", "set_gpu_clock"]
