"""The axis analysis the CUDA code generator reads when it picks vector widths.

There is one AxisInfo analysis in the compiler: :mod:`workbench.passes.axis_info` (Triton 3.6
``lib/Analysis/AxisInfo.cpp``: contiguity, divisibility in bytes for pointers, constancy, per
dim; ``scf.for`` iter args as the fixpoint of the join of the initial and the yielded value).
The coalescing pass chooses ``sizePerThread`` from it and the lowering of ``tt.load``,
``tt.store`` and ``ttg.async_copy_global_to_local`` (:mod:`.memory`, :mod:`.async_copy`)
chooses its vector width from it, so the two always agree: a loop-carried pointer advanced
by a loop-invariant offset (``tt.addptr %p, %splat(c)``, the tutorial matmul's
``a_ptrs += BLOCK_K * stride_ak``) keeps its contiguity and gets the divisibility
``gcd(init, increment)``, and its loads become 16-byte vector loads.

This module only adapts the analysis to the lowering's lookup by ``id(value)``.
"""
from __future__ import annotations

from ...passes.axis_info import AxisInfo, AxisInfoAnalysis


class KernelAxisInfo:
    """AxisInfo of every value of one ttgir ``tt.func``, looked up by ``id(value)``
    (``get`` returns None for a value the analysis did not see: callers then assume
    nothing)."""

    def __init__(self, func_op):
        self.analysis = AxisInfoAnalysis(func_op)

    def get(self, key: int) -> AxisInfo | None:
        return self.analysis.info.get(key)


def analyse(func_op) -> KernelAxisInfo:
    """The axis analysis of ``func_op`` (a ttgir ``tt.func``) for the lowering."""
    return KernelAxisInfo(func_op)


__all__ = ["analyse", "KernelAxisInfo", "AxisInfo"]
