"""Launching a JIT-compiled CPU kernel over a grid from Python.

The grid's linear program ids are split into one contiguous range per worker thread
(``os.cpu_count()`` workers at most); each worker makes exactly one native call of
``<name>_grid`` through ctypes, which releases the GIL, with its own scratch arena and error
record. An empty grid makes no call. Error records become exceptions (the lowest program id
that failed is reported): out-of-bounds accesses :class:`workbench.errors.OutOfBoundsError`,
failed ``tt.assert`` :class:`~workbench.backends.interp.errors.DeviceAssertionError` (the
interpreter's class, a :class:`workbench.errors.WorkbenchError`), a bad ``tt.gather`` index
an :class:`~workbench.backends.interp.errors.InterpreterError`. Kernels with ``tt.print`` get
a :class:`.hostcalls.PrintSession`; its lines go to ``sys.stdout`` after the grid ran (also
when it failed), in program-id order.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading

import numpy as np

from ...backends.base import PointerArg
from ...backends.interp.errors import DeviceAssertionError, InterpreterError
from ...errors import LaunchError, OutOfBoundsError
from .hostcalls import TOKEN, WORKER, PrintSession
from ...ir.types import FloatType, IntType, PointerType
from .llvmtypes import storage_size
from .memory import ERR_FIELDS

_GRID_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64, ctypes.c_int32,
                            ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p)
_MAX_I32 = 2 ** 31 - 1


def _pack_scalar(value, t, name):
    """One scalar argument as a 1-element numpy array in the storage type of IR type ``t``."""
    if isinstance(value, PointerArg) or isinstance(value, np.ndarray):
        raise LaunchError(f"argument `{name}` is a scalar parameter ({t}) but got an array")
    if isinstance(t, IntType):
        if not isinstance(value, (bool, int, np.integer, np.bool_)):
            raise LaunchError(f"argument `{name}` must be an integer ({t}), got {value!r}")
        w = t.width
        if w == 1:
            return np.array([1 if value else 0], np.uint8)
        return np.array([int(value) % (1 << w)], f"u{w // 8}")
    if isinstance(t, FloatType):
        if not isinstance(value, (bool, int, float, np.integer, np.floating)):
            raise LaunchError(f"argument `{name}` must be a number ({t}), got {value!r}")
        if t.name == "bf16":
            bits = int(np.array(float(value), np.float32).view(np.uint32))
            bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
            return np.array([bits], np.uint16)
        return np.array([float(value)], {"f16": np.float16, "f32": np.float32,
                                         "f64": np.float64}[t.name])
    raise LaunchError(f"argument `{name}`: unsupported parameter type {t}")


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

    def _pack(self, args):
        if len(args) != len(self.param_types):
            raise LaunchError(f"kernel `{self.name}` takes {len(self.param_types)} run-time "
                              f"arguments ({', '.join(self.param_names)}), got {len(args)}")
        keep = []
        for a, t, n in zip(args, self.param_types, self.param_names):
            if isinstance(t, PointerType):
                if not isinstance(a, PointerArg):
                    raise LaunchError(f"argument `{n}` is a pointer parameter ({t}); pass an "
                                      f"array, got {type(a).__name__}")
                keep.append(np.array([a.address, a.lo, a.hi], np.uint64))
            else:
                keep.append(_pack_scalar(a, t, n))
        argv = (ctypes.c_void_p * max(1, len(keep)))(*[k.ctypes.data for k in keep])
        return keep, argv

    def __call__(self, grid3, args) -> None:
        gx, gy, gz = (int(g) for g in grid3)
        if min(gx, gy, gz) < 0 or max(gx, gy, gz) > _MAX_I32:
            raise LaunchError(f"grid {tuple(grid3)} must have dimensions in [0, 2^31)")
        keep, argv = self._pack(args)
        total = gx * gy * gz
        if total == 0:
            return
        nw = max(1, min(self.workers, total))
        errs = np.zeros((nw, ERR_FIELDS), np.int64)
        session = PrintSession(self.mem_ops, nw) if self.prints else None
        if session is not None:
            errs[:, TOKEN] = session.token
            errs[:, WORKER] = np.arange(nw)
        scratch = [np.empty(self.arena_bytes + 64, np.uint8) for _ in range(nw)]
        bounds = [total * k // nw for k in range(nw + 1)]

        def work(k):
            base = scratch[k].ctypes.data
            aligned = (base + 63) // 64 * 64
            self.fn(bounds[k], bounds[k + 1], gx, gy, gz, ctypes.addressof(argv), aligned,
                    errs[k].ctypes.data)
        try:
            if nw == 1:
                work(0)
            else:
                threads = [threading.Thread(target=work, args=(k,)) for k in range(1, nw)]
                for t in threads:
                    t.start()
                work(0)
                for t in threads:
                    t.join()
        finally:
            if session is not None:
                session.close()
                sys.stdout.write(session.text())
        del keep
        if session is not None and session.failure is not None:
            raise LaunchError(f"tt.print failed: {session.failure!r}")
        failed = [e for e in errs if e[0]]
        if failed:
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
        return OutOfBoundsError(msg, program_id=(x, y, z), loc=loc, offset=byte_off, arg=name)
