"""Closures for memory ops: ``tt.load``, ``tt.store``, ``tt.atomic_rmw``, ``tt.atomic_cas``,
and shared memory (``ttg.local_alloc/load/store``, poisoned with NaN when not initialised).

``mask`` and ``other`` broadcast to the pointer's shape; masked-off lanes of a load without
``other`` read as zero (Triton leaves them undefined; NVIDIA GPUs and Triton's interpreter give
zeros too). Bool pointers address one byte per element.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...ir.types import FloatType, IntType
from .block import MEM, PIDS
from .dtypes import float_value, from_float, is_bf16, mem_dtype, np_dtype, unsigned
from .errors import out_of_bounds
from .memory import OutOfBounds, empty_poisoned

if TYPE_CHECKING:  # annotations only
    from ...ir.core import Operation
    from .analysis import KernelFacts


def _rmw_combine(kind: str, t):
    """``combine(old, val)`` on memory-dtype arrays for atomic op ``kind`` on type ``t``."""
    if kind in ("xchg", "exch"):
        return lambda old, v: v
    if isinstance(t.scalar, FloatType):
        f = {"fadd": np.add, "add": np.add, "max": np.maximum, "min": np.minimum,
             "fmax": np.maximum, "fmin": np.minimum}[kind]
        if is_bf16(t):
            return lambda old, v: from_float(f(float_value(old, t), float_value(v, t)), t)
        return f
    if kind in ("umax", "umin"):
        f = np.maximum if kind == "umax" else np.minimum
        return lambda old, v: f(unsigned(old), unsigned(v)).view(old.dtype)
    return {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
            "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]


class MemoryOpsMixin:
    """Mixed into the FunctionCompiler: global and shared memory ops."""

    # set by FunctionCompiler.__init__
    func: Operation
    facts: KernelFacts

    def _mem_common(self, op):
        ptr = op.operands[0]
        pointee = ptr.type.scalar.pointee
        is_bool = isinstance(pointee, IntType) and pointee.width == 1
        return pointee, mem_dtype(pointee), is_bool, self.facts.provenance.get(ptr)

    def _aligned(self, op) -> bool:
        """Whether the pointer is its parameter's base plus whole elements of the accessed
        type (its origin is known and the parameter's pointee has the same size)."""
        ptr = op.operands[0]
        arg = self.facts.provenance.get(ptr)
        if arg is None:
            return False
        declared = self.func.regions[0].block.args[arg].type.scalar.pointee
        return mem_dtype(declared).itemsize == mem_dtype(ptr.type.scalar.pointee).itemsize

    def op_tt_load(self, op):
        pointee, dt, is_bool, arg = self._mem_common(op)
        p = self.slot(op.operands[0])
        m = self.slot(op.operands[1]) if len(op.operands) > 1 else None
        o = self.slot(op.operands[2]) if len(op.operands) > 2 else None
        r = self.slot(op.result)
        zero = np.zeros(1, dtype=np_dtype(op.result.type))
        loc = op.loc
        aligned = self._aligned(op)

        def load(env):
            ptr = env[p]
            mask = None
            if m is not None:
                mask = env[m]
                if mask.shape != ptr.shape:
                    ptr, mask = np.broadcast_arrays(ptr, mask)
                if mask.all():
                    mask = None
            if env[MEM].recorder is not None:
                env[MEM].recorder.record("load", loc, ptr, mask, dt.itemsize, env[MEM], arg,
                                         env[PIDS])
            try:
                vals = env[MEM].load(ptr, mask, dt, arg, aligned)
            except OutOfBounds as e:
                raise out_of_bounds("load", e.bad, e.addr, env[MEM], arg, dt.itemsize,
                                    env[PIDS], loc) from None
            if is_bool:
                vals = vals != 0
            if mask is not None:
                vals = np.where(mask, vals, env[o] if o is not None else zero)
            env[r] = vals
        return load

    def op_tt_store(self, op):
        pointee, dt, is_bool, arg = self._mem_common(op)
        p, v = self.slot(op.operands[0]), self.slot(op.operands[1])
        m = self.slot(op.operands[2]) if len(op.operands) > 2 else None
        loc = op.loc
        aligned = self._aligned(op)

        def store(env):
            ptr, val = env[p], env[v]
            mask = env[m] if m is not None else None
            if mask is not None and mask.all():
                mask = None
            if mask is None:
                if ptr.shape != val.shape:
                    ptr, val = np.broadcast_arrays(ptr, val)
            elif not (ptr.shape == val.shape == mask.shape):
                ptr, val, mask = np.broadcast_arrays(ptr, val, mask)
            if is_bool:
                val = val.astype(np.int8)
            if env[MEM].recorder is not None:
                env[MEM].recorder.record("store", loc, ptr, mask, dt.itemsize, env[MEM], arg,
                                         env[PIDS])
            try:
                env[MEM].store(ptr, val, mask, dt, arg, aligned)
            except OutOfBounds as e:
                raise out_of_bounds("store", e.bad, e.addr, env[MEM], arg, dt.itemsize,
                                    env[PIDS], loc) from None
        return store

    def op_tt_atomic_rmw(self, op):
        pointee, dt, is_bool, arg = self._mem_common(op)
        kind = str(op.attributes["atomic_rmw_op"]).lower()
        combine = _rmw_combine(kind, pointee)
        p, v = self.slot(op.operands[0]), self.slot(op.operands[1])
        m = self.slot(op.operands[2]) if len(op.operands) > 2 else None
        r = self.slot(op.result) if op.results else None
        loc = op.loc

        def atomic_rmw(env):
            arrs = [env[p], env[v]] + ([env[m]] if m is not None else [])
            arrs = [np.ascontiguousarray(a) for a in np.broadcast_arrays(*arrs)]
            ptr, val = arrs[0], arrs[1]
            mask = arrs[2] if m is not None else None
            try:
                old = env[MEM].rmw(ptr, val.astype(dt, copy=False), mask, dt, arg, combine)
            except OutOfBounds as e:
                raise out_of_bounds("atomic", e.bad, e.addr, env[MEM], arg, dt.itemsize,
                                    env[PIDS], loc) from None
            if r is not None:
                env[r] = old
        return atomic_rmw

    def op_tt_atomic_cas(self, op):
        pointee, dt, is_bool, arg = self._mem_common(op)
        p, c, v = (self.slot(x) for x in op.operands)
        r = self.slot(op.result)
        loc = op.loc

        def atomic_cas(env):
            ptr, cmp, val = (np.ascontiguousarray(a)
                             for a in np.broadcast_arrays(env[p], env[c], env[v]))
            try:
                env[r] = env[MEM].cas(ptr, cmp.astype(dt, copy=False),
                                      val.astype(dt, copy=False), dt, arg)
            except OutOfBounds as e:
                raise out_of_bounds("atomic", e.bad, e.addr, env[MEM], arg, dt.itemsize,
                                    env[PIDS], loc) from None
        return atomic_cas

    # -- shared memory (ttgir) ----------------------------------------------------------------
    def op_ttg_local_alloc(self, op):
        src = self.slot(op.operands[0]) if op.operands else None
        r = self.slot(op.result)
        t = op.result.type
        dt = np_dtype(t.element) if not is_bf16(t.element) else np.dtype(np.uint16)
        shape = (1,) + tuple(t.shape)

        def local_alloc(env):
            if src is not None:
                env[r] = np.array(np.broadcast_to(env[src], shape), dtype=dt)
            elif is_bf16(t.element):
                env[r] = np.full(shape, 0x7FC0, dtype=np.uint16)
            else:
                env[r] = empty_poisoned(shape, dt)
        return local_alloc

    def op_ttg_local_load(self, op):
        s, r = self.slot(op.operands[0]), self.slot(op.result)

        def local_load(env):
            env[r] = env[s].copy()
        return local_load

    def op_ttg_local_store(self, op):
        v, d = self.slot(op.operands[0]), self.slot(op.operands[1])

        def local_store(env):
            env[d][...] = env[v]
        return local_store
