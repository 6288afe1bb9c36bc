"""Closures for the software pipeline's ops (``tritongpu-pipeline``), so the interpreter runs
pipelined ttgir and tests can check the pass's index, pointer and mask arithmetic against
numpy.

* ``ttg.memdesc_index %buf, %i``: a numpy *view* of slot ``i`` of the multi-buffer (writes
  through it land in the buffer);
* ``ttg.async_copy_global_to_local %ptrs, %dst[ mask %mask]``: the elements of ``%mask`` are
  read from global memory into ``%dst`` and the others are set to zero (``cp.async`` with
  ``src-size`` 0; the pipeliner folds "this iteration exists" into the mask, so the copy of an
  iteration past the end zero-fills its slot and reads nothing);
* ``ttg.async_commit_group`` and ``ttg.async_wait``: no-ops (copies complete at once here, so
  the interpreter checks what is copied where, not the wait counts); their
  ``!ttg.async.token`` results (and the copy's) hold ``None``;
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
        p, d = self.slot(op.operands[0]), self.slot(op.operands[1])
        m = self.slot(op.operands[2]) if len(op.operands) > 2 else None
        tok = self.slot(op.result)
        loc = op.loc

        def async_copy(env):
            env[tok] = None
            dst = env[d]
            ptr = np.broadcast_to(env[p], dst.shape)
            mask = None if m is None else np.broadcast_to(env[m], dst.shape)
            if mask is not None and not mask.any():
                dst[...] = 0
                return
            try:
                vals = env[MEM].load(np.ascontiguousarray(ptr),
                                     None if mask is None or mask.all() else mask, dt, arg)
            except OutOfBounds as e:
                raise out_of_bounds("async copy", e.bad, e.addr, env[MEM], arg, dt.itemsize,
                                    env[PIDS], loc) from None
            if mask is not None:
                vals = np.where(mask, vals, np.zeros(1, dtype=vals.dtype))
            dst[...] = vals.astype(dst.dtype, copy=False)
        return async_copy

    def op_ttg_async_commit_group(self, op):
        return self._token(op)

    def op_ttg_async_wait(self, op):
        return self._token(op)

    def _token(self, op):
        tok = self.slot(op.result)

        def token(env):
            env[tok] = None
        return token

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
