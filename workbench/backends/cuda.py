"""The CUDA backend: ttir -> ttgir -> NVPTX LLVM IR -> PTX [-> cubin -> SASS], and a launcher.

Stages (Triton's names): ``ttgir`` (after :func:`workbench.passes.pipelines.ttgir_passes`),
``llir`` (optimised NVPTX LLVM IR with ``!dbg``), ``ptx`` (llvmlite's NVPTX back end, no GPU
needed), and where NVIDIA's tools are installed (``sass`` extra) ``cubin`` (a readable summary;
the bytes are ``extra["cubin"]``) and ``sass`` (``nvdisasm``). Missing tools omit those stages
with a note in ``extra["notes"]``, which also says why a K loop's operand loads were not
software-pipelined although ``num_stages > 1`` (``tritongpu-pipeline``'s notes). Launching
needs cuda-bindings and a GPU; without them ``launch_error`` says which is missing and the
launcher raises ToolMissingError.

Cache entry (:meth:`CudaBackend.pack`): the image the driver loads (the cubin where ptxas ran,
else the PTX), the kernel's name, its parameter kinds, ``num_warps`` and its shared memory.
"""
from __future__ import annotations

import time
from typing import Any

from ..codegen.lineinfo import directive_line_locs, llir_line_locs
from ..config import arch_capability
from ..errors import TargetOptionError, ToolMissingError, UnsupportedError
from ..ir.clone import clone_module
from ..ir.core import Operation, functions
from ..ir.parser import parse_module
from ..ir.printer import print_module_with_map
from ..ir.types import FloatType, IntType, PointerType, TensorDescType, TensorType
from ..passes.rewrite_descriptors import has_descriptors
from ..passes.tma_lowering import TMA_ALIGN, tensormap_meta, tma_only_reduce, tma_unsupported
from . import cuda_driver, cuda_fault, limits, nvidia_tools
from .base import Backend, BackendResult, KernelMetadata, Loaded, Stage
from .descriptors import (
    ExpandingLauncher,
    ScratchLauncher,
    TmaLauncher,
    lower_descriptors,
    wrap_launcher,
)
from .entry import pack_parts, unpack_parts
from .lazy import LazyText


def _fit(locs: list, text: str) -> list:
    """Pad or trim a line map to one entry per ``text.splitlines()`` line (the team's
    convention, as :mod:`workbench.codegen.lineinfo` and the IR printer)."""
    n = len(text.splitlines())
    return (list(locs) + [None] * n)[:n]


def ptx_line_locs(ptx: str) -> list:
    """Line map of PTX. LLVM's NVPTX printer puts the ``.file`` table after the function, so
    the table is read first (prepended, then its entries dropped) and
    :func:`workbench.codegen.lineinfo.directive_line_locs` maps ``.loc`` lines to files."""
    files = [ln for ln in ptx.splitlines() if ln.lstrip().startswith(".file")]
    return _fit(directive_line_locs("\n".join(files + [ptx]))[len(files):], ptx)


def _needs_layouts(module: Operation) -> bool:
    for op in module.walk():
        for v in list(op.results) + list(op.operands):
            if isinstance(v.type, TensorType) and v.type.encoding is None:
                return True
    return False


def param_kind(t) -> str:
    """Launch kind of a kernel parameter type: ``"ptr"``, ``"i32"``, ``"i64"``, ``"f32"``...,
    ``"tma"`` for a TMA descriptor (its 128-byte ``CUtensorMap``)."""
    if isinstance(t, TensorDescType):
        return "tma"
    if isinstance(t, PointerType):
        return "ptr"
    if isinstance(t, IntType):
        return f"i{t.width}"
    if isinstance(t, FloatType):
        return t.name
    raise ToolMissingError(f"cannot pass a parameter of type {t} to a CUDA kernel")


def tma_choice(ttir_module: Operation, options, arch: int) -> tuple[bool, str | None]:
    """Whether the kernel's tensor descriptors go through the TMA unit (``cuda:90``, the
    ``cuda_tma`` option on, every descriptor one :mod:`workbench.passes.tma_lowering` takes),
    and a note saying why not when a kernel with descriptors on sm_90 falls back to masked
    pointer accesses (None otherwise). Raises UnsupportedError (at the user's line) when it
    falls back but has a float16/bfloat16 descriptor ``atomic_min``/``atomic_max``, which only
    the TMA unit performs."""
    if arch < 90 or not has_descriptors(ttir_module):
        return False, None
    reason: str | None = "TMA is off (cuda_tma=False / WORKBENCH_CUDA_TMA=0)"
    if getattr(options, "cuda_tma", True):
        reason = tma_unsupported(ttir_module)
    if reason is None:
        return True, None
    op = tma_only_reduce(ttir_module)
    if op is not None:
        elem = getattr(op.operands[-1].type, "element", "?")
        raise UnsupportedError(
            f"descriptor atomic_{op.attributes['kind']} of {elem} needs the TMA unit, but this "
            f"kernel's descriptors cannot use it: {reason}", op.loc,
            "turn TMA on, or keep the descriptor to what TMA serves (rank 2, not carried by a "
            "loop or an if, a 16-byte aligned base), or use an integer dtype")
    return False, f"tensor descriptors lowered to masked pointer accesses, not TMA: {reason}"


def _wrap(inner, metas: list, scratch: int, ttir_module):
    """The launcher of a compiled kernel: host TMA descriptors encoded (:class:`TmaLauncher`),
    global scratch allocated (:class:`ScratchLauncher`, outermost so the runtime finds it),
    or pointer-lowered descriptors expanded (``ttir_module`` given)."""
    launcher = inner
    if metas:
        launcher = TmaLauncher(launcher, metas)
    elif ttir_module is not None:
        launcher = wrap_launcher(launcher, ttir_module)
    if scratch:
        launcher = ScratchLauncher(launcher, scratch, TMA_ALIGN)
    return launcher


def lazy_sass(cubin: bytes, nvdisasm: str, timings: dict) -> LazyText:
    """The SASS stage of ``cubin``, disassembled by ``nvdisasm`` when first read (its time
    then goes to ``timings["sass"]``, seconds), with its line map."""
    def make():
        t0 = time.perf_counter()
        sass = nvidia_tools.disassemble(cubin, nvdisasm)
        timings["sass"] = timings.get("sass", 0.0) + time.perf_counter() - t0
        return sass, _fit(nvidia_tools.sass_line_locs(sass), sass)
    return LazyText(make)


#: the compute capabilities whose decisions the CUDA backend makes (``arch`` option)
DECISION_ARCHS = (80, 86, 89, 90)


def decision_arch(options, device_arch: int) -> int:
    """The compute capability whose decisions a compile makes: the ``arch`` option's
    (``"sm80"`` -> 80; Triton's ``arch`` / ``TRITON_OVERRIDE_ARCH``), else ``device_arch``.
    Raises :class:`TargetOptionError` for an ``arch`` outside :data:`DECISION_ARCHS`, and,
    as Triton's ``parse_options``, for ``num_ctas > 1`` below sm_90."""
    text = getattr(options, "arch", None)
    arch = arch_capability(text) if text else device_arch
    if text and arch not in DECISION_ARCHS:
        raise TargetOptionError(
            f"arch={text!r}: the CUDA backend makes the decisions of "
            f"{', '.join(f'sm{a}' for a in DECISION_ARCHS)} only")
    if getattr(options, "num_ctas", 1) > 1 and arch < 90:
        raise TargetOptionError(
            f"num_ctas > 1 requires NVIDIA SM90+ (Hopper). Current target is sm_{arch}. "
            f"This configuration will fail. Please set num_ctas=1 or target an SM90+ GPU.")
    return arch


def _check_threads(module: Operation, num_warps: int, device) -> None:
    """Raise OutOfResources (pointing at the kernel's ``def``) when ``num_warps`` warps of 32
    threads are more than a block may have; checked before any layout is chosen."""
    check = limits.gpu_checks(num_warps, 0, None, device)[0]
    if not check.ok:
        funcs = functions(module)
        name = funcs[0].attributes.get("sym_name") if funcs else None
        raise check.error(name, funcs[0].loc if funcs else None)


class _Unavailable:
    """Launcher of a target that cannot run here: raises ToolMissingError(reason)."""

    def __init__(self, reason: str):
        self.reason = reason

    def __call__(self, grid3, args, stream=0):
        cuda_fault.raise_if_faulted()  # the GPU is here but its context is broken
        raise ToolMissingError(self.reason)


class CudaBackend(Backend):
    """NVIDIA GPUs (``cuda:80``, ``cuda:90``). ``compile(ttir, spec, options, ctx)`` ->
    BackendResult. Timings in seconds go to ``ctx.timings`` under ``ttgir`` (passes, cloning,
    printing), ``llir+ptx`` and inside it ``llir``, ``llvm-opt``, ``ptx``; then ``cubin``
    (ptxas) and ``sass`` (when read). Raises UnsupportedError / CompilationError for kernels
    the backend cannot lower, :class:`~workbench.backends.nvidia_tools.PtxasError` when ptxas
    rejects the PTX (a bug). ``extra["shared_accesses"]``: one dict per shared-memory access of the
    kernel: ``op``, ``loc`` (source location text), ``layout`` (the shared encoding),
    ``access_layout``, ``vector_bytes``, ``conflict_degree`` (wavefronts / ideal, 1.0 = no
    conflict, from :func:`workbench.layouts.bank_conflicts`) and ``wavefronts`` (per warp,
    summed over the access's requests)."""

    def __init__(self, target):
        super().__init__(target)
        self.ptxas = nvidia_tools.find_tool("ptxas")
        self.nvdisasm = nvidia_tools.find_tool("nvdisasm")

    @property
    def stage_names(self) -> tuple:
        names = ["ttgir", "llir", "ptx"]
        if self.ptxas:
            names.append("cubin")
            if self.nvdisasm:
                names.append("sass")
        return tuple(names)

    def cache_key(self) -> tuple:
        import llvmlite
        ver = nvidia_tools.tool_version(self.ptxas) if self.ptxas else None
        return (str(self.target), llvmlite.__version__, ver, bool(self.nvdisasm))

    def compile(self, ttir_module, spec, options, ctx) -> BackendResult:
        from ..codegen.nvptx import compile_ttgir
        from ..codegen.nvptx.scratch import scratch_bytes
        from ..passes.decompose_scaled_dot import decompose_all
        from ..passes.expand_map_elementwise import expand_map_elementwise
        from ..passes.fp8_support import check_fp8_types
        from ..passes.inline_calls import inline_calls
        from ..passes.manager import PassManager
        from ..passes.pipelines import ttgir_passes
        from ..passes.widen_fp8_dot import widen_fp8_dots

        timings = getattr(ctx, "timings", None)
        if timings is None:
            timings = {}
        device_arch = self.target.arch or 90
        arch = decision_arch(options, device_arch)
        device = limits.gpu_limits(device_arch)
        _check_threads(ttir_module, options.num_warps, device)
        t0 = time.perf_counter()
        check_fp8_types(ttir_module, arch)
        use_tma, tma_note = tma_choice(ttir_module, options, arch)
        if use_tma:
            mod = clone_module(ttir_module)
        else:
            mod = lower_descriptors(ttir_module, clone_module)
            mod = clone_module(mod) if mod is ttir_module else mod
        mod = decompose_all(mod)  # tt.dot_scaled as on sm_90
        mod = expand_map_elementwise(inline_calls(mod))  # tile ops, calls inlined
        mod = widen_fp8_dots(mod, arch, options.num_warps,  # fp8 dots off wgmma: fp16
                             getattr(options, "cuda_mma", "auto") or "auto")
        is_ttir = _needs_layouts(mod) or "ttg.num-warps" not in mod.attributes
        if getattr(options, "maxnreg", None) is not None:  # Triton: make_ttgir sets it first
            mod.attributes = dict(sorted({**mod.attributes,
                                          "ttg.maxnreg": int(options.maxnreg)}.items()))
        passes = ttgir_passes(options, f"cuda:{arch}", scratch_bytes) if is_ttir else []
        if passes:
            mod = PassManager(passes).run(mod, ctx, "ttgir") or mod
        ttgir, ttgir_locs = print_module_with_map(mod)
        t1 = time.perf_counter()
        out = compile_ttgir(mod, arch=arch, fp_fusion=options.enable_fp_fusion, timings=timings,
                            reflect_ftz=getattr(options, "enable_reflect_ftz", True))
        t2 = time.perf_counter()
        timings["ttgir"] = timings.get("ttgir", 0.0) + (t1 - t0)
        timings["llir+ptx"] = timings.get("llir+ptx", 0.0) + (t2 - t1)
        # ptxas runs in the background while the stages, notes and line maps are made
        job = nvidia_tools.start_assemble(out.ptx, device_arch, self.ptxas) if self.ptxas else None
        try:
            stages, meta, extra = self._describe(mod, out, options, passes, tma_note, arch,
                                                 ttgir, ttgir_locs)
        except BaseException:
            if job is not None:
                job.cancel()
            raise
        if job is not None:
            cubin, report = job.wait()
            timings["cubin"] = timings.get("cubin", 0.0) + time.perf_counter() - t2
            meta.n_regs, meta.n_spills = report.n_regs, report.n_spills
            extra.update(cubin=cubin, ptxas_log=report.text)
            summary = nvidia_tools.cubin_summary(cubin) + "\n\nptxas -v:\n" + report.text.strip()
            stages.append(Stage("cubin", summary, [None] * len(summary.splitlines())))
            image: str | bytes = cubin
            if self.nvdisasm:  # made when read (nvdisasm takes most of a cold compile)
                stages.append(Stage("sass", lazy_sass(cubin, self.nvdisasm, timings)))
            else:
                extra["notes"].append("sass omitted: nvdisasm is not installed "
                                      "(pip install 'tile-workbench[sass]')")
        else:
            image = out.ptx
            extra["notes"].append("cubin and sass omitted: ptxas is not installed "
                                  "(pip install 'tile-workbench[sass]')")
        extra["limits"] = [c.to_json() for c in limits.gpu_checks(
            out.num_warps, out.shared, meta.n_regs, device)]
        func = [o for o in mod.regions[0].block.ops if o.name == "tt.func"][0]
        kinds = [param_kind(a.type) for a in func.regions[0].block.args]
        kinds += ["ptr"] if out.global_scratch else []
        metas = [tensormap_meta(a.type) for a in func.regions[0].block.args
                 if isinstance(a.type, TensorDescType)]
        extra.update(param_kinds=kinds, tensordesc_meta=metas,
                     global_scratch_size=out.global_scratch)
        pdl = bool(extra["launch_pdl"])
        reason = cuda_driver.driver_status()
        launcher: Any
        if reason is None:
            inner = cuda_driver.CudaLauncher(image, out.name, kinds, out.num_warps, out.shared,
                                             pdl=pdl)
            # Triton asks the allocator for every CTA of a program (num_ctas of them); a
            # program here runs on one CTA and uses the first part
            launcher = _wrap(inner, metas, out.global_scratch * options.num_ctas, ttir_module)
        else:
            launcher = _Unavailable(reason)
        return BackendResult(stages, meta, launcher, reason, extra)

    def _describe(self, mod, out, options, passes, tma_note, arch, ttgir, ttgir_locs) -> tuple:
        """``(stages, metadata, extra)`` of a lowered kernel up to its PTX: the ttgir, llir
        and ptx stages with their line maps, the notes of the passes and of the options, the
        shared-memory accesses."""
        from ..codegen.nvptx.inline_asm import gdc_notes

        stages = [Stage("ttgir", ttgir, _fit(ttgir_locs, ttgir)),
                  Stage("llir", out.llir, _fit(llir_line_locs(out.llir), out.llir)),
                  Stage("ptx", out.ptx, _fit(ptx_line_locs(out.ptx), out.ptx))]
        meta = KernelMetadata(name=out.name, target=str(self.target), num_warps=out.num_warps,
                              num_stages=options.num_stages, shared=out.shared)
        notes = [n for p in passes for n in getattr(p, "notes", ())]
        if tma_note:
            notes.append(tma_note)
        notes += gdc_notes(mod, arch)
        if options.num_ctas != 1:
            notes.append(f"num_ctas={options.num_ctas}: each program runs on one CTA here "
                         "(thread-block clusters are not modelled), which computes the same "
                         f"values; Triton would split the program's tiles over a cluster of "
                         f"{options.num_ctas} CTAs (CGALayout in its ttgir)")
        pdl = bool(getattr(options, "launch_pdl", False))
        if pdl and arch < 90:
            notes.append(f"launch_pdl has no effect on sm_{arch}: programmatic dependent "
                         "launch needs sm_90")
        extra: dict[str, Any] = {
            "notes": notes, "ptx": out.ptx, "launch_pdl": pdl and arch >= 90,
            "shared_accesses": [dict(a, loc=str(a["loc"])) for a in out.shared_accesses]}
        return stages, meta, extra

    def pack(self, kernel) -> bytes:
        """The image (``extra["cubin"]``, else the PTX), name, parameter kinds (from the
        ttir's kernel signature), ``num_warps`` and shared bytes of ``kernel``."""
        ttir = parse_module(kernel.asm["ttir"])
        kinds = kernel.extra.get("param_kinds")
        if kinds is None:
            func = functions(lower_descriptors(ttir, clone_module))[0]
            kinds = [param_kind(a.type) for a in func.regions[0].block.args]
        image = kernel.extra.get("cubin") or kernel.extra.get("ptx") or kernel.asm["ptx"]
        md = kernel.metadata
        meta = {"name": md.name, "num_warps": md.num_warps, "shared": md.shared,
                "kinds": kinds, "descriptors": has_descriptors(ttir),
                "tensordesc_meta": kernel.extra.get("tensordesc_meta") or [],
                "global_scratch": (kernel.extra.get("global_scratch_size") or 0) *
                getattr(kernel.options, "num_ctas", 1),
                "image_is_text": isinstance(image, str),
                "launch_pdl": bool(kernel.extra.get("launch_pdl"))}
        data = image.encode() if isinstance(image, str) else bytes(image)
        return pack_parts(meta, {"image": data})

    def lazy_stages(self, data: bytes) -> dict:
        """``{"sass": LazyText}`` made from the entry's cubin when nvdisasm is installed (a
        kernel loaded from the disk cache whose SASS was never read)."""
        meta, parts = unpack_parts(data)
        if not self.nvdisasm or meta["image_is_text"]:
            return {}
        return {"sass": lazy_sass(parts["image"], self.nvdisasm, {})}

    def load(self, data: bytes) -> Loaded:
        """A :class:`~workbench.backends.cuda_driver.CudaLauncher` of the stored image, or,
        without a driver or GPU, a launcher that raises ToolMissingError (``launch_error``
        says why)."""
        meta, parts = unpack_parts(data)
        reason = cuda_driver.driver_status()
        if reason is not None:
            return Loaded(_Unavailable(reason), reason)
        image = parts["image"].decode() if meta["image_is_text"] else parts["image"]
        launcher = cuda_driver.CudaLauncher(image, meta["name"], meta["kinds"],
                                            meta["num_warps"], meta["shared"],
                                            pdl=bool(meta.get("launch_pdl")))
        if meta.get("tensordesc_meta") or meta.get("global_scratch"):
            return Loaded(_wrap(launcher, meta.get("tensordesc_meta") or [],
                                meta.get("global_scratch") or 0, None))
        return Loaded(ExpandingLauncher(launcher) if meta.get("descriptors") else launcher)
