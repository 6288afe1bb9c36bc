"""Shared scratch of the CUDA lowering: how many bytes each op exchanges between threads
through shared memory, for the liveness allocation of
:mod:`workbench.passes.allocate_shared` (Triton: ``defaultAllocationAnalysisScratchSizeFn``
of ``lib/Analysis/Allocation.cpp``).

Each op module computes its own size next to its lowering (one formula for both); the
lowering checks that it stays inside what was allocated (:meth:`KernelLowering.need_shared`).
"""
from __future__ import annotations

from ...errors import UnsupportedError
from . import atomics, convert_layout, reduce, scan, shape_ops

_SIZERS = {
    "ttg.convert_layout": convert_layout.scratch_bytes,
    "tt.reduce": reduce.scratch_bytes,
    "tt.scan": scan.scratch_bytes,
    "tt.atomic_rmw": atomics.scratch_bytes,
    "tt.atomic_cas": atomics.scratch_bytes,
    # the 128-byte staging copy of a tensor map built with tensormap.replace
    "ttng.tensormap_create": lambda op: 128,
}


def scratch_bytes(op) -> int:
    """Bytes of shared scratch ``op`` needs in the CUDA lowering (0: none). Layouts the
    lowering rejects count 0 here (the lowering raises its own error)."""
    fn = _SIZERS.get(op.name)
    if fn is None and op.name in shape_ops.OPS:
        fn = shape_ops.scratch_bytes
    if fn is None:
        return 0
    try:
        return fn(op)
    except (UnsupportedError, ValueError, KeyError):
        return 0


__all__ = ["scratch_bytes"]
