"""Running a compiled function over a grid: argument binding, batching, error reporting.

Programs are numbered in the GPU's linear block order (x fastest, then y, then z) and run in
that order. When :mod:`.analysis` says the kernel may be batched and no array it stores to
overlaps an array it loads from, up to ``batch_elems // largest tile`` consecutive programs run
together as one numpy computation (exactly equal to running them one by one). If anything
fails inside a batch, that batch is re-run program by program so the error names the first
failing program, exactly as sequential execution would.
"""
from __future__ import annotations

import numpy as np

from ...errors import LaunchError
from ...ir.types import FloatType, IntType, PointerType, TensorDescType
from ..base import PointerArg
from .analysis import ALL
from .block import FIRST_SLOT, MEM, NPROG, PID, PIDS, Return, run_block
from .compiler import CompiledFunction, reraise_with_location
from .dtypes import constant_array, from_float
from .memory import Memory

DEFAULT_BATCH_ELEMS = 1 << 15


def bind_scalar(value, t, name: str) -> np.ndarray:
    """A Python scalar argument as a 1-element array of IR type ``t`` (ints wrap to the width,
    fp32 rounds to nearest). Raises LaunchError for a value of the wrong kind."""
    s = t.scalar
    if isinstance(s, PointerType):
        raise LaunchError(f"argument '{name}' must be an array (pointer parameter), got "
                          f"{type(value).__name__}")
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(s, FloatType):
        if not isinstance(value, (int, float)):
            raise LaunchError(f"argument '{name}' must be a number, got {type(value).__name__}")
        return from_float(np.array([float(value)], dtype=np.float64), s)
    if isinstance(s, IntType):
        if isinstance(value, float) or not isinstance(value, (int, bool)):
            raise LaunchError(f"argument '{name}' must be an int, got {type(value).__name__}")
        return constant_array(int(value), s)
    raise LaunchError(f"argument '{name}' has unsupported type {t}")


class Launcher:
    """``launcher(grid3, args)`` for a :class:`CompiledFunction` (see docs/contracts.md):
    ``args`` are the passed parameters in order, :class:`PointerArg` for pointers and Python
    int/float/bool for scalars. ``batch_elems`` bounds the elements of one tile times the
    programs run together (0 or 1 disables batching). ``recorder``: an
    :class:`~.recorder.AccessRecorder` that logs every load and store per program (programs
    then run one at a time), or None. Raises LaunchError for bad grids or arguments,
    OutOfBoundsError, DeviceAssertionError and InterpreterError while running."""

    def __init__(self, cf: CompiledFunction, batch_elems: int = DEFAULT_BATCH_ELEMS,
                 recorder=None):
        self.cf = cf
        self.recorder = recorder
        self.batch_elems = 0 if recorder is not None else batch_elems
        self.last_batch = 1  # programs per batch in the last launch (for tests/benchmarks)

    def _bind(self, args):
        cf = self.cf
        if len(args) != len(cf.arg_types):
            raise LaunchError(f"kernel '{cf.name}' takes {len(cf.arg_types)} run-time "
                              f"arguments, got {len(args)}")
        env = list(cf.template)
        pointers = {}
        for i, (a, t, s, name) in enumerate(zip(args, cf.arg_types, cf.arg_slots,
                                                cf.arg_names, strict=False)):
            if isinstance(t, TensorDescType) or isinstance(t.scalar, PointerType):
                if not isinstance(a, PointerArg):
                    raise LaunchError(f"argument '{name}' must be an array (pointer "
                                      f"parameter), got {type(a).__name__}")
                pointers[i] = (name, a)
                env[s] = np.array([a.address], dtype=np.int64)
            else:
                env[s] = bind_scalar(a, t, name)
        return env, Memory(pointers, self.recorder)

    def _batch_size(self, memory: Memory, total: int) -> int:
        facts = self.cf.facts
        if not facts.batchable or self.batch_elems <= 1 or total <= 1:
            return 1
        every = set(memory.args)
        stored = every if ALL in facts.stored else facts.stored
        loaded = every if ALL in facts.loaded else facts.loaded
        for s in stored:
            rs = memory.args.get(s)
            for ld in loaded:
                rl = memory.args.get(ld)
                if rs is not None and rl is not None and rs.lo < rl.hi and rl.lo < rs.hi:
                    return 1
        return max(1, min(total, self.batch_elems // max(1, self.cf.max_numel)))

    def __call__(self, grid3, args) -> None:
        grid = tuple(int(g) for g in grid3)
        if len(grid) != 3 or any(g < 0 for g in grid):
            raise LaunchError(f"grid must be three non-negative ints, got {grid3!r}")
        gx, gy, gz = grid
        total = gx * gy * gz
        if total == 0:
            return
        env0, memory = self._bind(args)
        if self.recorder is not None:
            self.recorder.grid = grid
        env0[MEM] = memory
        for a in range(3):
            env0[NPROG + a] = np.array([grid[a]], dtype=np.int32)
        batch = self._batch_size(memory, total)
        self.last_batch = batch
        with np.errstate(all="ignore"):
            start = 0
            while start < total:
                stop = min(total, start + batch)
                if batch == 1:
                    self._run_one(env0, start, gx, gy)
                else:
                    try:
                        self._run_batch(env0, start, stop, gx, gy)
                    except Exception:
                        for lin in range(start, stop):  # exact first error
                            self._run_one(env0, lin, gx, gy)
                        raise
                start = stop

    def _run_one(self, env0, lin: int, gx: int, gy: int) -> None:
        pid = (lin % gx, (lin // gx) % gy, lin // (gx * gy))
        env = list(env0)
        for a in range(3):
            env[PID + a] = np.array([pid[a]], dtype=np.int32)
        env[PIDS] = [pid]
        self._execute(env, pid)

    def _run_batch(self, env0, start: int, stop: int, gx: int, gy: int) -> None:
        lin = np.arange(start, stop, dtype=np.int64)
        xs, ys, zs = lin % gx, (lin // gx) % gy, lin // (gx * gy)
        env = list(env0)
        env[PID] = xs.astype(np.int32)
        env[PID + 1] = ys.astype(np.int32)
        env[PID + 2] = zs.astype(np.int32)
        env[PIDS] = list(zip(xs.tolist(), ys.tolist(), zs.tolist(), strict=False))
        self._execute(env, env[PIDS][0])

    def _execute(self, env, pid) -> None:
        try:
            run_block(self.cf.body, env)
        except Return:
            pass
        except Exception as e:  # noqa: BLE001 - re-raised with the op's location
            reraise_with_location(self.cf, e, pid)


__all__ = ["Launcher", "bind_scalar", "FIRST_SLOT"]
