"""The pass lists of each stage and the registry of passes by name.

``ttir_passes(options)``: Triton's ``make_ttir`` in its order (inlining is done by the
frontend; tensor pointers and, before sm_90, descriptors are rewritten by the backends):
canonicalize, triton-combine, triton-reorder-broadcast, cse, symbol-dce, triton-loop-unroll.
``ttgir_passes(options, target)``: ``convert-triton-to-tritongpu``; coalesce,
remove-layout-conversions, accelerate-matmul... in Triton 3.6's order (``make_ttgir`` of
``third_party/nvidia/backend/compiler.py``).
"""
from __future__ import annotations

from .accelerate_matmul import AccelerateMatmul
from .allocate_shared import AllocateShared
from .canonicalize import Canonicalize
from .coalesce import Coalesce
from .combine import Combine
from .convert_to_ttgir import ConvertToTTGIR
from .cse import CSE
from .dce import DCE
from .decompose_scaled_dot import DecomposeScaledDot
from .f32_dot_tc import F32DotTC
from .fuse_nested_loops import FuseNestedLoops
from .insert_barriers import InsertBarriers
from .licm import LoopInvariantCodeMotion
from .loop_unroll import LoopUnroll
from .manager import Pass
from .optimize_dot_operands import OptimizeDotOperands
from .pipeline import Pipeline
from .remove_layout_conversions import RemoveLayoutConversions
from .reorder_broadcast import ReorderBroadcast
from .rewrite_descriptors import RewriteTensorDescriptorToPointer
from .thread_locality import OptimizeThreadLocality
from .tma_lowering import TMALowering

#: pass name -> pass class; aliases map Triton/MLIR names onto our passes.
REGISTRY: dict[str, type] = {
    "canonicalize": Canonicalize,
    "triton-combine": Combine,
    "triton-reorder-broadcast": ReorderBroadcast,
    "cse": CSE,
    "dce": DCE,
    "symbol-dce": DCE,
    "convert-triton-to-tritongpu": ConvertToTTGIR,
    "tritongpu-coalesce": Coalesce,
    "tritongpu-F32DotTC": F32DotTC,
    "tritongpu-remove-layout-conversions": RemoveLayoutConversions,
    "tritongpu-accelerate-matmul": AccelerateMatmul,
    "tritongpu-optimize-dot-operands": OptimizeDotOperands,
    "tritongpu-fuse-nested-loops": FuseNestedLoops,
    "triton-licm": LoopInvariantCodeMotion,
    "tritongpu-pipeline": Pipeline,
    "tritongpu-allocate-shared-memory": AllocateShared,
    "tritongpu-insert-barriers": InsertBarriers,
    "decompose-scaled-dot": DecomposeScaledDot,
    "triton-rewrite-tensor-descriptor-to-pointer": RewriteTensorDescriptorToPointer,
    "triton-nvidia-tma-lowering": TMALowering,
    "triton-loop-unroll": LoopUnroll,
    "tritongpu-optimize-thread-locality": OptimizeThreadLocality,
}


def get_pass(name: str, **options) -> Pass:
    """A new pass object for ``name`` (e.g. ``"cse"``, ``"convert-triton-to-tritongpu"``) with
    ``options`` as its fields. Raises KeyError naming the known passes for an unknown name and
    TypeError for an unknown option."""
    try:
        cls = REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown pass {name!r}; known passes: {', '.join(sorted(REGISTRY))}") \
            from None
    return cls(**options)


def ttir_passes(options=None) -> list:
    """The ttir pipeline, in the order of Triton 3.6's ``make_ttir``: ``[Canonicalize(),
    Combine(), ReorderBroadcast(), CSE(), DCE(), LoopUnroll()]`` (canonicalize,
    triton-combine, triton-reorder-broadcast, cse, symbol-dce, triton-loop-unroll). Every
    backend compiles the result, the interpreter included. ``options`` (a
    :class:`workbench.config.Options`) is accepted for symmetry; no ttir pass uses it yet."""
    return [Canonicalize(), Combine(), ReorderBroadcast(), CSE(), DCE(), LoopUnroll()]


def ttgir_passes(options=None, target="cuda:90", scratch=None) -> list:
    """The ttgir pipeline for ``target`` (a :class:`workbench.config.Target` or its text):
    ``[ConvertToTTGIR(num_warps, target), Coalesce(), RemoveLayoutConversions()]`` with
    ``num_warps`` from ``options`` (default 4), in Triton 3.6's order (``make_ttgir``:
    convert-triton-to-tritongpu, tritongpu-coalesce, [plan-cta], remove-layout-conversions).
    On ``cuda`` targets ``tritongpu-F32DotTC`` after coalesce (fp32 dots with ``bf16x3``,
    ``bf16x6`` and, from ``cuda:80``, ``tf32x3`` precision become several dots), then
    ``tritongpu-optimize-thread-locality`` (as Triton, between the first
    remove-layout-conversions and accelerate-matmul).
    Then accelerate-matmul; on ``cuda:90`` and newer ``tritongpu-optimize-dot-operands`` (wgmma
    reads a transposed operand through a transposed shared view); on ``cuda:80`` and newer
    ``tritongpu-fuse-nested-loops`` (``tl.range(..., flatten=True)``); on every ``cuda`` target
    ``triton-licm`` (before pipelining, as Triton); on ``cuda:80`` and newer
    ``tritongpu-pipeline`` (``num_stages`` from ``options``, default 3; loops whose dot
    operands are tensor descriptor loads get TMA copies with mbarriers, :mod:`.pipeline_tma`),
    on ``cuda:90`` ``triton-nvidia-tma-lowering`` (tensor descriptors the backend left in place);
    on every ``cuda`` target ``cse`` (Triton's loop-aware CSE and final CSE after the pipeliner); on
    ``cuda:80`` and newer ``tritongpu-allocate-shared-memory`` and ``tritongpu-insert-barriers``
    (Triton runs the last two in make_llir). ``scratch``: the backend's shared-scratch size of
    an op (bytes), for the allocation."""
    num_warps = getattr(options, "num_warps", 4) if options is not None else 4
    text = str(target)
    cuda = text.startswith("cuda:")
    sm = int(text[5:]) if cuda and text[5:].isdigit() else 0
    passes = [ConvertToTTGIR(num_warps=num_warps, target=str(target)), Coalesce()]
    if cuda:
        passes.append(F32DotTC(emu_tf32=sm >= 80))
    passes.append(RemoveLayoutConversions())
    if cuda:
        passes.append(OptimizeThreadLocality())
    passes += [AccelerateMatmul(target=str(target), num_warps=num_warps,
                               mma=getattr(options, "cuda_mma", "auto") or "auto")]
    if sm >= 90:
        passes.append(OptimizeDotOperands())
    if sm >= 80:
        passes.append(FuseNestedLoops(num_stages=getattr(options, "num_stages", 3)
                                      if options is not None else 3))
    if cuda:
        passes.append(LoopInvariantCodeMotion())
    if sm >= 80:
        stages = getattr(options, "num_stages", 3) if options is not None else 3
        passes.append(Pipeline(num_stages=stages))
        if sm >= 90:
            passes.append(TMALowering())
    if cuda:
        passes.append(CSE())
    if sm >= 80:
        passes += [AllocateShared(scratch=scratch), InsertBarriers(scratch=scratch)]
    return passes
