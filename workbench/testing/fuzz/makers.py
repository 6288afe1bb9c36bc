"""Makers of the tile-shaped and structured statements: reductions, scans, trans,
join/split, dot, runtime loops and branches, atomics (see :mod:`.generate`)."""
from __future__ import annotations

import numpy as np

from . import info as fi
from . import types as ft
from .generate import Gen, _int, _num, side_rng
from .program import Info, Stmt


def _axis_len(g: Gen, axis: int) -> int:
    return g.prog.BM if axis == 0 else g.prog.BN


def _reduce_dtype(fn: str, d: str) -> str:
    if fn == "sum":
        if ft.is_int(d) and ft.bits(d) < 32:
            return "i32" if ft.signed(d) else "u32"
        return d
    if d == "bf16":
        return "fp32"
    if fn != "argmax" and d in ("fp16",):
        return "fp32"
    if fn != "argmax" and ft.is_int(d) and ft.bits(d) < 32:
        return "i32"
    return d


def make_reduce(g: Gen):
    """``tl.sum/max/min/argmax(a, axis, keep_dims=True)`` broadcast back to the tile."""
    a = g.pick(_num)
    if a is None:
        return None
    fn = str(g.rng.choice(["sum", "max", "min", "argmax"]))
    axis = int(g.rng.integers(0, 2)) if g.prog.two_d else 0
    t = _reduce_dtype(fn, a[1].dtype)
    x = fi.as_type(a[1], t)
    if x is None or (fn == "argmax" and not x.exact):
        return None
    n = _axis_len(g, axis)
    res: Info | None
    if fn == "argmax":
        res = Info("i32", 0, n - 1)
    elif fn == "sum":
        res = fi.make(t, n * min(x.lo, 0), n * max(x.hi, 0), x.q, x.exact, x.eps * n)
    else:
        res = x
    if res is None:
        return None
    return Stmt("reduce", "", (a[0],), {"fn": fn, "axis": axis, "t": t}, res)


def make_scan(g: Gen):
    """``tl.cumsum(a, axis)``."""
    a = g.pick(_num)
    if a is None:
        return None
    axis = int(g.rng.integers(0, 2)) if g.prog.two_d else 0
    d = a[1].dtype
    t = "fp32" if d == "bf16" else _reduce_dtype("sum", d)
    x = fi.as_type(a[1], t)
    if x is None:
        return None
    n = _axis_len(g, axis)
    res = fi.make(t, n * min(x.lo, 0), n * max(x.hi, 0), x.q, x.exact, x.eps * n)
    return None if res is None else Stmt("scan", "", (a[0],), {"axis": axis}, res)


def make_trans(g: Gen):
    """``tl.trans(a)`` of a square 2-D tile."""
    if not g.prog.two_d or g.prog.BM != g.prog.BN:
        return None
    a = g.pick()
    return None if a is None else Stmt("trans", "", (a[0],), {}, a[1])


def make_reshape(g: Gen):
    """Lanes permuted by reshape and trans: 2-D ``tl.trans(tl.reshape(a, (BN, BM)))``, 1-D
    ``tl.reshape(tl.trans(tl.reshape(a, (2, BM // 2))), (BM,))``."""
    a = g.pick()
    return None if a is None else Stmt("reshape", "", (a[0],), {}, a[1])


def make_joinsplit(g: Gen):
    """One half of ``tl.split(tl.join(a, b))`` (same dtypes)."""
    a = g.pick()
    if a is None:
        return None
    b = g.pick(lambda v: v.dtype == a[1].dtype)
    side = "l" if g.rng.random() < 0.5 else "r"
    assert b is not None
    return Stmt("joinsplit", "", (a[0], b[0]), {"side": side}, a[1] if side == "l" else b[1])


#: dot variants drawn for float operands (by a generator of their own): operand dtype in memory,
#: how the kernel feeds them to tl.dot, and the relative error allowed for the fp32 result
DOT_FLOAT = {"fp16": ("fp16", "", 0.0), "bf16": ("fp32", ".to(tl.bfloat16)", 2.0**-20),
             "tf32": ("fp32", "", 2.0**-20), "ieee": ("fp32", "", 2.0**-20)}


def d_of(src: str) -> str:
    """The result dtype of a dot of ``src`` operands."""
    return "i32" if src == "i8" else "fp32"


def make_dot(g: Gen):
    """``tl.dot`` of operands loaded for it: int8 or fp16 small integers (exact sums), or
    float32 values of 12 fractional bits fed as bf16, tf32 (the default precision) or full
    fp32 (``input_precision="ieee"``); now and then with an accumulator of the program
    (``tl.dot(a, b, acc)``), an epilogue of the later statements either way."""
    p = g.prog
    if not p.two_d or p.BM < 16 or p.BN < 16 or p.uses("dot"):
        return None
    src = "fp16" if g.rng.random() < 0.6 or p.BK < 32 else "i8"  # 8-bit dots need K >= 32
    side = side_rng(g, 0xD07)
    if p.version < 2:
        return Stmt("dot", "", (), {"src": src}, Info(d_of(src), -16 * p.BK, 16 * p.BK, True, 0))
    if src == "fp16" and side.random() < 0.6:
        src = str(side.choice(["bf16", "tf32", "ieee"]))
    d = d_of(src)
    b = 16 * p.BK
    info = Info(d, -b, b, True, 0) if src in ("i8", "fp16") else \
        Info(d, -b, b, False, 10, DOT_FLOAT[src][2])
    args: tuple = ()
    if side.random() < 0.4:
        acc = g.pick(lambda v: v.dtype == d)
        if acc is not None:
            res = fi.make(d, info.lo + acc[1].lo, info.hi + acc[1].hi, max(info.q, acc[1].q),
                          info.exact and acc[1].exact, max(info.eps, acc[1].eps))
            if res is None:
                return None
            info, args = res, (acc[0],)
    return Stmt("dot", "", args, {"src": src}, info)


def _same_pair(g: Gen):
    a = g.pick(_num)
    if a is None:
        return None, None
    b = g.pick(lambda v: v.dtype == a[1].dtype)
    return a, b


def make_loop(g: Gen):
    """``acc = a; for i in range(0, it): acc = acc + b``, or the same as a ``while`` loop
    counting up to ``it`` or down from it (a runtime trip count either way)."""
    a, b = _same_pair(g)
    if a is None or b is None:
        return None
    x, y = a[1], b[1]
    k = 3  # the runtime trip count is at most 3
    res = fi.make(x.dtype, x.lo + k * min(y.lo, 0), x.hi + k * max(y.hi, 0), max(x.q, y.q),
                  x.exact and y.exact, 4 * max(x.eps, y.eps))
    if res is None:
        return None
    # for or while, drawn from a generator of its own so the seed's other draws stay as they
    # were before while loops existed (the fixed regression seeds keep their programs)
    style = str(np.random.default_rng([g.prog.seed, len(g.prog.stmts), 0x5EED]).choice(
        ["for", "while_up", "while_down"]))
    return Stmt("loop", "", (a[0], b[0]), {"style": style}, res)


def make_ifelse(g: Gen):
    """``a + b`` when the runtime ``flag > 0``, else ``a - b``."""
    a, b = _same_pair(g)
    if a is None or b is None:
        return None
    x, y = a[1], b[1]
    res = fi.make(x.dtype, min(x.lo + y.lo, x.lo - y.hi), max(x.hi + y.hi, x.hi - y.lo),
                  max(x.q, y.q), x.exact and y.exact, 2 * max(x.eps, y.eps))
    return None if res is None else Stmt("ifelse", "", (a[0], b[0]), {}, res)


#: integer atomics whose result does not depend on the order of the programs
ATOMIC_OPS = ("add", "max", "min", "and", "or", "xor")


def make_atomic(g: Gen):
    """``tl.atomic_<op>`` of an integer value into 8 int32 slots, with an order-independent op
    (add, max, min, and, or, xor; drawn by a generator of its own, one op per program)."""
    a = g.pick(_int)
    if a is None:
        return None
    before = [s.p.get("op", "add") for s in g.prog.stmts if s.kind == "atomic"]
    # one op per program: two ops mixed (add then max) depend on the programs' order
    op = before[0] if before else "add" if g.prog.version < 2 else \
        str(side_rng(g, 0xA7).choice(ATOMIC_OPS))
    return Stmt("atomic", "", (a[0],), {"op": op}, Info("i32", 0, 0))
