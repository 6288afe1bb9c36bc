"""Random valid programs, deterministic from a seed (``numpy.random.default_rng(seed)``).

Each statement kind has a maker that picks operands from the values made so far (recent ones
more often, so statements chain) and returns the statement with the result's
:class:`~workbench.testing.fuzz.program.Info`, or None when the picked operands do not suit it.
"""
from __future__ import annotations

import math

import numpy as np

from . import info as fi
from . import types as ft
from .program import Info, Program, Stmt

KINDS = ("binop", "binop", "cmp", "where", "bitop", "shift", "divmod", "minmax", "minmax",
         "unary", "cast", "cast", "math", "reduce", "scan", "trans", "reshape", "joinsplit",
         "dot", "loop", "ifelse", "atomic")
#: version-2 programs draw casts more often (the pairs to cover grew with the 8-bit floats)
KINDS_V2 = KINDS + ("cast",)
INPUT_DTYPES = ft.INTS + ("fp16", "fp32", "fp64")
CAST_DTYPES = ft.INTS + ft.FLOATS + ("i1",)
FLOAT_LITS = (0.5, -1.5, 2.0, 0.25, -3.0)


class Gen:
    """The state of one program being generated."""

    def __init__(self, rng, prog: Program):
        self.rng, self.prog = rng, prog
        self.values: list = []  # (name, Info)

    def pick(self, pred=lambda v: True, rng=None):
        """A ``(name, Info)`` satisfying ``pred``, recent values more likely (drawn from
        ``rng``, by default the program's); None if none."""
        cands = [(n, v) for n, v in self.values if pred(v)]
        if not cands:
            return None
        w = np.arange(1, len(cands) + 1, dtype=np.float64) ** 2
        return cands[(rng or self.rng).choice(len(cands), p=w / w.sum())]

    def int_lit(self, d: str) -> int:
        """A small int literal that fits ``d`` (non-negative for unsigned ``d``)."""
        lo = 0 if not ft.signed(d) else -5
        return int(self.rng.integers(lo, 6))

    def lit_for(self, d: str):
        """A literal to combine with a tile of dtype ``d`` (sometimes a float)."""
        if ft.is_float(d) or self.rng.random() < 0.15 and ft.is_int(d) and ft.signed(d):
            return float(self.rng.choice(FLOAT_LITS))
        return self.int_lit(d)


def _num(v: Info) -> bool:
    return v.dtype != "i1" and not ft.is_fp8(v.dtype)  # 8-bit floats only move and convert


def _int(v: Info) -> bool:
    return ft.is_int(v.dtype)


def make_binop(g: Gen):
    """``a + b``, ``a - b``, ``a * b`` between two values or a value and a literal."""
    a = g.pick(_num)
    if a is None:
        return None
    op = str(g.rng.choice(["+", "-", "*"]))
    x: Info | None
    y: Info | None
    if g.rng.random() < 0.4:
        v = g.lit_for(a[1].dtype)
        d = ft.promote_scalar(a[1].dtype, v)
        bi = fi.as_type(Info(ft.literal_dtype(v), v, v, True, fi._quantum(v) if
                             isinstance(v, float) else 0), d)
        b = ("lit", v)
        args = (b, a[0]) if g.rng.random() < 0.3 else (a[0], b)
        ai = fi.as_type(a[1], d)
        if ai is None or bi is None:
            return None
        x, y = (bi, ai) if args[0] == b else (ai, bi)
    else:
        b = g.pick(_num)
        d = ft.promote(a[1].dtype, b[1].dtype)
        args = (a[0], b[0])
        x, y = fi.as_type(a[1], d), fi.as_type(b[1], d)
        if x is None or y is None:
            return None
    res = fi.arith(op, x, y, d)
    return None if res is None else Stmt("binop", "", args, {"op": op}, res)


def make_cmp(g: Gen):
    """A comparison of two exact values (bool result)."""
    a, b = g.pick(_num), g.pick(_num)
    if a is None or b is None:
        return None
    t = ft.promote(a[1].dtype, b[1].dtype)
    x, y = fi.as_type(a[1], t), fi.as_type(b[1], t)
    if x is None or y is None or not (x.exact and y.exact):
        return None
    op = str(g.rng.choice(["<", "<=", ">", ">=", "==", "!="]))
    return Stmt("cmp", "", (a[0], b[0]), {"op": op, "t": t}, Info("i1", 0, 1))


def make_where(g: Gen):
    """``tl.where(cond, a, b)`` with a bool value as the condition."""
    c, a, b = g.pick(lambda v: v.dtype == "i1"), g.pick(_num), g.pick(_num)
    if c is None or a is None or b is None:
        return None
    d = ft.promote(a[1].dtype, b[1].dtype)
    x, y = fi.as_type(a[1], d), fi.as_type(b[1], d)
    if x is None or y is None:
        return None
    res = fi.union(x, y, d)
    return None if res is None else Stmt("where", "", (c[0], a[0], b[0]), {}, res)


def make_bitop(g: Gen):
    """``a & b``, ``a | b``, ``a ^ b`` of two integer values."""
    a, b = g.pick(_int), g.pick(_int)
    if a is None or b is None:
        return None
    d = ft.int_promote(a[1].dtype, b[1].dtype)
    x, y = fi.as_type(a[1], d), fi.as_type(b[1], d)
    op = str(g.rng.choice(["&", "|", "^"]))
    res: Info | None = fi.full(d)
    if x is not None and y is not None and x.lo >= 0 and y.lo >= 0:
        top = (1 << max(int(x.hi).bit_length(), int(y.hi).bit_length())) - 1
        res = fi.make(d, 0, top, 0, True, 0.0)
    return Stmt("bitop", "", (a[0], b[0]), {"op": op}, res)


def make_shift(g: Gen):
    """``a << k`` or ``a >> k`` with ``0 <= k <`` the bit width."""
    a = g.pick(_int)
    if a is None:
        return None
    d = a[1].dtype
    k = int(g.rng.integers(0, ft.bits(d)))
    op = "<<" if g.rng.random() < 0.5 else ">>"
    res = fi.full(d) if op == "<<" else Info(d, int(a[1].lo) >> k, int(a[1].hi) >> k)
    return Stmt("shift", "", (a[0],), {"op": op, "k": k}, res)


def make_divmod(g: Gen):
    """``a // d`` or ``a % d`` with the divisor ``(b.to(T) & 15) + 1`` (never 0 or -1)."""
    a, b = g.pick(_int), g.pick(_num)
    if a is None or b is None:
        return None
    d = a[1].dtype
    if fi.as_type(b[1], d) is None:
        return None
    op = "//" if g.rng.random() < 0.5 else "%"
    bound = a[1].bound if op == "//" else 15
    res = fi.make(d, -bound if ft.signed(d) else 0, bound, 0, True, 0.0)
    return Stmt("divmod", "", (a[0], b[0]), {"op": op, "t": d}, res)


def make_minmax(g: Gen):
    """``tl.minimum``/``tl.maximum`` of two values or a value and a literal."""
    a = g.pick(_num)
    if a is None:
        return None
    fn = "minimum" if g.rng.random() < 0.5 else "maximum"
    ad = "fp32" if a[1].dtype == "bf16" else a[1].dtype
    if g.rng.random() < 0.5:
        v = g.lit_for("fp32" if ft.is_float(ad) else "i8")
        bi, b_name = fi.literal(v), ("lit", v)
    else:
        b = g.pick(_num)
        bi, b_name = b[1], b[0]
    bd = "fp32" if bi.dtype == "bf16" else bi.dtype
    d = ft.promote(ad, bd)
    x, y = fi.as_type(a[1], d), fi.as_type(bi, d)
    if x is None or y is None:
        return None
    lo = min(x.lo, y.lo) if fn == "minimum" else max(x.lo, y.lo)
    hi = min(x.hi, y.hi) if fn == "minimum" else max(x.hi, y.hi)
    res = fi.make(d, lo, hi, max(x.q, y.q), x.exact and y.exact, max(x.eps, y.eps))
    args = (a[0], b_name) if g.rng.random() < 0.7 else (b_name, a[0])
    return None if res is None else Stmt("minmax", "", args, {"fn": fn}, res)


def make_unary(g: Gen):
    """``-a`` or ``tl.abs(a)`` of a signed integer or float value."""
    a = g.pick(lambda v: _num(v) and (ft.is_float(v.dtype) or ft.signed(v.dtype)))
    if a is None:
        return None
    v, d = a[1], a[1].dtype
    op = "neg" if g.rng.random() < 0.5 else "abs"
    if ft.is_int(d) and v.lo == ft.int_range(d)[0]:
        return Stmt("unary", "", (a[0],), {"op": op}, fi.full(d))
    lo, hi = (-v.hi, -v.lo) if op == "neg" else (0 if v.lo <= 0 <= v.hi else
                                                  min(abs(v.lo), abs(v.hi)), v.bound)
    return Stmt("unary", "", (a[0],), {"op": op}, fi.make(d, lo, hi, v.q, v.exact, v.eps))


def side_rng(g: Gen, tag: int):
    """A generator of its own for a choice added after the fixed regression seeds were found
    (drawing it from ``g.rng`` would change every later draw, so those seeds would no longer
    make the programs that failed)."""
    return np.random.default_rng([g.prog.seed, len(g.prog.stmts), tag])


def _v2_cast(g: Gen, side, a, t):
    """The source value and target dtype of a version-2 cast: more often from the rarer
    sources (bf16, 8-bit floats), to 8-bit floats, or a pair drawn uniformly."""
    r = side.random()
    if r < 0.3:
        a = g.pick(lambda v: v.dtype == "bf16" or ft.is_fp8(v.dtype), side) or a
    elif r < 0.55:  # a source dtype among those present, then any target it takes
        present = sorted({v.dtype for _, v in g.values})
        src = present[int(side.integers(len(present)))]
        a = g.pick(lambda v: v.dtype == src, side) or a
        t = str(side.choice(CAST_DTYPES))
    if ft.is_fp8(a[1].dtype):
        t = str(side.choice(ft.FP8 + ft.FLOATS))
    elif ft.is_float(a[1].dtype) and side.random() < 0.4:
        t = str(side.choice(ft.FP8))
    return a, t


def make_cast(g: Gen):
    """``a.to(T)`` when it is defined for ``a``'s bounds; now and then T is an 8-bit float
    (from a float value) or a float (from an 8-bit float)."""
    a = g.pick()
    if a is None:
        return None
    t = str(g.rng.choice(CAST_DTYPES))
    side = side_rng(g, 0xF8)
    if g.prog.version >= 2:
        a, t = _v2_cast(g, side, a, t)
    res = fi.as_type(a[1], t)
    return None if res is None else Stmt("cast", "", (a[0],), {"t": t}, res)


def make_math(g: Gen):
    """exp, sqrt, log, sin or cos of an fp32/fp64 value with a safe range."""
    a = g.pick(lambda v: v.dtype in ("fp32", "fp64") and v.bound <= 100)
    if a is None:
        return None
    fn = str(g.rng.choice(["exp", "sqrt", "log", "sin", "cos"]))
    b = a[1].bound
    if fn == "exp" and a[1].hi > 10:
        return None
    hi = {"exp": math.exp(min(a[1].hi, 10)), "sqrt": math.sqrt(b), "log": math.log(b + 1),
          "sin": 1.0, "cos": 1.0}[fn]
    lo = -1.0 if fn in ("sin", "cos") else 0.0
    d = a[1].dtype
    return Stmt("math", "", (a[0],), {"fn": fn}, Info(d, lo, hi, False, 0,
                                                        max(a[1].eps, 4 * ft.EPS[d])))
