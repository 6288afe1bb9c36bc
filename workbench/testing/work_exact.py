"""Exact work counting: run a launch on the interpreter with counting closures.

How it counts (``count_work(..., exact=True)``):

- The kernel's ttir is compiled by a subclass of the interpreter's function compiler that wraps
  every float op's closure: each execution adds the op's FLOPs per element (the table of
  :mod:`workbench.testing.work`) times the tile's elements times the programs running together.
  So loops count the iterations they really ran and ``scf.if`` only the branch taken. Reduce and
  scan combine regions are counted at the ``tt.reduce``/``tt.scan`` op (elements folded in x the
  region's FLOPs), since the interpreter may run them as one numpy call.
- Memory is the interpreter's :class:`~workbench.backends.interp.memory.Memory` with counting
  ``load``/``store``/atomics: for every access, the addresses of the *unmasked* lanes mark a
  byte map of the array they fall in (one map for reads, one for writes). ``bytes_read`` /
  ``bytes_written`` are the distinct bytes marked (each input read once, each output written
  once, exactly); ``bytes_issued`` counts every unmasked lane access, re-reads included.
- The launch runs on host copies of the arrays (device arrays are copied to the host), so the
  caller's arrays are untouched. It runs at interpreter speed: use small launches.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..backends.interp.block import PIDS
from ..backends.interp.compiler import FunctionCompiler
from ..backends.interp.launch import Launcher
from ..backends.interp.memory import Memory
from ..runtime.devices import is_cuda_array
from .work_model import FLOP_PER_ELEMENT, Work, dtype_name, is_float, numel


def _in_combine_region(op) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if parent.name in ("tt.reduce", "tt.scan"):
            return True
        parent = parent.parent_op()
    return False


def _region_flops(op) -> dict:
    """dtype -> FLOPs of one execution of the combine region of a reduce/scan."""
    out: defaultdict[str, float] = defaultdict(float)
    for inner in op.regions[0].block.ops:
        if inner.name in FLOP_PER_ELEMENT and inner.results and is_float(inner.result.type):
            out[dtype_name(inner.result.type)] += FLOP_PER_ELEMENT[inner.name]
    return out


def _op_flops(op) -> dict | None:
    """dtype -> FLOPs per program of one execution of ``op`` (None: no FLOPs)."""
    name = op.name
    if name == "tt.dot":
        a = op.operands[0].type
        shape = op.result.type.shape
        return {dtype_name(a) + ":dot": 2.0 * numel(op.result.type) * a.shape[-1]} \
            if shape else None
    if name in FLOP_PER_ELEMENT and op.results and is_float(op.result.type):
        return {dtype_name(op.result.type): float(FLOP_PER_ELEMENT[name] *
                                                  numel(op.result.type))}
    if name in ("tt.reduce", "tt.scan"):
        per = _region_flops(op)
        n_in = numel(op.operands[0].type)
        if name == "tt.reduce":
            n_out = numel(op.results[0].type)
        else:
            shape = getattr(op.operands[0].type, "shape", None) or (1,)
            n_out = n_in // max(1, shape[op.attributes.get("axis", 0)])
        folds = max(0, n_in - n_out)
        return {k: v * folds for k, v in per.items()} or None
    if name == "tt.atomic_rmw" and is_float(op.operands[1].type):
        return {dtype_name(op.operands[1].type): float(numel(op.operands[0].type))}
    return None


class _CountingCompiler(FunctionCompiler):
    """The interpreter's compiler with FLOP-counting closures (see the module docstring)."""

    def __init__(self, func, module, flops):
        super().__init__(func, module)
        self.flop_tally = flops

    def op(self, op):
        f = super().op(op)
        per = _op_flops(op) if f is not None else None
        if per is None or _in_combine_region(op):
            return f
        tally = self.flop_tally
        items = list(per.items())

        def counted(env, f=f):
            f(env)
            programs = len(env[PIDS])
            for key, n in items:
                tally[key] += n * programs
        return counted


class _CountingMemory(Memory):
    """Memory recording, per argument, the bytes unmasked lanes read and wrote."""

    def attach(self) -> "_CountingMemory":
        self.read_maps: dict = {}
        self.write_maps: dict = {}
        self.issued = 0
        regions = sorted(self.args.items(), key=lambda kv: kv[1].lo)
        self._order = [i for i, _ in regions]
        self._lo = np.array([r.lo for _, r in regions], dtype=np.int64)
        self._hi = np.array([r.hi for _, r in regions], dtype=np.int64)
        return self

    def _mark(self, maps, addr, mask, k: int) -> None:
        a = np.asarray(addr).ravel() if mask is None else \
            np.asarray(addr)[np.broadcast_to(mask, np.shape(addr))]
        if a.size == 0 or not len(self._lo):
            return
        self.issued += int(a.size) * k
        which = np.clip(np.searchsorted(self._lo, a, side="right") - 1, 0, len(self._lo) - 1)
        for w in np.unique(which):
            idx = self._order[int(w)]
            region = self.args[idx]
            sel = a[which == w] - region.lo
            bmap = maps.get(idx)
            if bmap is None:
                bmap = maps[idx] = np.zeros(max(0, region.hi - region.lo), dtype=bool)
            for j in range(k):
                bmap[np.clip(sel + j, 0, max(0, bmap.size - 1))] = True

    def load(self, addr, mask, dt, arg, aligned=False):
        out = super().load(addr, mask, dt, arg, aligned)
        self._mark(self.read_maps, addr, mask, dt.itemsize)
        return out

    def store(self, addr, vals, mask, dt, arg, aligned=False):
        super().store(addr, vals, mask, dt, arg, aligned)
        self._mark(self.write_maps, addr, mask, dt.itemsize)

    def rmw(self, addr, vals, mask, dt, arg, combine):
        out = super().rmw(addr, vals, mask, dt, arg, combine)
        self._mark(self.read_maps, addr, mask, dt.itemsize)
        self._mark(self.write_maps, addr, mask, dt.itemsize)
        return out

    def cas(self, addr, cmp, vals, dt, arg):
        out = super().cas(addr, cmp, vals, dt, arg)
        self._mark(self.read_maps, addr, None, dt.itemsize)
        self._mark(self.write_maps, addr, None, dt.itemsize)
        return out


class _CountingLauncher(Launcher):
    def _bind(self, args):
        env, memory = super()._bind(args)
        memory.__class__ = _CountingMemory  # same state, counting accessors
        self.memory = memory.attach()
        return env, memory


def _host_copy(v):
    """A host (numpy) copy of an array argument; other values unchanged."""
    if isinstance(v, np.ndarray):
        return v.copy()
    if hasattr(v, "to_numpy"):
        return np.array(v.to_numpy())
    if is_cuda_array(v) and hasattr(v, "cpu"):
        return np.array(v.cpu().numpy())
    if hasattr(v, "__array__") and hasattr(v, "dtype") and hasattr(v, "shape"):
        return np.array(v)
    return v


def exact_work(kernel, compiled, grid: tuple, values: dict) -> Work:
    """Run ``compiled``'s ttir over ``grid`` on the interpreter with counting, on host copies
    of ``values`` (the launch's arguments by parameter name). ``kernel``: the ``@jit`` kernel
    (for binding), or the CompiledKernel itself. Returns a :class:`Work` with
    ``mode="exact"``. Raises what the interpreter raises (OutOfBoundsError...) and
    ValueError when ``values`` lacks an argument."""
    from ..ir.core import functions
    from ..ir.parser import parse_module
    from ..runtime.binding import specialize
    from ..runtime.specialization import flat_runtime
    base = kernel
    while not getattr(base, "__workbench_jit__", False) and hasattr(base, "fn"):
        base = base.fn
    fn, params = compiled.fn, compiled.params
    missing = [p.name for p in params if p.name not in values and not p.constexpr]
    if missing:
        raise ValueError(f"exact counting needs the launch's arguments; missing {missing}")
    host = {k: _host_copy(v) for k, v in values.items()}
    for p in params:
        if p.name not in host:
            host[p.name] = next(a.value for a in compiled.spec.args if a.name == p.name)
    bound = specialize(fn, params, host)
    runtime = flat_runtime(compiled.spec.args, bound.per_param)
    module = parse_module(compiled.asm["ttir"])
    func = functions(module)[0]
    flops: defaultdict[str, float] = defaultdict(float)
    cf = _CountingCompiler(func, module, flops).compile()
    launcher = _CountingLauncher(cf)
    grid3 = tuple(grid) + (1,) * (3 - len(grid))
    launcher(grid3, runtime)
    mem = getattr(launcher, "memory", None)
    by_arg, read, written = {}, 0.0, 0.0
    issued = 0.0
    if mem is not None:
        issued = float(mem.issued)
        for idx, region in mem.args.items():
            r = float(np.count_nonzero(mem.read_maps[idx])) if idx in mem.read_maps else 0.0
            w = float(np.count_nonzero(mem.write_maps[idx])) if idx in mem.write_maps else 0.0
            if r or w:
                by_arg[region.name] = (r, w)
            read += r
            written += w
    progs = int(np.prod(grid3))
    fl = {k: v for k, v in flops.items() if v}
    return Work(flops=float(sum(fl.values())), bytes=read + written, bytes_read=read,
                bytes_written=written, flops_by_dtype=fl, bytes_by_arg=by_arg,
                bytes_issued=issued, programs=progs, mode="exact", complete=True,
                notes=["exact: counted on the interpreter (unmasked lanes, distinct bytes)"])
