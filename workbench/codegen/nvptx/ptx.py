"""NVPTX LLVM IR -> optimised LLVM IR and PTX text through llvmlite's NVPTX target.

llvmlite 0.50 bundles LLVM 22 with the NVPTX back end. PTX versions: sm_80 code is emitted as
PTX ISA 7.0 (the first with sm_80) and sm_90 as ``sm_90a`` with PTX ISA 8.0 (the first with
``sm_90a``), the oldest versions that hold every instruction we use, so the PTX also JIT-loads
on older drivers (PTX ISA, "Release notes" / target directive tables). A kernel with an
``eviction_policy`` on sm_80/86 is emitted as PTX ISA 7.4, the first with ``createpolicy``
(:func:`workbench.codegen.nvptx.compile_ttgir` asks for it).
"""
from __future__ import annotations

import threading

import llvmlite.binding as llvm

from . import libdevice_link
from .lower import TRIPLE

_INIT_LOCK = threading.Lock()
_PTX_FEATURES = {80: ("sm_80", "+ptx70"), 86: ("sm_86", "+ptx71"), 89: ("sm_89", "+ptx78"),
                 90: ("sm_90a", "+ptx80")}


def _init() -> None:
    # llvmlite's target registry is process-wide; initialising twice is harmless.
    with _INIT_LOCK:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        # 32-bit pointers to shared, constant and local memory, as Triton sets it (its data
        # layout "p3:32:32-p4:32:32-p5:32:32"): shared addresses in one register, not two
        llvm.set_option("", "--nvptx-short-ptr")


def cpu_and_features(arch: int) -> tuple[str, str]:
    """``(cpu, features)`` for an SM version: (``"sm_90a"``, ``"+ptx80"``) for 90.

    Raises ValueError for an architecture we do not emit."""
    if arch not in _PTX_FEATURES:
        raise ValueError(f"no PTX settings for sm_{arch}; use one of {sorted(_PTX_FEATURES)}")
    return _PTX_FEATURES[arch]


def target_machine(arch: int, opt: int = 3, ptx_version: int | None = None):
    """llvmlite TargetMachine for ``nvptx64-nvidia-cuda`` and ``sm_<arch>``; ``ptx_version``
    (e.g. 87 for PTX ISA 8.7) overrides the architecture's default version."""
    _init()
    cpu, features = cpu_and_features(arch)
    if ptx_version is not None:
        features = f"+ptx{ptx_version}"
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=cpu, features=features, opt=opt)


def optimise(llir_text: str, arch: int, opt: int = 3,
             ptx_version: int | None = None) -> tuple[str, object]:
    """Parse, verify and run LLVM's ``-O<opt>`` pipeline. Returns (optimised text, module).

    Raises RuntimeError (from llvmlite) when the IR does not verify."""
    tm = target_machine(arch, opt, ptx_version)
    mod = llvm.parse_assembly(llir_text)
    mod.triple = TRIPLE
    mod.data_layout = str(tm.target_data)
    if libdevice_link.needed(llir_text):   # __nv_* functions we do not compute ourselves
        libdevice_link.link_into(mod, TRIPLE, str(tm.target_data))
    mod.verify()
    if opt > 0:
        pto = llvm.create_pipeline_tuning_options(speed_level=opt)
        pb = llvm.create_pass_builder(tm, pto)
        mpm = pb.getModulePassManager()
        mpm.run(mod, pb)
    return str(mod), mod


def parse_optimised(llir_text: str, arch: int, ptx_version: int | None = None):
    """llvmlite module of already optimised IR text (no passes run), ready for
    :func:`emit_ptx`. Raises RuntimeError (from llvmlite) when the text does not parse."""
    tm = target_machine(arch, 3, ptx_version)
    mod = llvm.parse_assembly(llir_text)
    mod.triple = TRIPLE
    mod.data_layout = str(tm.target_data)
    return mod


def emit_ptx(module, arch: int, ptx_version: int | None = None) -> str:
    """PTX text of an (optimised) llvmlite binding module for ``sm_<arch>``."""
    return target_machine(arch, 3, ptx_version).emit_assembly(module)
