"""NVPTX code generation: ttgir -> LLVM IR (thread by thread from the layouts) -> PTX.

Public entry points: :func:`compile_ttgir` (both stages at once), :func:`lower_module`
(ttgir -> unoptimised LLVM IR), :func:`workbench.codegen.nvptx.ptx.optimise` and ``emit_ptx``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from .lower import LoweredKernel, lower_module


@dataclass
class NvptxOutput:
    """``llir``: optimised LLVM IR text (with ``!dbg``); ``ptx``: PTX text; ``name``: the entry
    name; ``shared``: bytes of dynamic shared memory; ``num_warps``; ``shared_accesses``: one
    dict per shared-memory access (op, loc, layout, conflict_degree, wavefronts...);
    ``global_scratch``: bytes of global scratch per program (0: no trailing parameter)."""

    llir: str
    ptx: str
    name: str
    shared: int
    num_warps: int
    shared_accesses: list = field(default_factory=list)
    global_scratch: int = 0


def compile_ttgir(module_op, arch: int = 90, opt: int = 3,
                  fp_fusion: bool = True, timings: dict | None = None,
                  reflect_ftz: bool = True) -> NvptxOutput:
    """Lower a ttgir module and emit PTX for ``sm_<arch>`` (80, 86, 89, 90); the warps per
    program come from the module's ``"ttg.num-warps"`` attribute; ``opt``: LLVM -O level;
    ``fp_fusion``: fp32 multiplies and adds may fuse into ``fma`` (``enable_fp_fusion``);
    ``timings``: a dict that gets the seconds (wall) of the three steps added under ``llir``
    (lowering to LLVM IR text), ``llvm-opt`` (parsing, verifying, LLVM's pipeline) and ``ptx``
    (LLVM's NVPTX code generator); ``reflect_ftz``: the ``enable_reflect_ftz`` option
    (:func:`~.lower.lower_module`).

    Raises UnsupportedError / CompilationError from the lowering, ValueError for an unknown
    arch, RuntimeError when LLVM rejects the IR (a bug)."""
    from .gep_groups import hide_large_gep_groups
    from .hoisted_offsets import split_hoisted_mul_wide
    from .mad_wide import fuse_mad_wide
    from .ptx import emit_ptx, optimise, parse_optimised

    t0 = time.perf_counter()
    lowered = lower_module(module_op, arch=arch, fp_fusion=fp_fusion, reflect_ftz=reflect_ftz)
    t1 = time.perf_counter()
    # tensormap.replace / cp_fenceproxy need PTX ISA 8.3; Triton's 8.7 needs no stride fix
    version = 87 if lowered.global_scratch else None
    if version is None and arch < 89 and "createpolicy" in lowered.text:
        version = 74  # an eviction_policy's createpolicy / .L2::cache_hint need PTX ISA 7.4
    text, mod = optimise(lowered.text, arch, opt, version)
    t2 = time.perf_counter()
    # large groups of addresses sharing an index or a base: out of LLVM 22's SLSR's reach
    # (quadratic there); ``text`` (the llir stage) stays the -O3 output
    codegen_text, hidden = hide_large_gep_groups(text)
    if hidden:
        mod = parse_optimised(codegen_text, arch, version)
    # the two PTX forms Triton's LLVM writes for addresses: mad.wide within a block,
    # cvt + shl for an offset hoisted out of a loop (ptxas assembles each differently)
    ptx = split_hoisted_mul_wide(fuse_mad_wide(emit_ptx(mod, arch, version)))
    if timings is not None:
        for key, dt in (("llir", t1 - t0), ("llvm-opt", t2 - t1),
                        ("ptx", time.perf_counter() - t2)):
            timings[key] = timings.get(key, 0.0) + dt
    return NvptxOutput(text, ptx, lowered.name, lowered.shared, lowered.num_warps,
                        lowered.shared_accesses or [], lowered.global_scratch)


__all__ = ["compile_ttgir", "lower_module", "LoweredKernel", "NvptxOutput"]
