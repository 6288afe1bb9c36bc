"""Closures for the software pipeline's ops (``tritongpu-pipeline``), so the interpreter runs
pipelined ttgir and tests can check the pass's index, pointer and mask arithmetic against
numpy.

* ``ttg.memdesc_index %buf, %i``: a numpy *view* of slot ``i`` of the multi-buffer (writes
  through it land in the buffer);
* ``ttg.async_copy_global_to_local %ptrs, %dst, %pred[, %mask]``: when ``%pred`` holds, the
  elements of ``%mask`` are read from global memory into ``%dst`` and the others are set to
  zero (``cp.async`` with ``src-size`` 0); when it does not, nothing is read or written (the
  copy of an iteration past the end);
* ``ttg.async_commit_group`` and ``ttg.async_wait``: no-ops (copies complete at once here, so
  the interpreter checks what is copied where, not the wait counts);
* ``ttng.warp_group_dot`` (Hopper wgmma, operands read from the buffers) is ``tt.dot`` of the
  buffers' contents, and ``ttng.warp_group_dot_wait`` passes its inputs through.

Multi-buffers come from ``ttg.local_alloc`` without a source, poisoned with NaN, so a slot
read before a copy landed in it shows up as NaN in the result.
"""
from __future__ import annotations

import numpy as np

from .block import MEM, PIDS
from .errors import out_of_bounds
from .memory import OutOfBounds


class AsyncOpsMixin:
    """Mixed into the FunctionCompiler: the pipeline's multi-buffer and async-copy ops."""

    def op_ttg_memdesc_index(self, op):
        buf, i = self.slot(op.operands[0]), self.slot(op.operands[1])
        r = self.slot(op.result)

        def memdesc_index(env):
            env[r] = env[buf][:, int(np.asarray(env[i]).reshape(-1)[0])]
        return memdesc_index

    def op_ttg_async_copy_global_to_local(self, op):
        _, dt, _, arg = self._mem_common(op)
        p, d, q = (self.slot(v) for v in op.operands[:3])
        m = self.slot(op.operands[3]) if len(op.operands) > 3 else None
        loc = op.loc

        def async_copy(env):
            pred = np.asarray(env[q]).reshape(-1)
            if not pred.any():
                return
            dst = env[d]
            ptr = np.broadcast_to(env[p], dst.shape)
            mask = np.broadcast_to(pred.reshape((-1,) + (1,) * (dst.ndim - 1)), dst.shape)
            if m is not None:
                mask = mask & np.broadcast_to(env[m], dst.shape)
            try:
                vals = env[MEM].load(np.ascontiguousarray(ptr), None if mask.all() else mask,
                                     dt, arg)
            except OutOfBounds as e:
                raise out_of_bounds("async copy", e.bad, e.addr, env[MEM], arg, dt.itemsize,
                                    env[PIDS], loc) from None
            vals = np.where(mask, vals, np.zeros(1, dtype=vals.dtype))
            dst[...] = np.where(pred.reshape((-1,) + (1,) * (dst.ndim - 1)),
                                vals.astype(dst.dtype, copy=False), dst)
        return async_copy

    def op_ttg_async_commit_group(self, op):
        return None

    def op_ttg_async_wait(self, op):
        return None

    # Hopper's ttng.warp_group_dot reads its operands straight from the buffers (memdescs) and
    # completes at once here; its wait passes the accumulators through.
    def op_ttng_warp_group_dot(self, op):
        from ...ir.types import TensorType
        from .tensor_ops import dot
        a, b, c = (self.slot(v) for v in op.operands)
        r = self.slot(op.result)
        ta, tb = (TensorType(tuple(v.type.shape), v.type.element) for v in op.operands[:2])
        tc = op.operands[2].type
        prec = op.attributes.get("inputPrecision", "tf32")
        prec = str(prec).lower() if prec is not None else None

        def warp_group_dot(env):
            env[r] = dot(env[a], env[b], env[c], ta, tb, tc, prec)
        return warp_group_dot

    def op_ttng_warp_group_dot_wait(self, op):
        for v, r in zip(op.operands, op.results, strict=False):
            self.slots[r] = self.slot(v)
        return None


__all__ = ["AsyncOpsMixin"]
