"""The NVVM annotations and module flags of a CUDA kernel's LLVM module: which function is the
kernel, its threads per CTA (``reqntidx``), its register cap (``maxnreg``), and libdevice's
flush-to-zero answer (``nvvm-reflect-ftz``)."""
from __future__ import annotations

from llvmlite import ir

I32 = ir.IntType(32)


def annotate_kernel(module: ir.Module, fn: ir.Function, num_warps: int,
                    maxnreg: int | None = None, reflect_ftz: bool = True) -> None:
    """Mark ``fn`` of ``module`` as the kernel with ``32 * num_warps`` threads
    (``nvvm.annotations``: ``kernel``, ``reqntidx``; PTX ``.reqntid``), cap its registers per
    thread at ``maxnreg`` (PTX ISA 11.4.1, ``.maxnreg`` on the ``.entry``) when given, and
    answer libdevice's ``__nvvm_reflect("__CUDA_FTZ")`` with 1 when ``reflect_ftz`` (Triton's
    ``llvm.set_nvvm_reflect_ftz`` in ``make_llir``; module flag behaviour 4 = override). With
    ``reflect_ftz`` off nothing is set and the answer is 0, as in Triton."""
    module.add_named_metadata("nvvm.annotations", module.add_metadata([fn, "kernel", I32(1)]))
    module.add_named_metadata("nvvm.annotations",
                              module.add_metadata([fn, "reqntidx", I32(32 * num_warps)]))
    if maxnreg is not None:
        module.add_named_metadata("nvvm.annotations",
                                  module.add_metadata([fn, "maxnreg", I32(int(maxnreg))]))
    if reflect_ftz:
        module.add_named_metadata("llvm.module.flags", module.add_metadata(
            [I32(4), "nvvm-reflect-ftz", I32(1)]))


__all__ = ["annotate_kernel"]
