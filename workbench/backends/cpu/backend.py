"""The CPU backend: ttir -> host LLVM IR (llvmlite) -> O3 -> MCJIT, launched over the grid
in native code split across worker threads.

Stages: ``llir`` (optimised LLVM IR with ``!dbg`` locations) and ``asm`` (host assembly with
``.loc`` directives), each with a per-line source map from :mod:`workbench.codegen.lineinfo`.
Out-of-bounds accesses (checked unless ``Options.bounds_check`` is False) raise
:class:`workbench.errors.OutOfBoundsError` from the launcher.

Cache entry (:meth:`CpuBackend.pack`): the optimised LLVM IR, the launcher's parameter table
and memory-op table (with source locations), and the machine code once a reload has
generated it (MCJIT's object cache), so later reloads skip code generation.
"""
from __future__ import annotations

import time

import llvmlite
import llvmlite.binding as llvm

from ...codegen.cpu.compile import build_module, host_features, jit, target_machine
from ...codegen.lineinfo import directive_line_locs, llir_line_locs
from ...ir.clone import clone_module
from ...ir.parser import TypeParser
from ...passes.decompose_scaled_dot import decompose_all
from ...passes.expand_map_elementwise import expand_map_elementwise
from ...passes.inline_calls import inline_calls
from ..base import Backend, BackendResult, KernelMetadata, Loaded, Stage
from ..descriptors import ExpandingLauncher, lower_descriptors, wrap_launcher
from ..entry import LocationTable, locations_from_rows, pack_parts, unpack_parts
from ..limits import host_scratch_check
from .launcher import CpuLauncher


class CpuBackend(Backend):
    """Compiles ttir for the host CPU. ``compile(ttir, spec, options, ctx)`` ->
    BackendResult with stages ``llir`` and ``asm`` and a launcher ``(grid3, args)``.
    Timings (seconds) go to ``ctx.timings["llir"]`` (lowering + optimisation), ``["asm"]``
    and ``["jit"]``. Raises UnsupportedError for ops the backend cannot lower."""

    stage_names = ("llir", "asm")

    def compile(self, ttir_module, spec, options, ctx) -> BackendResult:
        t0 = time.perf_counter()
        ttir_module = decompose_all(ttir_module)  # tt.dot_scaled as on sm_90
        ttir_module = expand_map_elementwise(inline_calls(ttir_module))
        host = build_module(lower_descriptors(ttir_module, clone_module), options)
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
        launcher = wrap_launcher(CpuLauncher(res.engine, res.address, lw.name, names,
                                             lw.param_types, lw.arena_bytes, lw.mem_ops),
                                 ttir_module)
        stages = [Stage("llir", res.llir, llir_line_locs(res.llir)),
                  Stage("asm", res.asm, directive_line_locs(res.asm))]
        meta = KernelMetadata(name=lw.name, target=str(self.target),
                              num_warps=options.num_warps, num_stages=options.num_stages,
                              shared=0)
        return BackendResult(stages, meta, launcher, None,
                             {"scratch_bytes": lw.arena_bytes,
                              "limits": [host_scratch_check(lw.arena_bytes).to_json()]})

    def cache_key(self) -> tuple:
        return (str(self.target), llvmlite.__version__, llvm.get_host_cpu_name(),
                llvm.get_host_cpu_features().flatten())

    def host_features(self) -> str:
        """The LLVM feature string of the CPU this backend compiles for (``"+avx2,+fma,..."``,
        see :func:`workbench.codegen.cpu.compile.host_features`)."""
        return host_features()

    def pack(self, kernel) -> bytes | None:
        """The optimised LLVM IR (``kernel.asm["llir"]``) and the launcher's tables; None when
        the kernel has no CPU launcher."""
        launcher = kernel.launcher
        expanding = isinstance(launcher, ExpandingLauncher)
        if expanding:
            launcher = launcher.inner
        if not isinstance(launcher, CpuLauncher):
            return None
        return _pack(launcher, kernel.asm["llir"], None, expanding)

    def load(self, data: bytes) -> Loaded:
        """Parse the stored LLVM IR, generate (or reuse the stored) machine code through
        MCJIT, and rebuild the launcher. The first load of an entry without machine code
        returns the entry with it as ``repacked``."""
        meta, parts = unpack_parts(data)
        mod = llvm.parse_assembly(meta["llir"])
        mod.verify()
        engine = llvm.create_mcjit_compiler(mod, target_machine())
        obj = parts.get("object")
        got: dict = {}
        engine.set_object_cache(lambda _m, buf: got.setdefault("obj", bytes(buf)),
                                lambda _m: obj)
        engine.finalize_object()
        address = engine.get_function_address(meta["name"] + "_grid")
        if not address:
            raise ValueError("grid function missing")
        locs = locations_from_rows(meta["locs"])
        ops = [(k, locs[i] if i is not None else None, p) for k, i, p in meta["mem_ops"]]
        types = [TypeParser(t).type() for t in meta["param_types"]]
        launcher = CpuLauncher(engine, address, meta["name"], meta["param_names"], types,
                               meta["arena_bytes"], ops)
        repacked = None
        expanding = bool(meta.get("descriptors"))
        if obj is None and got.get("obj"):
            repacked = _pack(launcher, meta["llir"], got["obj"], expanding)
        return Loaded(ExpandingLauncher(launcher) if expanding else launcher, repacked=repacked)


def _pack(launcher: CpuLauncher, llir: str, obj: bytes | None,
          descriptors: bool = False) -> bytes:
    table = LocationTable()
    ops = [[k, table.index(loc), p] for k, loc, p in launcher.mem_ops]
    meta = {"llir": llir, "name": launcher.name, "param_names": launcher.param_names,
            "param_types": [str(t) for t in launcher.param_types],
            "arena_bytes": launcher.arena_bytes, "mem_ops": ops, "locs": table.rows,
            "descriptors": descriptors}
    return pack_parts(meta, {"object": obj} if obj else None)
