"""Static facts the interpreter uses to run many programs at once when that is exact.

- *provenance*: for each pointer value, the index of the kernel parameter it was derived from
  (through ``tt.addptr``, splat, broadcast, loops...), or None when unknown; used for fast
  bounds checks and for naming the argument in out-of-bounds errors.
- *varying*: values that may differ between programs (they depend on ``tt.get_program_id`` or
  on memory). Control flow on such values must run program by program.
- :func:`analyse` combines them into a :class:`KernelFacts`: whether the kernel may be batched
  (no atomics, prints, calls or shared memory; uniform control flow; reduce regions that only
  use constants from outside) and which parameters it loads from and stores to. The launcher
  batches only when no stored span overlaps a loaded span, so no program can observe another
  program's stores, which makes batched execution equal to sequential execution.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.core import Operation, Value
from ...ir.types import is_ptr

ALL = -1  # "any parameter" in loaded/stored sets

_PTR_PASS = {"tt.addptr", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.unsplat",
             "tt.trans", "ttg.convert_layout", "tt.bitcast", "tt.join", "tt.cat", "tt.split",
             "arith.select"}
_NO_BATCH = {"tt.atomic_rmw", "tt.atomic_cas", "tt.print", "tt.call", "ttg.local_alloc",
             "ttg.local_store", "ttg.local_load", "ttg.local_dealloc", "tt.histogram"}
_VARYING_SOURCES = {"tt.get_program_id", "tt.load", "tt.atomic_rmw", "tt.atomic_cas",
                    "ttg.local_load", "tt.call"}


@dataclass
class KernelFacts:
    """``batchable``: programs may run together (subject to the launch-time overlap check);
    ``why_not``: the reason when not; ``loaded``/``stored``: parameter indices (``ALL`` when a
    pointer's origin is unknown); ``provenance``: Value -> parameter index."""

    batchable: bool
    why_not: str | None
    loaded: set = field(default_factory=set)
    stored: set = field(default_factory=set)
    provenance: dict = field(default_factory=dict)


def _walk(block):
    for op in block.ops:
        yield op
        for region in op.regions:
            for b in region.blocks:
                yield from _walk(b)


def _terminator(block) -> Operation:
    """The terminator of a region's block (``scf.yield``, ``scf.condition``...). Raises
    ValueError for a block without one (the verifier rejects such IR)."""
    term = block.terminator
    if term is None:
        raise ValueError("a region block without a terminator")
    return term


def _edges(op: Operation):
    """(destination value, source values) pairs for values defined by region-carrying ops."""
    out = []
    regs = op.regions
    if op.name == "scf.for":
        body = regs[0].block
        ys = _terminator(body).operands
        out.append((body.args[0], op.operands[:3]))
        for i, init in enumerate(op.operands[3:]):
            out.append((body.args[i + 1], [init, ys[i]]))
            out.append((op.results[i], [init, ys[i]]))
    elif op.name == "scf.if":
        for i, r in enumerate(op.results):
            srcs = [op.operands[0]]
            for reg in regs:
                if reg.blocks and reg.block.terminator is not None:
                    srcs.append(reg.block.terminator.operands[i])
            out.append((r, srcs))
    elif op.name == "scf.while":
        before, after = regs[0].block, regs[1].block
        cond = _terminator(before)
        ys = _terminator(after).operands
        for i, init in enumerate(op.operands):
            out.append((before.args[i], [init, ys[i]]))
        for i, a in enumerate(after.args):
            out.append((a, [cond.operands[i + 1], cond.operands[0]]))
        for i, r in enumerate(op.results):
            out.append((r, [cond.operands[i + 1], cond.operands[0]]))
    elif op.name in ("tt.reduce", "tt.scan"):
        body = regs[0].block
        n = len(op.operands)
        for i, a in enumerate(body.args):
            out.append((a, [op.operands[i % n]]))
        rets = _terminator(body).operands
        for i, r in enumerate(op.results):
            out.append((r, list(op.operands) + [rets[i]]))
    else:
        for r in op.results:
            out.append((r, list(op.operands)))
    return out


def _fixpoint(func: Operation, transfer):
    """Iterate ``transfer(op, facts) -> changed`` over every op until nothing changes."""
    facts: dict = {}
    block = func.regions[0].block
    ops = list(_walk(block))
    changed = True
    while changed:
        changed = False
        for op in ops:
            changed |= transfer(op, facts)
    return facts


def varying_values(func: Operation) -> dict:
    """Value -> True for values that may differ between programs."""
    def transfer(op, facts):
        changed = False
        for dst, srcs in _edges(op):
            v = op.name in _VARYING_SOURCES or any(facts.get(s, False) for s in srcs)
            if v and not facts.get(dst, False):
                facts[dst] = True
                changed = True
        return changed
    return _fixpoint(func, transfer)


_UNSET = object()


def provenance(func: Operation) -> dict:
    """Value -> index of the ``tt.func`` parameter a pointer came from, or None if unknown."""
    args = func.regions[0].block.args
    init = {a: i for i, a in enumerate(args) if is_ptr(a.type)}

    def join(a, b):
        if a is _UNSET:
            return b
        if b is _UNSET:
            return a
        return a if a == b else None

    def transfer(op, facts):
        changed = False
        for dst, srcs in _edges(op):
            if not is_ptr(dst.type):
                continue
            if op.name in ("scf.for", "scf.if", "scf.while", "tt.reduce", "tt.scan"):
                cand = srcs
            elif op.name in _PTR_PASS:
                cand = srcs[1:] if op.name == "arith.select" else srcs
                if op.name not in ("tt.join", "tt.cat", "arith.select"):
                    cand = srcs[:1]
            else:
                cand = None
            val = _UNSET if cand is not None else None
            for s in cand or ():
                if is_ptr(s.type):
                    val = join(val, init[s] if s in init else facts.get(s, _UNSET))
            if val is _UNSET:
                continue
            old = facts.get(dst, _UNSET)
            new = val if old is _UNSET else join(old, val)
            if old is _UNSET or new != old:
                facts[dst] = new
                changed = True
        return changed
    facts = _fixpoint(func, transfer)
    facts.update(init)
    return facts


def _region_uses_outer(op: Operation, varying: dict) -> bool:
    """Whether a reduce/scan region reads a value defined outside it that may differ between
    programs (it would not line up with the region's per-lane arrays in a batch)."""
    inner = set()
    for b in (r.block for r in op.regions):
        inner.update(b.args)
        for o in _walk(b):
            inner.update(o.results)
    for b in (r.block for r in op.regions):
        for o in _walk(b):
            for v in o.operands:
                if v not in inner and varying.get(v, False):
                    return True
    return False


def analyse(func: Operation) -> KernelFacts:
    """Provenance, varying values and batchability of a ``tt.func`` (see module doc)."""
    prov = provenance(func)
    varying = varying_values(func)
    why = None
    loaded, stored = set(), set()

    def origin(v: Value):
        p = prov.get(v)
        return ALL if p is None else p

    for op in _walk(func.regions[0].block):
        n = op.name
        if n in _NO_BATCH and why is None:
            why = f"the kernel uses {n}"
        if n == "tt.load":
            loaded.add(origin(op.operands[0]))
        elif n == "tt.store":
            stored.add(origin(op.operands[0]))
        elif n == "scf.for" and any(varying.get(v) for v in op.operands[:3]) and why is None:
            why = "a loop's bounds differ between programs"
        elif n == "scf.if" and varying.get(op.operands[0]) and why is None:
            why = "an if's condition differs between programs"
        elif n == "scf.while" and why is None:
            cond = op.regions[0].block.terminator.operands[0]
            if varying.get(cond):
                why = "a while loop's condition differs between programs"
        elif n in ("tt.reduce", "tt.scan") and why is None and _region_uses_outer(op, varying):
            why = "a combine region reads program-dependent values from outside"
    return KernelFacts(why is None, why, loaded, stored, prov)
