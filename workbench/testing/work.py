"""Work counting for a launch: floating-point operations (FLOP) and bytes moved, counted from
the kernel's ttir, and the :class:`Run` record a roofline point is made of.

Static model (:func:`count_work`, the default), per program, times the number of programs:

- ``tt.load`` / ``tt.store``: the tile's element count x element bytes (a scalar access is one
  element); ``tt.atomic_rmw`` / ``tt.atomic_cas`` read and write their elements.
- "Each input read once, each output written once": when the launch's arrays are known, the
  bytes read from (written to) one array are capped at that array's size, so re-reads that the
  caches serve are not counted (the compulsory traffic; the uncapped sum is kept as
  ``bytes_issued``). Without the arrays (compile-only) nothing is capped.
- ``tt.dot``: 2·M·N·K per program (one multiply and one add per term), filed under the operand
  dtype with ``:dot`` appended (``"fp16:dot"``), since tensor cores have their own roof.
- Elementwise float ops: 1 FLOP per element for add, sub, mul, div, rem, neg, max/min and the
  ``math`` functions (exp, log, sqrt, sin, ...), 2 for ``math.fma`` and ``tt.clampf``; 0 for
  compares, selects, conversions, ``absf``, ``floor``/``ceil`` and integer ops.
- ``tt.reduce`` / ``tt.scan``: one combine per element folded in (input elements minus output
  elements) times the FLOPs of the combine region.
- ``scf.for``: the body counts trip-count times when the bounds are constants or are computed
  from the launch's scalar arguments by integer arithmetic; otherwise the count is incomplete
  (``Work.complete`` is False and ``notes`` says which loop) and :class:`WorkCountError` asks for
  ``exact=True`` or ``flops=``/``bytes=``. ``scf.if`` counts its larger branch (an upper bound);
  ``scf.while`` is incomplete.

Exact mode (``exact=True``, :mod:`workbench.testing.work_exact`): the kernel is run on the
interpreter with counting closures, on copies of the arrays (the caller's arrays are not
touched); bytes are the distinct bytes of each array that unmasked lanes loaded/stored, FLOPs
are the float ops executed (all lanes of a tile: masked lanes are computed too), with loops and
branches as they really ran. User override: ``flops=`` / ``bytes=`` replace either count.
"""
from __future__ import annotations

import math
from collections import defaultdict

from .work_model import (
    FLOP_PER_ELEMENT,
    Run,  # noqa: F401 - re-exported (workbench.testing.work.Run)
    Work,
    dtype_name,
    is_float,
    numel,
)

_PASS_THROUGH = ("tt.addptr", "tt.splat", "tt.unsplat", "tt.broadcast", "tt.expand_dims",
                 "tt.reshape", "tt.trans", "ttg.convert_layout", "tt.bitcast")
_INT_EVAL = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": lambda a, b: int(a / b) if b else None,
    "arith.divui": lambda a, b: a // b if b else None,
    "arith.remsi": lambda a, b: int(math.fmod(a, b)) if b else None,
    "arith.remui": lambda a, b: a % b if b else None,
    "arith.maxsi": max, "arith.minsi": min, "arith.maxui": max, "arith.minui": min,
}


class WorkCountError(ValueError):
    """The work of a launch could not be counted from the IR (a loop with a trip count only
    known at run time, a ``while`` loop); the message names the op and says what to pass."""


# ---------------------------------------------------------------------------------- static
def _func_of(compiled):
    from ..ir.core import functions
    from ..ir.parser import parse_module
    module = parse_module(compiled.asm["ttir"])
    funcs = functions(module)
    if not funcs:
        raise WorkCountError(f"kernel '{compiled.name}' has no tt.func in its ttir")
    return funcs[0]


class _StaticCounter:
    """Walks one ``tt.func`` accumulating per-program FLOPs and bytes with multipliers."""

    def __init__(self, func, scalars: dict):
        self.entry = func.regions[0].block
        names = func.attributes.get("arg_names") or []
        self.arg_name = {a: (names[i] if i < len(names) else f"arg{i}")
                         for i, a in enumerate(self.entry.args)}
        self.scalars = scalars
        self.flops: defaultdict[str, float] = defaultdict(float)
        self.read: defaultdict[str, float] = defaultdict(float)
        self.written: defaultdict[str, float] = defaultdict(float)
        self.notes: list[str] = []
        self.complete = True

    # -- values --------------------------------------------------------------------------
    def int_value(self, v):
        """The integer value of ``v`` when it is a constant or integer arithmetic on launch
        scalars, else None."""
        if v in self.arg_name:
            x = self.scalars.get(self.arg_name[v])
            return int(x) if isinstance(x, (int, bool)) or hasattr(x, "__index__") else None
        op = v.defining_op
        if op is None:
            return None
        if op.name == "arith.constant":
            val = op.attributes.get("value")
            return int(val) if isinstance(val, (int, bool)) else None
        if op.name in ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast"):
            return self.int_value(op.operands[0])
        f = _INT_EVAL.get(op.name)
        if f is None:
            return None
        a, b = (self.int_value(x) for x in op.operands[:2])
        return None if a is None or b is None else f(a, b)

    def pointer_arg(self, v) -> str:
        """The parameter a pointer value is derived from (through addptr, splat, broadcast,
        loop-carried values), or ``"?"``."""
        seen = 0
        while seen < 64:
            seen += 1
            if v in self.arg_name:
                return self.arg_name[v]
            op = v.defining_op
            if op is not None and op.name in _PASS_THROUGH and op.operands:
                v = op.operands[0]
                continue
            owner = v.owner
            parent = getattr(getattr(owner, "parent", None), "parent", None)
            if parent is not None and parent.name == "scf.for" and v.index > 0:
                v = parent.operands[3 + v.index - 1]
                continue
            break
        return "?"

    # -- walking --------------------------------------------------------------------------
    def _sub(self, block, mult: float) -> "_StaticCounter":
        """A counter sharing this one's values and notes, with fresh totals, run on ``block``."""
        sub = _StaticCounter.__new__(_StaticCounter)
        sub.__dict__.update(self.__dict__, flops=defaultdict(float), read=defaultdict(float),
                            written=defaultdict(float))
        sub.block(block, mult)
        self.complete = self.complete and sub.complete
        return sub

    def block(self, block, mult: float) -> None:
        for op in block.ops:
            self.op(op, mult)

    def op(self, op, mult: float) -> None:
        name = op.name
        if name in ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas"):
            self._memory(op, mult)
        elif name == "tt.dot":
            a = op.operands[0].type
            m_, n_ = op.result.type.shape[-2], op.result.type.shape[-1]
            batch = math.prod(op.result.type.shape[:-2])
            self.flops[dtype_name(a) + ":dot"] += 2.0 * batch * m_ * n_ * a.shape[-1] * mult
        elif name in FLOP_PER_ELEMENT and op.results and is_float(op.result.type):
            self.flops[dtype_name(op.result.type)] += \
                FLOP_PER_ELEMENT[name] * numel(op.result.type) * mult
        elif name in ("tt.reduce", "tt.scan"):
            self._combine(op, mult)
        elif name == "scf.for":
            self._for(op, mult)
        elif name == "scf.if":
            self._if(op, mult)
        elif name == "scf.while":
            self.complete = False
            self.notes.append(f"scf.while at {_where(op)}: iterations unknown (counted once)")
            for region in op.regions:
                self.block(region.block, mult)
        else:
            for region in op.regions:
                self.block(region.block, mult)

    def _memory(self, op, mult: float) -> None:
        """Bytes of a load, store or atomic (and an atomic add's FLOPs)."""
        from ..backends.interp.dtypes import mem_dtype
        name = op.name
        ptr_t = op.operands[0].type
        nbytes = numel(ptr_t) * mem_dtype(ptr_t.scalar.pointee).itemsize * mult
        arg = self.pointer_arg(op.operands[0])
        if name != "tt.store":
            self.read[arg] += nbytes
        if name != "tt.load":
            self.written[arg] += nbytes
        if name == "tt.atomic_rmw" and is_float(op.operands[1].type):
            self.flops[dtype_name(op.operands[1].type)] += numel(ptr_t) * mult

    def _combine(self, op, mult: float) -> None:
        """A reduce or scan: its combine region's FLOPs once per element folded in."""
        inner = self._sub(op.regions[0].block, 1.0)
        n_in = numel(op.operands[0].type)
        if op.name == "tt.reduce":
            n_out = numel(op.results[0].type)
        else:  # a scan: one combine per element but the first of each row
            shape = getattr(op.operands[0].type, "shape", None) or (1,)
            n_out = n_in // max(1, shape[op.attributes.get("axis", 0)])
        for k, v in inner.flops.items():
            self.flops[k] += v * max(0, n_in - n_out) * mult

    def _for(self, op, mult: float) -> None:
        lb, ub, step = (self.int_value(x) for x in op.operands[:3])
        if None in (lb, ub, step) or step <= 0:
            self.complete = False
            self.notes.append(f"scf.for at {_where(op)}: trip count not known before "
                              "running (counted once)")
            trips = 1
        else:
            trips = max(0, -(-(ub - lb) // step))
        self.block(op.regions[0].block, mult * trips)

    def _if(self, op, mult: float) -> None:
        """The larger branch of an ``scf.if`` (by FLOPs, then bytes)."""
        branches = [self._sub(region.block, mult) for region in op.regions if region.blocks]
        if not branches:
            return
        big = max(branches, key=lambda s: (sum(s.flops.values()),
                                           sum(s.read.values()) + sum(s.written.values())))
        for src, dst in ((big.flops, self.flops), (big.read, self.read),
                         (big.written, self.written)):
            for k, v in src.items():
                dst[k] += v
        if len(branches) > 1:
            self.notes.append(f"scf.if at {_where(op)}: the larger branch is counted")


def _where(op) -> str:
    loc = op.loc
    return f"{loc.file}:{loc.line}" if loc is not None and loc.line else "unknown line"


def _nbytes(v):
    n = getattr(v, "nbytes", None)
    return int(n) if isinstance(n, (int,)) or hasattr(n, "__index__") else None


def programs_of(grid) -> int:
    """The number of programs of a grid (int or tuple of up to 3 ints)."""
    if isinstance(grid, int):
        return grid
    return math.prod(int(g) for g in grid)


def static_work(compiled, grid, values: dict | None = None) -> Work:
    """Count the work of launching ``compiled`` (a CompiledKernel) over ``grid`` from its ttir
    (the static model of this module's docstring). ``values``: the launch's arguments by
    parameter name (scalars evaluate loop bounds; arrays cap bytes at their size)."""
    values = values or {}
    func = _func_of(compiled)
    c = _StaticCounter(func, {k: v for k, v in values.items()
                              if isinstance(v, (int, bool)) and not hasattr(v, "nbytes")})
    c.block(func.regions[0].block, 1.0)
    progs = programs_of(grid)
    by_arg, issued, read, written = {}, 0.0, 0.0, 0.0
    for arg in sorted(set(c.read) | set(c.written)):
        r, w = c.read.get(arg, 0.0) * progs, c.written.get(arg, 0.0) * progs
        issued += r + w
        cap = _nbytes(values.get(arg))
        if cap is not None:
            r, w = min(r, cap), min(w, cap)
        by_arg[arg] = (r, w)
        read += r
        written += w
    flops = {k: v * progs for k, v in c.flops.items() if v}
    return Work(flops=float(sum(flops.values())), bytes=read + written, bytes_read=read,
                bytes_written=written, flops_by_dtype=flops, bytes_by_arg=by_arg,
                bytes_issued=issued, programs=progs, mode="static", complete=c.complete,
                notes=list(c.notes))


def barriers_executed(compiled, values: dict | None = None) -> int | None:
    """How many ``gpu.barrier`` ops of ``compiled``'s ttgir one program passes: each counted
    once per iteration of the loops around it (trip counts from constants and the launch's
    scalar ``values``, by parameter name; a loop whose count is not known counts once; of an
    ``scf.if`` the branch with more). None when the kernel has no ttgir (the CPU backend and
    the interpreter). Barriers the code generator adds inside one op (a layout conversion
    through shared memory) are not ``gpu.barrier`` ops and are not counted."""
    from ..ir.core import functions
    from ..ir.parser import parse_module
    text = (getattr(compiled, "asm", None) or {}).get("ttgir")
    if not text:
        return None
    funcs = functions(parse_module(text))
    if not funcs:
        return None
    c = _StaticCounter(funcs[0], {k: v for k, v in (values or {}).items()
                                  if isinstance(v, (int, bool)) and not hasattr(v, "nbytes")})

    def count(block) -> int:
        n = 0
        for op in block.ops:
            if op.name == "gpu.barrier":
                n += 1
            elif op.name == "scf.for":
                lb, ub, step = (c.int_value(x) for x in op.operands[:3])
                trips = 1 if None in (lb, ub, step) or step <= 0 else \
                    max(0, -(-(ub - lb) // step))
                n += trips * count(op.regions[0].block)
            elif op.name == "scf.if":
                n += max((count(r.block) for r in op.regions if r.blocks), default=0)
            else:
                n += sum(count(b) for r in op.regions for b in r.blocks)
        return n
    return count(funcs[0].regions[0].block)


def launch_values(kernel, args, kwargs) -> dict:
    """Parameter name -> value of a launch ``kernel[grid](*args, **kwargs)`` (launch options
    such as ``num_warps`` are dropped)."""
    names = [p.name for p in kernel.params]
    values = dict(zip(names, args, strict=False))
    values.update({k: v for k, v in kwargs.items() if k in names})
    return values


def count_work(kernel, grid, *args, exact: bool = False, flops=None, bytes=None,
               **kwargs) -> Work:
    """The :class:`Work` of the launch ``kernel[grid](*args, **kwargs)`` without running it
    (unless ``exact``). ``kernel``: a ``@jit`` kernel (compiled for these arguments, not
    launched) or a CompiledKernel (then ``args`` are the launch's arguments, optional).
    ``grid``: an int or tuple (a callable grid is evaluated with the bound arguments).
    ``exact``: run on the interpreter with counting (see the module docstring).
    ``flops`` / ``bytes``: user counts replacing the counted ones (FLOP, bytes).

    An ``@autotune`` kernel is counted with the config tuned for these arguments (and
    ``@heuristics`` values as at a launch); before it has been tuned for them it raises
    :class:`~workbench.testing.tuned.NotTunedError` (launch once, or pass the
    meta-parameters).

    Raises :class:`WorkCountError` when the static count is incomplete (a loop bound known
    only at run time) and no override covers it; ``exact=True`` or ``flops=``/``bytes=`` then
    help. Compile errors propagate."""
    if flops is not None and bytes is not None:
        return Work(flops=float(flops), bytes=float(bytes), bytes_read=float(bytes),
                    mode="user", programs=0)
    compiled, values = _compiled_and_values(kernel, grid, args, kwargs)
    if callable(grid):
        grid = grid(dict(values))
    grid = (grid,) if isinstance(grid, int) else tuple(grid)
    if exact:
        from .work_exact import exact_work
        work = exact_work(kernel, compiled, grid, values)
    else:
        work = static_work(compiled, grid, values)
        if not work.complete and (flops is None or bytes is None):
            raise WorkCountError(
                f"cannot count the work of '{compiled.name}' from its IR: "
                + "; ".join(work.notes)
                + ". Pass exact=True (runs it on the interpreter) or give flops= and bytes=.")
    if flops is not None or bytes is not None:
        if flops is not None:
            work.flops = float(flops)
            work.flops_by_dtype = {work.dtype: float(flops)}
        if bytes is not None:
            work.bytes = float(bytes)
        work.mode += "+user"
    return work


def _compiled_and_values(kernel, grid, args, kwargs):
    if hasattr(kernel, "asm"):  # a CompiledKernel
        values = launch_values(kernel, args, kwargs) if args or kwargs else {}
        return kernel, values
    from .tuned import resolve_launch
    # an Autotuner/Heuristics wrapper: count the @jit underneath with the tuned config and
    # the heuristics' values (NotTunedError before the first launch of these arguments)
    base, kwargs = resolve_launch(kernel, args, kwargs)
    values = launch_values(base, args, kwargs)
    compiled = base.warmup(*args, grid=grid, **kwargs)
    return compiled, values
