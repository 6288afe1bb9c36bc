"""A small axis analysis (Triton's AxisInfo subset) deciding load/store vector widths.

For every integer or pointer value, per tensor dim:

* ``contiguity``: length of runs of consecutive values (``make_range`` gives the whole extent);
* ``divisibility``: largest power of two dividing the first element of each run (pointers: in
  bytes, seeded by ``tt.divisibility`` on kernel arguments);
* ``constancy``: length of runs of equal values (``splat``, ``broadcast``, masks).

Rules follow Triton 3.6 ``lib/Analysis/AxisInfo.cpp`` (AddSubOpAxisInfoVisitor,
MulIOpAxisInfoVisitor, CmpOpAxisInfoVisitor, SplatOp/ExpandDims/Broadcast visitors) in a
simplified, conservative form: anything not modelled is (1, 1, 1).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from ...ir.types import IntType, PointerType, TensorType

#: Divisibility given to the constant 0 (Triton uses 2**(bit width - 1); any large power works).
MAX_DIV = 1 << 30


def pow2_divisor(v: int) -> int:
    """Largest power of two dividing ``v`` (``MAX_DIV`` for 0), capped at ``MAX_DIV``."""
    v = abs(int(v))
    if v == 0:
        return MAX_DIV
    return min(v & -v, MAX_DIV)


@dataclass(frozen=True)
class AxisInfo:
    """Per-dim ``contiguity``, ``divisibility``, ``constancy`` (tuples of ints, len = rank; a
    scalar has rank 1 with constancy 1). ``value`` is the constant when known."""

    contiguity: tuple
    divisibility: tuple
    constancy: tuple
    value: int | None = None


def _unknown(rank: int) -> AxisInfo:
    return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank)


def _rank(t) -> int:
    return len(t.shape) if isinstance(t, TensorType) else 1


def _shape(t) -> tuple:
    return tuple(t.shape) if isinstance(t, TensorType) else (1,)


def _elem_bytes(ptr_type) -> int:
    pointee = ptr_type.scalar.pointee
    width = getattr(pointee, "width", 8)
    return max(width // 8, 1)


def analyse(func_op) -> dict:
    """AxisInfo for every value of ``func_op`` (a ttgir ``tt.func``), keyed by ``id(value)``."""
    info: dict = {}
    block = func_op.regions[0].block
    arg_attrs = func_op.attributes.get("arg_attrs") or [{} for _ in block.args]
    for arg, attrs in zip(block.args, arg_attrs):
        div = int((attrs or {}).get("tt.divisibility", 1))
        info[id(arg)] = AxisInfo((1,), (div,), (1,))
    for op in func_op.walk():
        if op is func_op:
            continue
        if op.name == "scf.for":  # iv = lb + i * step: divisible by gcd(div(lb), div(step))
            lb, step = _get(info, op.operands[0]), _get(info, op.operands[2])
            div = gcd(lb.divisibility[0], step.divisibility[0])
            info[id(op.regions[0].blocks[0].args[0])] = AxisInfo((1,), (div,), (1,))
        for region in op.regions:
            for b in region.blocks:
                for a in b.args:
                    info.setdefault(id(a), _unknown(_rank(a.type)))
        if len(op.results) == 1:
            info[id(op.result)] = _visit(op, info)
        else:
            for r in op.results:
                info[id(r)] = _unknown(_rank(r.type))
    return info


def _get(info, v) -> AxisInfo:
    return info.get(id(v)) or _unknown(_rank(v.type))


def _visit(op, info) -> AxisInfo:
    t = op.result.type
    rank, shape = _rank(t), _shape(t)
    name = op.name
    a = op.attributes
    ops = [_get(info, v) for v in op.operands]
    if name == "arith.constant" and isinstance(t.scalar, IntType):
        v = int(a["value"])
        return AxisInfo((1,) * rank, (pow2_divisor(v),) * rank, shape, v)
    if name == "tt.make_range":
        return AxisInfo((shape[0],), (pow2_divisor(a["start"]),), (1,))
    if name == "tt.get_program_id" or name == "tt.get_num_programs":
        return _unknown(1)
    if name == "tt.splat":
        s = ops[0]
        return AxisInfo((1,) * rank, (s.divisibility[0],) * rank, shape, s.value)
    if name == "tt.expand_dims":
        s = ops[0]
        ax = a["axis"]
        c, d, k = list(s.contiguity), list(s.divisibility), list(s.constancy)
        c.insert(ax, 1)
        d.insert(ax, d[0] if d else 1)
        k.insert(ax, 1)
        return AxisInfo(tuple(c), tuple(d), tuple(k), s.value)
    if name == "tt.broadcast":
        s = ops[0]
        src_shape = _shape(op.operands[0].type)
        c, d, k = list(s.contiguity), list(s.divisibility), list(s.constancy)
        for i in range(rank):
            if src_shape[i] == 1 and shape[i] != 1:
                c[i], k[i] = 1, shape[i]
        return AxisInfo(tuple(c), tuple(d), tuple(k), s.value)
    if name == "ttg.convert_layout":
        return ops[0]
    if name in ("arith.addi", "arith.subi", "tt.addptr"):
        l, r = ops
        scale = _elem_bytes(t) if name == "tt.addptr" else 1
        rd = tuple(x * scale if x < MAX_DIV else MAX_DIV for x in r.divisibility)
        contig = tuple(max(gcd(lc, rk), gcd(lk, rc)) for lc, lk, rc, rk in
                       zip(l.contiguity, l.constancy, r.contiguity, r.constancy))
        if name == "arith.subi":
            contig = tuple(gcd(lc, rk) for lc, rk in zip(l.contiguity, r.constancy))
        div = tuple(gcd(x, y) for x, y in zip(l.divisibility, rd))
        const = tuple(gcd(x, y) for x, y in zip(l.constancy, r.constancy))
        val = None
        if l.value is not None and r.value is not None and name != "tt.addptr":
            val = l.value + r.value if name == "arith.addi" else l.value - r.value
        return AxisInfo(contig, div, const, val)
    if name == "arith.muli":
        l, r = ops
        contig, div = [], []
        for i in range(rank):
            lc, rc = l.contiguity[i], r.contiguity[i]
            ld = 1 if lc > 1 else l.divisibility[i]
            rdv = 1 if rc > 1 else r.divisibility[i]
            if r.value == 1:
                contig.append(lc); div.append(l.divisibility[i]); continue
            if l.value == 1:
                contig.append(rc); div.append(r.divisibility[i]); continue
            contig.append(1)
            div.append(min(ld * rdv, MAX_DIV))
        const = tuple(gcd(x, y) for x, y in zip(l.constancy, r.constancy))
        val = l.value * r.value if l.value is not None and r.value is not None else None
        return AxisInfo(tuple(contig), tuple(div), const, val)
    if name == "arith.cmpi":
        l, r = ops
        const = []
        for i in range(rank):
            k = gcd(l.constancy[i], r.constancy[i])
            if a.get("predicate") in ("slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge") \
                    and r.constancy[i] >= shape[i] and l.contiguity[i] > 1:
                k = max(k, gcd(l.contiguity[i], gcd(l.divisibility[i], r.divisibility[i])))
            const.append(k)
        return AxisInfo((1,) * rank, (1,) * rank, tuple(const))
    if name in ("arith.andi", "arith.ori", "arith.xori", "arith.select"):
        const = tuple(_gcd_all([o.constancy[i] for o in ops]) for i in range(rank))
        return AxisInfo((1,) * rank, (1,) * rank, const)
    if name in ("arith.extsi", "arith.extui", "arith.trunci"):
        return ops[0]
    if isinstance(t.scalar, (IntType, PointerType)):
        const = tuple(_gcd_all([o.constancy[i] for o in ops]) if ops and all(
            len(o.constancy) == rank for o in ops) else 1 for i in range(rank))
        if name.startswith("tt.load") or name.startswith("tt.reduce"):
            const = (1,) * rank
        return AxisInfo((1,) * rank, (1,) * rank, const)
    return _unknown(rank)


def _gcd_all(xs) -> int:
    g = 0
    for x in xs:
        g = gcd(g, x)
    return g or 1
