"""Each statement kind twice: the kernel source it emits and its numpy meaning.

``emit(s, prog)`` returns source lines (indented by the caller); ``evaluate(s, env, ctx)``
returns the statement's value as a numpy tile given ``env`` (name -> (array, dtype)) and
``ctx`` (program id and tile coordinates, see :func:`workbench.testing.fuzz.reference.run`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import types as ft
from .program import Program, Stmt, lit, operand, trunc_divmod

MATH = {"exp": "tl.exp({a})", "sqrt": "tl.sqrt(tl.abs({a}))", "log": "tl.log(tl.abs({a}) + 1.0)",
        "sin": "tl.sin({a})", "cos": "tl.cos({a})"}
MATH_NP = {"exp": np.exp, "sqrt": lambda x: np.sqrt(np.abs(x)),
           "log": lambda x: np.log(np.abs(x) + x.dtype.type(1.0)), "sin": np.sin, "cos": np.cos}
_CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
        "==": np.equal, "!=": np.not_equal}
_BIT = {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}


def _name(a) -> str:
    return lit(a[1]) if isinstance(a, tuple) else a


def shape_text(prog: Program) -> str:
    """The tile shape as source text."""
    return "(BM, BN)" if prog.two_d else "(BM,)"


def index_text(prog: Program) -> str:
    """The element offsets of the tile as source text."""
    return "rm[:, None] * stride + rn[None, :]" if prog.two_d else "offs * stride"


def emit(s: Stmt, prog: Program) -> list:
    """Source lines of statement ``s``."""
    a = [_name(x) for x in s.args]
    o, p = s.out, s.p
    k = s.kind
    if k == "load":
        return [f"{o} = tl.load(x{p['inp']}_ptr + {index_text(prog)}, mask=mask, "
                f"other={lit(p['other'])})"]
    if k in ("binop", "cmp", "bitop"):
        return [f"{o} = {a[0]} {p['op']} {a[1]}"]
    if k == "shift":
        return [f"{o} = {a[0]} {p['op']} {p['k']}"]
    if k == "divmod":
        return [f"{o} = {a[0]} {p['op']} (({a[1]}.to({ft.TL_NAME[p['t']]}) & 15) + 1)"]
    simple = {"where": lambda: f"tl.where({', '.join(a)})",
              "minmax": lambda: f"tl.{p['fn']}({', '.join(a)})",
              "cast": lambda: f"{a[0]}.to({ft.TL_NAME[p['t']]})",
              "trans": lambda: f"tl.trans({a[0]})",
              "reshape": lambda: (f"tl.trans(tl.reshape({a[0]}, (BN, BM)))" if prog.two_d else
                                  f"tl.reshape(tl.trans(tl.reshape({a[0]}, (2, BM // 2))), "
                                  "(BM,))"),
              "scan": lambda: f"tl.cumsum({a[0]}, axis={p['axis']})"}
    if k in simple:
        return [f"{o} = {simple[k]()}"]
    if k == "unary":
        return [f"{o} = -{a[0]}" if p["op"] == "neg" else f"{o} = tl.abs({a[0]})"]
    if k == "math":
        return [f"{o} = " + MATH[p["fn"]].format(a=a[0])]
    if k == "reduce":
        return [f"{o} = tl.broadcast_to(tl.{p['fn']}({a[0]}, axis={p['axis']}, keep_dims=True), "
                f"{shape_text(prog)})"]
    return _emit_structured(s, prog, a)


def _emit_structured(s: Stmt, prog: Program, a: list) -> list:
    o, p, k = s.out, s.p, s.kind
    if k == "joinsplit":
        return [f"{o}_l, {o}_r = tl.split(tl.join({a[0]}, {a[1]}))", f"{o} = {o}_{p['side']}"]
    if k == "loop":
        style = p.get("style", "for")
        if style == "while_up":
            return [f"{o} = {a[0]}", f"{o}_i = 0", f"while {o}_i < it:",
                    f"    {o} = {o} + {a[1]}", f"    {o}_i += 1"]
        if style == "while_down":
            return [f"{o} = {a[0]}", f"{o}_i = it", f"while {o}_i > 0:",
                    f"    {o}_i = {o}_i - 1", f"    {o} = {o} + {a[1]}"]
        return [f"{o} = {a[0]}", "for i in range(0, it):", f"    {o} = {o} + {a[1]}"]
    if k == "ifelse":
        return ["if flag > 0:", f"    {o} = {a[0]} + {a[1]}", "else:", f"    {o} = {a[0]} - {a[1]}"]
    if k == "dot":
        src = p["src"]
        conv = ".to(tl.bfloat16)" if src == "bf16" else ""
        extra = (f", {a[0]}" if a else "") + (', input_precision="ieee"' if src == "ieee" else
                                              ', input_precision="tf32"' if src == "tf32" and
                                              not a else "")
        return [f"{o}_a = tl.load(da_ptr + rm[:, None] * BK + tl.arange(0, BK)[None, :], "
                "mask=rm[:, None] < M, other=0)",
                f"{o}_b = tl.load(db_ptr + tl.arange(0, BK)[:, None] * N + rn[None, :], "
                "mask=rn[None, :] < N, other=0)",
                f"{o} = tl.dot({o}_a{conv}, {o}_b{conv}{extra})"]
    if k == "atomic":
        idx = "rm[:, None] * N + rn[None, :]" if prog.two_d else "offs"
        return [f"tl.atomic_{p.get('op', 'add')}(atom_ptr + ({idx}) % 8, {a[0]}.to(tl.int32), "
                "mask=mask)"]
    raise ValueError(f"unknown statement kind {k}")


# numpy --------------------------------------------------------------------------------------
def evaluate(s: Stmt, env: dict, ctx: dict):
    """The tile statement ``s`` computes (None for an atomic, which updates ``ctx``)."""
    assert s.info is not None
    d = s.info.dtype
    k, p = s.kind, s.p
    if k == "load":
        return ctx["load"](p["inp"], p["other"])
    if k in ("binop", "ifelse", "loop"):
        return _arith(s, env, ctx, d)
    if k == "cmp":
        t = p["t"]
        return _CMP[p["op"]](operand(env, s, 0, t), operand(env, s, 1, t))
    if k == "bitop":
        return _BIT[p["op"]](operand(env, s, 0, d), operand(env, s, 1, d))
    if k == "shift":
        x = operand(env, s, 0, d)
        fn = np.left_shift if p["op"] == "<<" else np.right_shift
        return fn(x, np.asarray(p["k"], x.dtype))
    if k == "divmod":
        x = operand(env, s, 0, d)
        y = (operand(env, s, 1, d) & np.asarray(15, ft.NP[d])) + np.asarray(1, ft.NP[d])
        if ft.signed(d):
            return trunc_divmod(x, y, d)[0 if p["op"] == "//" else 1]
        return x // y if p["op"] == "//" else x % y
    if k == "where":
        c = operand(env, s, 0, "i1")
        return np.where(c, operand(env, s, 1, d), operand(env, s, 2, d))
    return _evaluate_more(s, env, ctx, d)


def _arith(s: Stmt, env: dict, ctx: dict, d: str):
    x, y = operand(env, s, 0, d), operand(env, s, 1, d)
    with np.errstate(all="ignore"):
        if s.kind == "binop":
            op = s.p["op"]
            r = x + y if op == "+" else x - y if op == "-" else x * y
            return ft.store(r, d) if ft.is_float(d) else r.astype(ft.NP[d])
        if s.kind == "ifelse":
            return ft.store(x + y if ctx["flag"] > 0 else x - y, d)
        for _ in range(ctx["it"]):
            x = ft.store(x + y, d)
        return x


def _evaluate_more(s: Stmt, env: dict, ctx: dict, d: str) -> Any:
    k, p = s.kind, s.p
    if k == "minmax":
        fn = np.minimum if p["fn"] == "minimum" else np.maximum
        return ft.store(fn(operand(env, s, 0, d), operand(env, s, 1, d)), d)
    if k == "cast":
        arr, src = env[s.args[0]]
        return ft.cast(arr, src, d)
    if k == "unary":
        x = operand(env, s, 0, d)
        with np.errstate(all="ignore"):
            return -x if p["op"] == "neg" else np.abs(x)
    if k == "math":
        with np.errstate(all="ignore"):
            math_fn: Any = MATH_NP[p["fn"]]
        return ft.store(math_fn(operand(env, s, 0, d)), d)
    if k == "trans":
        return operand(env, s, 0, d).T
    if k == "reshape":
        x = operand(env, s, 0, d)
        return x.reshape(x.shape[1], x.shape[0]).T if x.ndim == 2 else \
            x.reshape(2, -1).T.reshape(-1)
    if k == "reduce":
        return _reduce(s, env, d)
    if k == "scan":
        with np.errstate(all="ignore"):
            x = operand(env, s, 0, d)
            return ft.store(np.cumsum(x, axis=p["axis"], dtype=x.dtype), d)
    if k == "joinsplit":
        return operand(env, s, 0 if p["side"] == "l" else 1, d)
    if k == "dot":
        return _dot(s, env, ctx, d)
    if k == "atomic":
        ctx["atomic"](operand(env, s, 0, "i32"), p.get("op", "add"))
        return None
    raise ValueError(f"unknown statement kind {k}")


def _reduce(s: Stmt, env: dict, d: str):
    fn, ax = s.p["fn"], s.p["axis"]
    src = s.p["t"]
    x = operand(env, s, 0, src)
    with np.errstate(all="ignore"):
        if fn == "sum":
            r = np.sum(x, axis=ax, keepdims=True, dtype=x.dtype)
        elif fn == "max":
            r = np.max(x, axis=ax, keepdims=True)
        elif fn == "min":
            r = np.min(x, axis=ax, keepdims=True)
        else:
            r = np.argmax(x, axis=ax, keepdims=True).astype(np.int32)
    return np.broadcast_to(ft.store(r, d), x.shape).copy()


def _tf32(x: np.ndarray) -> np.ndarray:
    """float32 values with their 13 low mantissa bits cleared: the tensor cores' tf32 (they
    truncate; measured on an H200, benchmarks/RESULTS.md)."""
    bits: Any = np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return bits.view(np.float32)


def _dot(s: Stmt, env: dict, ctx: dict, d: str):
    """``acc + a @ b``: integer operands exactly in int64 (int32 wraps on storing), float
    operands rounded as the kernel feeds them (bf16, tf32) then multiplied and summed in
    float64."""
    a, b = ctx["dot"]()
    src = s.p["src"]
    if src == "i8":
        r = a.astype(np.int64) @ b.astype(np.int64)
    else:
        prep = {"bf16": ft.round_bf16, "tf32": _tf32}.get(src, lambda x: x)
        r = prep(a).astype(np.float64) @ prep(b).astype(np.float64)
    if s.args:
        acc = operand(env, s, 0, d)
        r = r + acc.astype(np.int64 if src == "i8" else np.float64)
    with np.errstate(all="ignore"):
        return ft.store(r, d)
