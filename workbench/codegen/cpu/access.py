"""Contiguous memory accesses in the CPU lowering (loads, stores and their bounds checks).

A pointer tile whose addresses come in runs of consecutive elements along some dim (the
*contiguity* of :class:`workbench.passes.axis_info.AxisInfo`, Triton's rules: ``ptr + offs``
with ``offs = pid * BLOCK + tl.arange(0, BLOCK)`` is contiguous over the whole block) is
accessed as a plain array: the loop nest over the tile puts that dim innermost, split into
``(n // c, c)`` for runs of ``c`` elements, and the element pointer is
``getelementptr T, (inttoptr run_start), r`` with ``r`` the innermost loop index. LLVM's
scalar evolution sees a consecutive pointer (it cannot through ``inttoptr(base + sext(i32
offset) * size)``, whose wrap-around it cannot rule out), so the loop vectoriser emits plain
vector loads and stores, and masked ones (``llvm.masked.load`` / ``llvm.masked.store``)
when the access has a mask. Tiles without a contiguous dim keep one address per element
(gathers/scatters).

Bounds checks of a contiguous access test only the first and last byte of each run
(``[first, last + size)`` inside one argument's span implies every element of the run is);
only when that fails (typically the masked tail of the last program) does the exact
per-element check of :mod:`.memory` run, which honours the mask and names the first bad
element.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from llvmlite import ir

from .llvmtypes import I64
from .tiles import ZERO, Splat


@dataclass(frozen=True)
class Run:
    """Contiguous runs of ``length`` elements along tile dim ``dim`` (``length`` divides the
    dim's extent; runs start at multiples of ``length``)."""

    dim: int
    length: int


def contiguous_run(lw, ptr_value, ptr_tile, shape) -> Run | None:
    """The best :class:`Run` of the pointer tile ``ptr_tile`` (IR value ``ptr_value``; None
    when not lowered yet) of ``shape``, from the kernel's AxisInfo, or None (scalar, splat,
    or no dim with contiguity >= 2). Ties prefer the later (row-major faster) dim."""
    if not shape or isinstance(ptr_tile, Splat) or getattr(lw, "axis", None) is None:
        return None
    info = lw.axis.get(ptr_value)
    if info.rank != len(shape):
        return None
    best = None
    for d, n in enumerate(shape):
        c = gcd(int(info.contiguity[d]), int(n))
        if c >= 2 and (best is None or c >= best.length):
            best = Run(d, c)
    return best


def run_nest(b: ir.IRBuilder, shape: tuple, run: Run, body) -> None:
    """Loops over every element of ``shape`` with ``run.dim`` innermost, split into
    ``(n // length, length)``. Calls ``body(idx, start_idx, r)``: ``idx`` the full index
    (tuple of i64), ``start_idx`` the same with ``idx[dim]`` replaced by the run's first index,
    ``r`` the i64 index inside the run. The builder ends after the nest."""
    d, c = run.dim, run.length
    outer = [(k, n) for k, n in enumerate(shape) if k != d] + [(d, shape[d] // c)]
    _outer(b, outer, {}, lambda vals: _inner(b, shape, d, c, vals, body))


def runs_nest(b: ir.IRBuilder, shape: tuple, run: Run, body) -> None:
    """Loops over the runs only: ``body(start_idx)`` once per run (``start_idx`` as in
    :func:`run_nest`)."""
    d, c = run.dim, run.length
    outer = [(k, n) for k, n in enumerate(shape) if k != d] + [(d, shape[d] // c)]

    def at(vals):
        start = _start(b, vals[d], c)
        body(tuple(start if k == d else vals[k] for k in range(len(shape))))
    _outer(b, outer, {}, at)


def _start(b, chunk, c):
    if isinstance(chunk, ir.Constant) and chunk.constant == 0:
        return ZERO
    return b.mul(chunk, ir.Constant(I64, c))


def _inner(b, shape, d, c, vals, body):
    start = _start(b, vals[d], c)
    start_idx = tuple(start if k == d else vals[k] for k in range(len(shape)))

    def leaf(r):
        i = r if start is ZERO else b.add(start, r)
        body(tuple(i if k == d else vals[k] for k in range(len(shape))), start_idx, r)
    _loop(b, c, leaf)


def _outer(b, dims, vals, leaf):
    if not dims:
        leaf(vals)
        return
    (k, n), rest = dims[0], dims[1:]

    def step(i):
        _outer(b, rest, {**vals, k: i}, leaf)
    _loop(b, n, step)


def _loop(b: ir.IRBuilder, n: int, body) -> None:
    """A counted loop ``for i in range(n)`` (no loop for n == 1: ``body(0)``)."""
    if n <= 0:
        return
    if n == 1:
        body(ZERO)
        return
    fn = b.function
    pre = b.block
    head = fn.append_basic_block("vloop")
    exit_ = fn.append_basic_block("vloop.end")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64, name="r")
    i.add_incoming(ZERO, pre)
    body(i)
    nxt = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, ir.Constant(I64, n)), head, exit_)
    b.position_at_end(exit_)


def element_pointer(b: ir.IRBuilder, e, ptr_tile, start_idx, r, storage):
    """``getelementptr storage, (inttoptr ptr_tile[start_idx]), r``: the pointer to element
    ``r`` of the run starting at ``start_idx``."""
    base = b.inttoptr(e.get(ptr_tile, start_idx), ir.PointerType())
    if isinstance(r, ir.Constant) and r.constant == 0:
        return base
    return b.gep(base, [r], source_etype=storage)
