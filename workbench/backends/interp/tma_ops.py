"""Closures for Hopper's TMA ops in ttgir (``triton-nvidia-tma-lowering`` and the TMA part of
``tritongpu-pipeline``), so the interpreter runs that ttgir and tests check the coordinates,
slots, predicates and mbarrier phases the passes compute against numpy.

Only host tensor descriptors (a kernel parameter ``!tt.tensordesc`` followed by its two i32
sizes and two i64 strides, in elements, Triton's launch convention) are handled; the
parameter itself is bound like a pointer (the array). Copies complete at once here:

* ``ttng.async_tma_copy_global_to_local %desc[%c0, %c1] %dst, %bar, %pred``: the box at
  ``(c0, c1)`` is read into ``%dst``, elements outside the tensor as zero (the TMA unit's
  fill), and its bytes complete on ``%bar``; nothing happens when ``%pred`` is false;
* ``ttng.async_tma_copy_local_to_global``: the buffer is written to the box, elements outside
  the tensor skipped;
* ``ttng.async_tma_reduce <kind>``: each element of the buffer is reduced into the box as
  ``tt.atomic_rmw`` would (integers signed or unsigned as the descriptor's element type),
  elements outside the tensor skipped;
* the mbarrier (a ``1 x i64`` buffer) is modelled as the hardware keeps it (PTX ISA
  9.7.13.15): expected arrivals, pending transaction bytes, and the number of completed
  phases. ``init_barrier`` sets it up, ``barrier_expect`` arrives and expects bytes, a copy
  completes its bytes; when no arrival and no byte is pending the phase completes.
  ``wait_barrier %bar, %parity`` passes once the phase of that parity has completed and
  raises ``InterpreterError`` when it has not (on a GPU the kernel would hang: nothing can
  complete it any more, copies having landed already);
* ``ttg.memdesc_trans``: the transposed numpy view of the buffer; fences and the store wait
  do nothing.
"""
from __future__ import annotations

import numpy as np

from ...ir.types import FloatType, TensorDescType
from .block import MEM
from .errors import InterpreterError
from .memory_ops import _rmw_combine

# mbarrier state packed in its int64 word: transaction bytes (offset by 2**31) in bits 0-32,
# pending arrivals in 34-41, the arrival count in 42-49, completed phases from bit 50
_TX, _PEND, _COUNT, _PHASE = 0, 34, 42, 50
_TX_BIAS = 1 << 31


def _unpack(word: int) -> tuple[int, int, int, int]:
    w = int(word)
    return ((w >> _TX) & ((1 << 33) - 1)) - _TX_BIAS, (w >> _PEND) & 0xFF, \
        (w >> _COUNT) & 0xFF, w >> _PHASE


def _pack(tx: int, pending: int, count: int, phases: int) -> int:
    return ((tx + _TX_BIAS) << _TX) | (pending << _PEND) | (count << _COUNT) | \
        (phases << _PHASE)


def _update(bar: np.ndarray, arrivals: int, tx: int) -> None:
    """Apply ``arrivals`` arrivals and ``tx`` bytes (expected > 0, completed < 0) to the
    mbarrier word in ``bar``; complete the phase when nothing is pending."""
    t, pend, count, phases = _unpack(bar.reshape(-1)[0])
    pend -= arrivals
    t += tx
    if pend < 0:
        raise InterpreterError("mbarrier: more arrivals than its count in one phase")
    if pend == 0 and t == 0:
        pend, phases = count, phases + 1
    bar.reshape(-1)[0] = _pack(t, pend, count, phases)


def _first(a) -> int:
    return int(np.asarray(a).reshape(-1)[0])


class TmaOpsMixin:
    """Mixed into the FunctionCompiler: TMA copies through host descriptors and mbarriers."""

    def _desc(self, desc):
        """``(param index, slots of size0, size1, stride0, stride1)`` of a host descriptor."""
        entry = self.func.regions[0].block  # type: ignore[attr-defined]
        if desc.owner is not entry:
            raise NotImplementedError("a TMA copy through a descriptor built in the kernel")
        k = desc.index
        return k, [self.slot(entry.args[k + j]) for j in range(1, 5)]  # type: ignore

    def _box(self, env, d, cs, sizes, dst_shape, itemsize):
        """Byte addresses of the box at the coordinates and the in-bounds mask."""
        base = _first(env[d])
        n0, n1, s0, s1 = (_first(env[s]) for s in sizes)
        r = _first(env[cs[0]]) + np.arange(dst_shape[-2])[:, None]
        c = _first(env[cs[1]]) + np.arange(dst_shape[-1])[None, :]
        inside = (r >= 0) & (r < n0) & (c >= 0) & (c < n1)
        return base + (r * s0 + c * s1) * itemsize, inside

    def op_ttng_async_tma_copy_global_to_local(self, op):
        arg, sizes = self._desc(op.operands[0])
        slot = self.slot  # type: ignore[attr-defined]
        d, cs = slot(op.operands[0]), [slot(v) for v in op.operands[1:-3]]
        dst, bar, pred = (slot(v) for v in op.operands[-3:])
        t = op.operands[-3].type
        nbytes = int(np.prod(t.shape)) * max(8, t.element.width) // 8

        def tma_load(env):
            if not _first(env[pred]):
                return
            buf = env[dst]
            addr, inside = self._box(env, d, cs, sizes, buf.shape, buf.dtype.itemsize)
            vals = env[MEM].load(addr, inside, buf.dtype, arg)
            buf[...] = np.where(inside, vals, np.zeros(1, buf.dtype))
            _update(env[bar], 0, -nbytes)
        return tma_load

    def op_ttng_async_tma_copy_local_to_global(self, op):
        arg, sizes = self._desc(op.operands[0])
        slot = self.slot  # type: ignore[attr-defined]
        d, cs, src = slot(op.operands[0]), [slot(v) for v in op.operands[1:-1]], \
            slot(op.operands[-1])

        def tma_store(env):
            buf = env[src]
            addr, inside = self._box(env, d, cs, sizes, buf.shape, buf.dtype.itemsize)
            vals = np.broadcast_to(buf.reshape(buf.shape[-2:]), inside.shape)
            env[MEM].store(addr, np.ascontiguousarray(vals), inside, buf.dtype, arg)
        return tma_store

    def op_ttng_async_tma_reduce(self, op):
        arg, sizes = self._desc(op.operands[0])
        slot = self.slot  # type: ignore[attr-defined]
        d, cs, src = slot(op.operands[0]), [slot(v) for v in op.operands[1:-1]], \
            slot(op.operands[-1])
        t = op.operands[0].type
        assert isinstance(t, TensorDescType)
        kind, elem = str(op.attributes["kind"]), t.block.element
        if isinstance(elem, FloatType) and kind == "add":
            kind = "fadd"
        elif t.signedness == "u" and kind in ("min", "max"):
            kind = "u" + kind
        combine = _rmw_combine(kind, elem)

        def tma_reduce(env):
            buf = env[src]
            addr, inside = self._box(env, d, cs, sizes, buf.shape, buf.dtype.itemsize)
            vals = np.broadcast_to(buf.reshape(buf.shape[-2:]), inside.shape)
            env[MEM].rmw(addr, np.ascontiguousarray(vals), inside, buf.dtype, arg, combine)
        return tma_reduce

    def op_ttng_init_barrier(self, op):
        bar, count = self.slot(op.operands[0]), int(op.attributes["count"])  # type: ignore

        def init_barrier(env):
            env[bar][...] = _pack(0, count, count, 0)
        return init_barrier

    def op_ttng_inval_barrier(self, op):
        bar = self.slot(op.operands[0])  # type: ignore[attr-defined]

        def inval_barrier(env):
            env[bar][...] = 0
        return inval_barrier

    def op_ttng_barrier_expect(self, op):
        bar, pred = self.slot(op.operands[0]), self.slot(op.operands[1])  # type: ignore
        size = int(op.attributes["size"])

        def barrier_expect(env):
            if _first(env[pred]):
                _update(env[bar], 1, size)
        return barrier_expect

    def op_ttng_wait_barrier(self, op):
        bar, parity = self.slot(op.operands[0]), self.slot(op.operands[1])  # type: ignore
        loc = op.loc

        def wait_barrier(env):
            _, _, _, phases = _unpack(env[bar].reshape(-1)[0])
            if phases % 2 == _first(env[parity]) % 2:
                raise InterpreterError(
                    f"ttng.wait_barrier waits for a phase of parity {_first(env[parity]) % 2} "
                    f"that never completes ({phases} completed): on a GPU the kernel would "
                    "hang", loc=loc)
        return wait_barrier

    def op_ttg_memdesc_trans(self, op):
        s, r = self.slot(op.operands[0]), self.slot(op.result)  # type: ignore[attr-defined]

        def memdesc_trans(env):
            env[r] = np.swapaxes(env[s], -1, -2)
        return memdesc_trans

    def op_ttng_async_tma_store_wait(self, op):
        return None

    def op_ttng_fence_async_shared(self, op):
        return None


__all__ = ["TmaOpsMixin"]
