"""AxisInfo: contiguity, divisibility and constancy of integer and pointer values, per dim.

The analysis Triton's coalescing pass and load/store lowering rely on. For every integer or
pointer value (scalars count as rank 1) and every tensor dim ``d``:

* ``contiguity[d]``: the values come in runs of this many consecutive integers along ``d``
  (``tt.make_range`` gives its whole extent);
* ``divisibility[d]``: the largest power of two dividing the first element of every such run.
  **Units**: integers in their own value units (elements when they are offsets); **pointers in
  bytes** (``tt.addptr`` scales the offset's divisibility by the pointee size, as Triton's
  ``AddSubOpAxisInfoVisitor<AddPtrOp>``), so ``tt.divisibility = 16`` on a pointer argument
  means a 16-byte aligned address. Pointers to ``i1`` address 1-byte elements;
* ``constancy[d]``: runs of this many equal values (``splat``, ``broadcast``, masks);
* ``value``: the constant, when known.

Seeds: ``tt.divisibility`` / ``tt.contiguity`` / ``tt.constancy`` argument attributes (the
runtime puts ``tt.divisibility = 16`` on pointers and ints divisible by 16) and the same names
as list attributes on any op (``tl.multiple_of``, ``tl.max_contiguous``, ``tl.max_constancy``),
which override what the transfer functions computed. ``tt.get_program_id`` and anything
without a rule (loads, reduces, floats) are pessimistic: (1, 1, 1). ``scf.for`` induction
variables get ``gcd(div(lb), div(step))``; loop-carried values are the fixpoint of the join
(gcd) of the initial and the yielded values; ``scf.if`` results the join of both branches.

Source: Triton 3.6 ``lib/Analysis/AxisInfo.cpp`` (visitors MakeRange, Constant, AddSub (addi,
subi, addptr), MulI, Div, Rem, Splat, Load, ExpandDims, Broadcast, Cmp, Select, Logical,
ShLI, ShR, MaxMin, Cast; ``AxisInfo::join``, ``getDivisibilityFromContiguity``,
``visitForOpInductionVar``, ``initPessimisticStateFromFunc``).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import gcd as _gcd2

from ..ir.core import Operation, Value
from ..ir.types import FloatType, IntType, PointerType, TensorType

#: Triton's ``highestPowOf2Divisor<int64_t>(0)``: the divisibility of 0 and "unknown, any".
MAX_DIVISOR = 1 << 62


def gcd(*xs: int) -> int:
    """Triton's variadic gcd: a 0 argument is ignored (``gcd(a, 0) == a``)."""
    g = 0
    for x in xs:
        g = _gcd2(g, int(x))
    return g


def pow2_divisor(v: int) -> int:
    """Largest power of two dividing ``v``; :data:`MAX_DIVISOR` for 0 (Triton's
    ``highestPowOf2Divisor``)."""
    v = int(v)
    if v == 0:
        return MAX_DIVISOR
    return min(abs(v) & -abs(v), MAX_DIVISOR)


def _mul_div(a: int, b: int) -> int:
    """``multiplyDivisor``: a * b capped at :data:`MAX_DIVISOR`."""
    return MAX_DIVISOR if a > MAX_DIVISOR // max(b, 1) else a * b


@dataclass(frozen=True)
class AxisInfo:
    """Per-dim ``contiguity``, ``divisibility``, ``constancy`` (tuples, one entry per dim; a
    scalar has one entry) and the constant ``value`` when known (see the module docstring)."""

    contiguity: tuple
    divisibility: tuple
    constancy: tuple
    value: int | None = None

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    @staticmethod
    def unknown(rank: int) -> "AxisInfo":
        """The pessimistic state: every entry 1."""
        return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank)

    @staticmethod
    def of(value: Value) -> "AxisInfo":
        """The AxisInfo of ``value``: runs :class:`AxisInfoAnalysis` over its enclosing
        ``tt.func`` (not cached; passes hold an analysis object instead).
        Raises ValueError when ``value`` is not inside a ``tt.func``."""
        op = value.defining_op
        block = value.owner if op is None else op.parent
        func = block.parent.parent if block is not None and block.parent is not None else None
        while func is not None and func.name != "tt.func":
            func = func.parent_op()
        if func is None:
            raise ValueError(f"{value!r} is not inside a tt.func")
        return AxisInfoAnalysis(func).get(value)

    def __str__(self) -> str:
        s = (f"contiguity = {list(self.contiguity)}, divisibility = {list(self.divisibility)}, "
             f"constancy = {list(self.constancy)}")
        return s + (f", value = {self.value}" if self.value is not None else "")


def join(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    """Triton's ``AxisInfo::join``: what holds for both (gcd per dim)."""
    if a.rank != b.rank:
        return AxisInfo.unknown(max(a.rank, b.rank))
    return AxisInfo(tuple(gcd(x, y) for x, y in zip(a.contiguity, b.contiguity, strict=False)),
                    tuple(_div_from_contiguity(a, b, d) for d in range(a.rank)),
                    tuple(gcd(x, y) for x, y in zip(a.constancy, b.constancy, strict=False)),
                    a.value if a.value is not None and a.value == b.value else None)


def _div_from_contiguity(a: AxisInfo, b: AxisInfo, d: int) -> int:
    """``getDivisibilityFromContiguity``: when runs of different lengths are merged, the run
    starts move, so the contiguities bound the divisibility too."""
    ac, bc = a.contiguity[d], b.contiguity[d]
    if ac == bc or ac == MAX_DIVISOR or bc == MAX_DIVISOR:
        return gcd(a.divisibility[d], b.divisibility[d])
    return gcd(a.divisibility[d], b.divisibility[d], ac, bc)


def rank_of(t) -> int:
    """Rank of a tensor type (at least 1); 1 for a scalar."""
    return max(len(t.shape), 1) if isinstance(t, TensorType) else 1


def shape_of(t) -> tuple:
    return tuple(t.shape) if isinstance(t, TensorType) and t.shape else (1,)


def pointee_bytes(t) -> int:
    """Bytes per element addressed by a (tensor of) pointer type: ``max(bits // 8, 1)``."""
    elem = t.scalar
    pointee = elem.pointee if isinstance(elem, PointerType) else elem
    return max(getattr(pointee, "width", 8) // 8, 1)


def _hint(attr, rank: int):
    if attr is None:
        return None
    vals = list(attr) if isinstance(attr, (list, tuple)) else [attr]
    vals = [int(v) for v in vals]
    return tuple(vals) if len(vals) == rank else None


def apply_hints(info: AxisInfo, attrs: dict) -> AxisInfo:
    """Override dims with ``tt.contiguity`` / ``tt.divisibility`` / ``tt.constancy`` found in
    ``attrs`` (an op's attributes or an argument's attribute dict); Triton's
    ``initDimVectorFromHint``. A scalar hint applies to rank-1 values."""
    if not attrs:
        return info
    c = _hint(attrs.get("tt.contiguity"), info.rank) or info.contiguity
    d = _hint(attrs.get("tt.divisibility"), info.rank) or info.divisibility
    k = _hint(attrs.get("tt.constancy"), info.rank) or info.constancy
    return AxisInfo(tuple(c), tuple(d), tuple(k), info.value)


class AxisInfoAnalysis:
    """AxisInfo of every value of one ``tt.func`` (a ttir or ttgir function op).

    ``get(value)`` returns its :class:`AxisInfo` (pessimistic for values the analysis did not
    see, e.g. created after it ran). Run it again after rewriting the function."""

    #: iterations of the scf.for fixpoint before giving up (pessimistic iter args).
    MAX_LOOP_ITERS = 8

    def __init__(self, func: Operation):
        self.info: dict[int, AxisInfo] = {}
        self._values: dict[int, Value] = {}
        block = func.regions[0].block
        arg_attrs = func.attributes.get("arg_attrs") or []
        for i, a in enumerate(block.args):
            attrs = arg_attrs[i] if i < len(arg_attrs) and arg_attrs[i] else {}
            self._set(a, apply_hints(AxisInfo.unknown(rank_of(a.type)), attrs))
        self._block(block)

    def get(self, value: Value) -> AxisInfo:
        return self.info.get(id(value)) or AxisInfo.unknown(rank_of(value.type))

    def _set(self, v: Value, info: AxisInfo) -> None:
        self.info[id(v)] = info
        self._values[id(v)] = v  # keep the value alive so ids stay unique

    # traversal ---------------------------------------------------------------------------
    def _block(self, block) -> None:
        for op in block.ops:
            self._op(op)

    def _op(self, op: Operation) -> None:
        if op.name == "scf.for":
            self._for(op)
            return
        if op.name == "scf.if":
            for region in op.regions:
                self._block(region.block)
            yields = [r.block.terminator for r in op.regions if r.blocks and r.block.terminator
                      is not None and r.block.terminator.name == "scf.yield"]
            for i, r in enumerate(op.results):
                infos = [self.get(y.operands[i]) for y in yields if i < len(y.operands)]
                res = infos[0] if len(yields) == 2 and len(infos) == 2 else None
                res = join(infos[0], infos[1]) if res is not None else None
                self._set(r, apply_hints(res or AxisInfo.unknown(rank_of(r.type)),
                                         op.attributes))
            return
        for region in op.regions:  # reduce/scan/while bodies: arguments unknown
            for b in region.blocks:
                for a in b.args:
                    self._set(a, AxisInfo.unknown(rank_of(a.type)))
                self._block(b)
        if not op.results:
            return
        if len(op.results) == 1 and _analysable(op.result.type):
            info = visit(op, [self.get(v) for v in op.operands])
        else:
            info = None
        for r in op.results:
            res = info if info is not None and info.rank == rank_of(r.type) else \
                AxisInfo.unknown(rank_of(r.type))
            self._set(r, apply_hints(res, op.attributes))

    def _for(self, op: Operation) -> None:
        """``scf.for``: induction variable from lb and step (``visitForOpInductionVar``);
        iter args = fixpoint of join(init, yielded)."""
        body = op.regions[0].block
        lb, step = self.get(op.operands[0]), self.get(op.operands[2])
        self._set(body.args[0], AxisInfo((1,), (gcd(lb.divisibility[0], step.divisibility[0]),),
                                         (1,)))
        inits = [self.get(v) for v in op.operands[3:]]
        cur = list(inits)
        for _ in range(self.MAX_LOOP_ITERS):
            for a, inf in zip(body.args[1:], cur, strict=False):
                self._set(a, inf)
            self._block(body)
            y = body.terminator
            yielded = [self.get(v) for v in y.operands] if y is not None else []
            new = [join(i, yv) if i.rank == yv.rank else AxisInfo.unknown(i.rank)
                   for i, yv in zip(inits, yielded, strict=False)]
            new = [join(n, c) for n, c in zip(new, cur, strict=False)]
            if new == cur:
                break
            cur = new
        else:
            cur = [AxisInfo.unknown(i.rank) for i in inits]
            for a, inf in zip(body.args[1:], cur, strict=False):
                self._set(a, inf)
            self._block(body)
        for r, inf in zip(op.results, cur, strict=False):
            self._set(r, inf)


def _analysable(t) -> bool:
    return isinstance(t.scalar, (IntType, PointerType)) and not isinstance(t.scalar, FloatType)



# transfer functions (one per Triton visitor) ----------------------------------------------
_CAST = {"arith.extsi", "arith.extui", "arith.trunci", "ttg.convert_layout", "tt.bitcast"}
_CMP = {"slt": "lt", "ult": "lt", "sle": "le", "ule": "le", "sgt": "gt", "ugt": "gt",
        "sge": "ge", "uge": "ge"}


def _cmp(pred: str, a: int, b: int) -> bool:
    m = 1 << 64
    if pred.startswith("u"):
        a, b = a % m, b % m
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b,
            "ge": a >= b}[_CMP.get(pred, pred)]


def _binary_value(name: str, a, b, elem_bytes: int):
    if a is None or b is None:
        return None
    if name in ("arith.addi", "tt.addptr"):
        return a + b * (elem_bytes if name == "tt.addptr" else 1)
    if name == "arith.subi":
        return a - b
    if name == "arith.muli":
        return a * b
    if name in ("arith.divsi", "arith.divui") and b != 0:
        return int(a / b)
    if name in ("arith.remsi", "arith.remui") and b != 0:
        return a - b * int(a / b)
    if name == "arith.andi":
        return a & b
    if name == "arith.ori":
        return a | b
    if name == "arith.xori":
        return a ^ b
    if name == "arith.shli":
        return a << b
    if name in ("arith.shrsi", "arith.shrui"):
        return a >> b
    return None


def _binary_dim(name, lhs: AxisInfo, rhs: AxisInfo, d: int, shape, elem_bytes):
    """(contiguity, divisibility, constancy) of dim ``d`` of a binary integer op."""
    lc, ld, lk, rc, rd, rk = (lhs.contiguity[d], lhs.divisibility[d], lhs.constancy[d],
                              rhs.contiguity[d], rhs.divisibility[d], rhs.constancy[d])
    n = shape[d]
    k = gcd(lk, rk)
    if name in ("arith.addi", "tt.addptr"):
        rdb = _mul_div(rd, elem_bytes) if name == "tt.addptr" else rd
        return max(gcd(lk, rc), gcd(lc, rk)), gcd(ld, rdb), k
    if name == "arith.subi":
        return gcd(lc, rk), gcd(ld, rd), k
    if name == "arith.muli":
        c = max(lc if rhs.value == 1 else 1, rc if lhs.value == 1 else 1)
        ldv = 1 if lc > 1 and rhs.value != 1 else ld
        rdv = 1 if rc > 1 and lhs.value != 1 else rd
        return c, _mul_div(ldv, rdv), k
    if name in ("arith.divsi", "arith.divui"):
        c = lc if rhs.value == 1 else 1
        if lc == n and rk == n:
            k = max(k, gcd(lc, ld, rd))
        if lhs.value == 0 or rhs.value == 1:
            dv = ld
        elif (rhs.value is not None and rhs.value != 0
              and pow2_divisor(rhs.value) == abs(rhs.value) and lc == 1):
            dv = max(1, ld // abs(rhs.value))
        else:
            dv = 1
        return c, dv, k
    if name in ("arith.remsi", "arith.remui"):
        c = gcd(lc, ld, rd) if lc == n and rk == n else 1
        dv = gcd(ld, rd) if rk > 1 else 1
        return c, dv, (n if rhs.value == 1 else k)
    if name == "arith.shli":
        shift = rhs.value or 0
        ldv = 1 if lc > 1 and shift else ld
        return (lc if rhs.value == 0 else 1), _mul_div(ldv, 1 << max(shift, 0)), k
    if name in ("arith.shrsi", "arith.shrui"):
        if rhs.value is None:
            return (1, 1, k)
        ldv = 1 if lc > 1 and rhs.value else ld
        return (lc if rhs.value == 0 else 1), max(1, ldv >> max(rhs.value, 0)), k
    if name in ("arith.andi", "arith.ori", "arith.xori"):
        return 1, 1, k
    if name in ("arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui"):
        return gcd(lc, rc), _div_from_contiguity(lhs, rhs, d), k
    return None


_BINARY = {"arith.addi", "arith.subi", "tt.addptr", "arith.muli", "arith.divsi",
           "arith.divui", "arith.remsi", "arith.remui", "arith.shli", "arith.shrsi",
           "arith.shrui", "arith.andi", "arith.ori", "arith.xori", "arith.maxsi",
           "arith.minsi", "arith.maxui", "arith.minui"}


def visit(op: Operation, ops: list) -> AxisInfo | None:
    """The AxisInfo of ``op``'s single integer/pointer result from its operands' infos
    (``None``: no rule, pessimistic)."""
    t = op.result.type
    rank, shape = rank_of(t), shape_of(t)
    name, a = op.name, op.attributes
    if name == "arith.constant":
        v = a.get("value")
        if isinstance(v, bool) or isinstance(v, int):
            v = int(v)
            const = shape if isinstance(t, TensorType) and t.shape else (1,)
            return AxisInfo((1,) * rank, (pow2_divisor(v),) * rank, tuple(const), v)
        return None
    if name == "tt.make_range":
        return AxisInfo((int(a["end"]) - int(a["start"]),), (pow2_divisor(a["start"]),), (1,))
    if name in _CAST:
        return ops[0] if ops[0].rank == rank else None
    if name == "tt.splat":
        s = ops[0]
        return AxisInfo((1,) * rank, (s.divisibility[0],) * rank, shape, s.value)
    if name == "tt.expand_dims":
        s, ax = ops[0], int(a["axis"])
        if s.value is not None:
            nd = pow2_divisor(s.value)
        else:
            nd = gcd(*[1 if c > 1 else dv
                       for c, dv in zip(s.contiguity, s.divisibility, strict=False)])
        c, dv, k = list(s.contiguity), list(s.divisibility), list(s.constancy)
        c.insert(ax, 1)
        dv.insert(ax, nd)
        k.insert(ax, 1)
        return AxisInfo(tuple(c), tuple(dv), tuple(k), s.value)
    if name == "tt.broadcast":
        s, src = ops[0], shape_of(op.operands[0].type)
        return AxisInfo(tuple(1 if src[d] == 1 else s.contiguity[d] for d in range(rank)),
                        s.divisibility,
                        tuple(shape[d] if src[d] == 1 else s.constancy[d] for d in range(rank)),
                        s.value)
    if name == "tt.load":
        mask = ops[1].constancy if len(ops) > 1 else (0,) * rank
        return AxisInfo((1,) * rank, (1,) * rank,
                        tuple(gcd(p, m) for p, m in zip(ops[0].constancy, mask, strict=False)))
    if name == "arith.cmpi":
        return _visit_cmp(a.get("predicate", "eq"), ops[0], ops[1], rank, shape)
    if name == "arith.select":
        return _visit_select(op, ops, rank)
    if name in _BINARY and len(ops) == 2 and ops[0].rank == ops[1].rank == rank:
        return _visit_binary(op, ops[0], ops[1], rank, shape)
    return None


def _visit_binary(op, lhs: AxisInfo, rhs: AxisInfo, rank, shape) -> AxisInfo:
    eb = pointee_bytes(op.result.type) if op.name == "tt.addptr" else 1
    value = _binary_value(op.name, lhs.value, rhs.value, eb)
    if op.name in ("arith.remsi", "arith.remui") and value is None and rhs.value == 1:
        value = 0
    if op.name.startswith(("arith.max", "arith.min")):
        if lhs.value is not None and rhs.value is not None:
            v = max(lhs.value, rhs.value) if "max" in op.name else min(lhs.value, rhs.value)
            return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank, v)
        value = None
    if value is not None:
        return AxisInfo((1,) * rank, (pow2_divisor(value),) * rank,
                        tuple(max(x, y)
                              for x, y in zip(lhs.constancy, rhs.constancy, strict=False)),
                        value)
    dims = [_binary_dim(op.name, lhs, rhs, d, shape, eb) for d in range(rank)]
    return AxisInfo(tuple(x[0] for x in dims), tuple(x[1] for x in dims),
                    tuple(x[2] for x in dims))


def _visit_cmp(pred, lhs: AxisInfo, rhs: AxisInfo, rank, shape) -> AxisInfo:
    if lhs.rank != rank or rhs.rank != rank:
        return AxisInfo.unknown(rank)
    if lhs.value is not None and rhs.value is not None:
        return AxisInfo((1,) * rank, (1,) * rank, lhs.constancy,
                        int(_cmp(pred, lhs.value, rhs.value)))
    kind = _CMP.get(pred, pred)
    const = []
    for d in range(rank):
        k = gcd(lhs.constancy[d], rhs.constancy[d])
        if kind in ("gt", "le") and lhs.constancy[d] == shape[d]:
            k = max(k, gcd(rhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d]))
        elif kind in ("lt", "ge") and rhs.constancy[d] == shape[d]:
            k = max(k, gcd(lhs.contiguity[d], lhs.divisibility[d], rhs.divisibility[d]))
        const.append(k)
    return AxisInfo((1,) * rank, (1,) * rank, tuple(const))


def _visit_select(op, ops, rank) -> AxisInfo | None:
    cond, lhs, rhs = ops
    if lhs.rank != rank or rhs.rank != rank:
        return None
    if cond.value is not None:
        return rhs if cond.value == 0 else lhs
    scalar_cond = not isinstance(op.operands[0].type, TensorType)
    ck = (0,) * rank if scalar_cond else cond.constancy
    return AxisInfo(tuple(gcd(lhs.contiguity[d], rhs.contiguity[d], ck[d]) for d in range(rank)),
                    tuple(_div_from_contiguity(lhs, rhs, d) for d in range(rank)),
                    tuple(gcd(lhs.constancy[d], rhs.constancy[d], ck[d]) for d in range(rank)),
                    lhs.value if lhs.value is not None and lhs.value == rhs.value else None)


__all__ = ["AxisInfo", "AxisInfoAnalysis", "MAX_DIVISOR", "join", "gcd", "pow2_divisor",
           "pointee_bytes", "apply_hints", "visit"]
