"""Launching a JIT-compiled CPU kernel over a grid from Python.

Up to ``os.cpu_count()`` workers (the calling thread and helper threads of
:mod:`.workers`) each make one native call of ``<name>_grid`` through ctypes, which releases
the GIL, with its own scratch arena and error record; they share the grid through an atomic
chunk counter (see :mod:`.compile`). Kernels with ``tt.print`` run on one worker, so lines come
in program-id order. An empty grid makes no call.

Warm launches allocate nothing: the argument slots, the scratch arenas, the error records and
the chunk counter are made once per launcher and reused (a launch that finds them in use by
another thread's launch makes its own), and each argument is packed by a converter chosen
when the launcher was built. A kernel whose parallel launches finish in under
:data:`SERIAL_BELOW` seconds runs on the calling thread alone from then on (waking helpers
would cost more than they save), until a launch takes more than :data:`PARALLEL_ABOVE`.
Error records become exceptions (the lowest program id that failed is reported):
out-of-bounds accesses :class:`workbench.errors.OutOfBoundsError`, failed ``tt.assert``
:class:`~workbench.backends.interp.errors.DeviceAssertionError` (the interpreter's class, a
:class:`workbench.errors.WorkbenchError`), a bad ``tt.gather`` index an
:class:`~workbench.backends.interp.errors.InterpreterError`. Kernels with ``tt.print`` get
a :class:`.hostcalls.PrintSession`; its lines go to ``sys.stdout`` after the grid ran (also
when it failed), in program-id order.
"""
from __future__ import annotations

import ctypes
import os
import struct
import sys
import time

import numpy as np

from ...codegen.cpu.llvmtypes import storage_size
from ...codegen.cpu.memory import ERR_FIELDS, TOKEN, WORKER
from ...errors import LaunchError, OutOfBoundsError
from ...ir.types import FloatType, IntType, PointerType
from ..base import PointerArg
from ..interp.errors import DeviceAssertionError, InterpreterError
from ..limits import host_scratch_check, host_scratch_limit
from .hostcalls import PrintSession
from .workers import run_parallel

_GRID_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                            ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p,
                            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_MAX_I32 = 2 ** 31 - 1
_INT_TYPES = (bool, int, np.integer, np.bool_)
_NUM_TYPES = (bool, int, float, np.integer, np.floating)
#: chunks per worker (dynamic scheduling granularity)
CHUNKS_PER_WORKER = 16
#: a parallel launch that took less than this (seconds) makes the next one serial ...
SERIAL_BELOW = 300e-6
#: ... until a serial launch takes more than this (hysteresis: waking the helper threads
#: costs tens to a hundred microseconds on a loaded machine)
PARALLEL_ABOVE = 400e-6


def _scalar_packer(t, name):
    """A function ``value -> u64 slot`` for scalar IR type ``t`` (LaunchError on a bad
    value)."""
    if isinstance(t, IntType):
        w = t.width
        mod = 1 << w

        def pack_int(value):
            if not isinstance(value, _INT_TYPES):
                _bad_scalar(value, t, name, "an integer")
            if w == 1:
                return 1 if value else 0
            return int(value) % mod
        return pack_int
    if isinstance(t, FloatType):
        if t.name == "bf16":
            def pack_bf16(value):
                bits = struct.unpack("<I", struct.pack("<f", _number(value, t, name)))[0]
                return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
            return pack_bf16
        if t.name == "f16":
            return lambda value: int(np.array(_number(value, t, name), np.float16)
                                     .view(np.uint16))
        if t.name == "f32":
            return lambda value: struct.unpack("<I", struct.pack("<f", _number(value, t,
                                                                               name)))[0]
        return lambda value: struct.unpack("<Q", struct.pack("<d", _number(value, t, name)))[0]
    raise LaunchError(f"argument `{name}`: unsupported parameter type {t}")


def _number(value, t, name) -> float:
    if not isinstance(value, _NUM_TYPES):
        _bad_scalar(value, t, name, "a number")
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _bad_scalar(value, t, name, what):
    if isinstance(value, (PointerArg, np.ndarray)):
        raise LaunchError(f"argument `{name}` is a scalar parameter ({t}) but got an array")
    raise LaunchError(f"argument `{name}` must be {what} ({t}), got {value!r}")


class _Resources:
    """Per-launch memory reused across launches: argument slots, per-worker scratch arenas
    (64-byte aligned) and error records, the chunk counter and the stop flag."""

    def __init__(self, nslots: int, arena_bytes: int, workers: int):
        self.slots = (ctypes.c_uint64 * max(1, nslots))()
        self.slots_addr = ctypes.addressof(self.slots)
        self.errs = np.zeros((workers, ERR_FIELDS), np.int64)
        self.err_addrs = [self.errs[k].ctypes.data for k in range(workers)]
        self.arenas = [np.empty(arena_bytes + 64, np.uint8) for _ in range(workers)]
        self.arena_addrs = [(a.ctypes.data + 63) // 64 * 64 for a in self.arenas]
        self.counter = ctypes.c_int64(0)
        self.counter_addr = ctypes.addressof(self.counter)
        self.stop = ctypes.c_int32(0)
        self.stop_addr = ctypes.addressof(self.stop)


class CpuLauncher:
    """``launcher(grid3, args)``: run the kernel for every program id of ``grid3`` (3 ints
    >= 0) with ``args`` (PointerArg / int / float / bool per passed parameter, in order).

    Raises LaunchError on a wrong argument count/type or a grid dimension >= 2^31, and
    OutOfBoundsError when a bounds-checked access leaves its array. ``workers``: maximum
    threads (default ``os.cpu_count()``)."""

    def __init__(self, engine, address: int, name: str, param_names, param_types,
                 arena_bytes: int, mem_ops, workers: int | None = None):
        self.engine = engine  # keeps the machine code alive
        self.fn = _GRID_FN(address)
        self.name = name
        self.param_names = list(param_names)
        self.param_types = list(param_types)
        self.arena_bytes = int(arena_bytes)
        self.mem_ops = list(mem_ops)
        self.workers = workers or os.cpu_count() or 1
        self.prints = any(op[0] == "print" for op in self.mem_ops)
        self._plan = []
        slot = 0
        for t, n in zip(self.param_types, self.param_names, strict=True):
            if isinstance(t, PointerType):
                self._plan.append((slot, None, n, t))
                slot += 3
            else:
                self._plan.append((slot, _scalar_packer(t, n), n, t))
                slot += 1
        self._nslots = slot
        self._pool: list[_Resources] = []
        self._serial = False  # run on the calling thread only (set from past launches)

    def _resources(self) -> _Resources:
        """New per-launch memory: as many workers' scratch arenas as fit in
        :func:`~workbench.backends.limits.host_scratch_limit` (at least one). Raises
        OutOfResources when even one arena cannot be allocated."""
        fit = host_scratch_limit() // max(1, self.arena_bytes + 64)
        workers = max(1, min(self.workers, fit))
        try:
            return _Resources(self._nslots, self.arena_bytes, workers)
        except MemoryError:
            raise host_scratch_check(self.arena_bytes).error(self.name) from None

    def _pack(self, slots, args) -> None:
        if len(args) != len(self._plan):
            raise LaunchError(f"kernel `{self.name}` takes {len(self.param_types)} run-time "
                              f"arguments ({', '.join(self.param_names)}), got {len(args)}")
        for (k, packer, n, t), a in zip(self._plan, args, strict=True):
            if packer is None:
                if not isinstance(a, PointerArg):
                    raise LaunchError(f"argument `{n}` is a pointer parameter ({t}); pass an "
                                      f"array, got {type(a).__name__}")
                slots[k] = a.address
                slots[k + 1] = a.lo
                slots[k + 2] = a.hi
            else:
                slots[k] = packer(a)

    def __call__(self, grid3, args) -> None:
        gx, gy, gz = grid3
        if type(gx) is not int or type(gy) is not int or type(gz) is not int:
            gx, gy, gz = int(gx), int(gy), int(gz)
        if min(gx, gy, gz) < 0 or max(gx, gy, gz) > _MAX_I32:
            raise LaunchError(f"grid {tuple(grid3)} must have dimensions in [0, 2^31)")
        try:  # one pop: threads launching the same kernel at once each get their own
            res = self._pool.pop()
        except IndexError:
            res = self._resources()
        try:
            self._pack(res.slots, args)
            total = gx * gy * gz
            if total:
                self._run(res, total, gx, gy, gz, args)
        finally:
            self._pool.append(res)

    def _run(self, res, total, gx, gy, gz, args) -> None:
        nw = 1 if self.prints else max(1, min(len(res.arenas), total))
        if nw > 1 and self._serial:
            nw = 1  # too little work to pay for waking helper threads
        t0 = time.perf_counter()
        chunk = total if nw == 1 else max(1, total // (nw * CHUNKS_PER_WORKER))
        res.counter.value = 0
        res.stop.value = 0
        session = PrintSession(self.mem_ops, nw) if self.prints else None
        errs = res.errs
        if session is not None:
            errs[:nw, TOKEN] = session.token
            errs[:nw, WORKER] = np.arange(nw)
        fn, slots, counter, stop = self.fn, res.slots_addr, res.counter_addr, res.stop_addr
        scratch, err_addrs = res.arena_addrs, res.err_addrs
        try:
            if nw == 1:
                rc = fn(total, chunk, counter, gx, gy, gz, slots, scratch[0], err_addrs[0],
                        stop)
            else:
                rc = 0
                run_parallel([lambda k=k: fn(total, chunk, counter, gx, gy, gz, slots,
                                             scratch[k], err_addrs[k], stop)
                              for k in range(nw)])
                rc = res.stop.value
        finally:
            elapsed = time.perf_counter() - t0
            if nw > 1:
                self._serial = elapsed < SERIAL_BELOW
            elif self._serial and elapsed > PARALLEL_ABOVE:
                self._serial = False
            failed = [e.copy() for e in errs[:nw] if e[0]]
            if failed:
                errs[:nw] = 0
            if session is not None:
                session.close()
                sys.stdout.write(session.text())
        if session is not None and session.failure is not None:
            raise LaunchError(f"tt.print failed: {session.failure!r}")
        if rc and failed:
            raise self._error(min(failed, key=lambda e: (int(e[4]), int(e[3]), int(e[2]))),
                              args)

    def _error(self, rec, args) -> Exception:
        _, op_index, x, y, z, param, byte_off, elem_index, kind = (int(v) for v in rec[:9])
        kind_name, loc, extra = self.mem_ops[op_index]
        if kind_name == "assert":
            return DeviceAssertionError(extra, (x, y, z), loc)
        if kind_name == "gather":
            return InterpreterError(f"tt.gather index out of range [0, {extra}) at tile "
                                    f"element {elem_index}", (x, y, z), loc)
        name = self.param_names[param]
        t = self.param_types[param]
        itemsize = storage_size(t.pointee)
        arg = args[param]
        n = (arg.hi - arg.lo) // max(1, arg.itemsize)
        start = (arg.lo - arg.address) // itemsize
        msg = (f"out-of-bounds {kind_name} in program id ({x}, {y}, {z}): element offset "
               f"{byte_off // itemsize} from `{name}` (byte offset {byte_off}, tile element "
               f"{elem_index}) is outside the {n} elements passed for `{name}` (valid "
               f"offsets {start}..{start + n - 1}); mask the access (e.g. mask=offs < n) "
               f"or check the grid")
        err = OutOfBoundsError(msg, program_id=(x, y, z), loc=loc, offset=byte_off, arg=name)
        err.element_offset = byte_off // itemsize
        err.offsets = [err.element_offset]
        return err
