"""The CPU backend: ttir -> host LLVM IR (llvmlite) -> O3 -> MCJIT, launched over the grid
in native code split across worker threads.

Stages: ``llir`` (optimised LLVM IR with ``!dbg`` locations) and ``asm`` (host assembly with
``.loc`` directives), each with a per-line source map from :mod:`workbench.codegen.lineinfo`.
Out-of-bounds accesses (checked unless ``Options.bounds_check`` is False) raise
:class:`workbench.errors.OutOfBoundsError` from the launcher.
"""
from __future__ import annotations

import time

import llvmlite

from ...codegen.cpu.compile import build_module, jit
from ...codegen.lineinfo import directive_line_locs, llir_line_locs
from ..base import Backend, BackendResult, KernelMetadata, Stage
from .launcher import CpuLauncher


class CpuBackend(Backend):
    """Compiles ttir for the host CPU. ``compile(ttir, spec, options, ctx)`` ->
    BackendResult with stages ``llir`` and ``asm`` and a launcher ``(grid3, args)``.
    Timings (seconds) go to ``ctx.timings["llir"]`` (lowering + optimisation), ``["asm"]``
    and ``["jit"]``. Raises UnsupportedError for ops the backend cannot lower."""

    stage_names = ("llir", "asm")

    def compile(self, ttir_module, spec, options, ctx) -> BackendResult:
        t0 = time.perf_counter()
        host = build_module(ttir_module, options)
        t1 = time.perf_counter()
        res = jit(host)
        timings = getattr(ctx, "timings", None)
        if timings is not None:
            timings["llir"] = timings.get("llir", 0.0) + (t1 - t0) + res.timings["llir"]
            timings["asm"] = timings.get("asm", 0.0) + res.timings["asm"]
            timings["jit"] = timings.get("jit", 0.0) + res.timings["jit"]
        lw = host.lowering
        func = lw.func
        names = list(func.attributes.get("arg_names") or [])
        if len(names) != len(lw.param_types):
            passed = [a.name for a in spec.passed] if spec is not None else []
            names = passed if len(passed) == len(lw.param_types) else \
                [f"arg{i}" for i in range(len(lw.param_types))]
        launcher = CpuLauncher(res.engine, res.address, lw.name, names, lw.param_types,
                               lw.arena_bytes, lw.mem_ops)
        stages = [Stage("llir", res.llir, llir_line_locs(res.llir)),
                  Stage("asm", res.asm, directive_line_locs(res.asm))]
        meta = KernelMetadata(name=lw.name, target=str(self.target),
                              num_warps=options.num_warps, num_stages=options.num_stages,
                              shared=0)
        return BackendResult(stages, meta, launcher, None,
                             {"scratch_bytes": lw.arena_bytes})

    def cache_key(self) -> tuple:
        import llvmlite.binding as llvm
        return (str(self.target), llvmlite.__version__, llvm.get_host_cpu_name(),
                llvm.get_host_cpu_features().flatten())
