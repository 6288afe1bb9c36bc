"""The catalogue of bad-input mutations used by :mod:`.mutate`.

A mutation takes a :class:`Ctx` (the valid program, its parsed module and kernel ``def``),
changes the tree in place (marking the node the error must point at with ``_wb_mark``) and
returns a :class:`Res`, or None when it does not apply to this program. Every change here is
one that Triton 3.6 rejects too (checked against its ``code_generator.py``/``semantic.py``),
unless the result says ``"any"`` or ``"none"``.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np

from . import build
from . import types as ft
from .program import Program


@dataclass
class Ctx:
    """What a mutation works on: ``rng``, the valid ``prog``, its module ``tree`` and the
    kernel ``fn`` in it."""
    rng: np.random.Generator
    prog: Program
    tree: ast.Module
    fn: ast.FunctionDef

    def pick(self, seq):
        """One element of ``seq``, uniformly."""
        return seq[int(self.rng.integers(len(seq)))]

    def values(self, pred=None) -> list:
        """``(name, dtype)`` of the program's tile values (optionally those whose dtype
        satisfies ``pred``)."""
        out = [(s.out, s.info.dtype) for s in self.prog.stmts
               if s.kind != "atomic" and s.info is not None]
        return [v for v in out if pred is None or pred(v[1])]

    @property
    def nd(self) -> int:
        """Rank of the program's tiles."""
        return 2 if self.prog.two_d else 1

    def shape(self, scale: int = 1) -> str:
        """The tile shape as source, each dimension times ``scale``."""
        s = "" if scale == 1 else f" * {scale}"
        return f"(BM{s}, BN{s})" if self.prog.two_d else f"(BM{s},)"

    def insert(self, text: str, mark=None) -> ast.AST:
        """Parse ``text`` (statements) and insert it before the final store; marks the first
        statement, or ``mark(stmts)`` when given; returns the marked node."""
        stmts = ast.parse(text).body
        node = mark(stmts) if mark else stmts[0]
        node._wb_mark = True  # type: ignore[attr-defined,union-attr]
        self.fn.body[-1:-1] = stmts
        return node

    def calls(self, attr: str) -> list:
        """Calls ``tl.<attr>(...)`` anywhere in the kernel."""
        return [n for n in ast.walk(self.fn) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute) and n.func.attr == attr]

    def store(self) -> ast.Call:
        """The kernel's final ``tl.store`` call."""
        last = self.fn.body[-1]
        assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
        return last.value


@dataclass
class Res:
    """A mutation's result: what the workbench must answer, launch changes, a note."""
    expect: str
    note: str
    launch: list = field(default_factory=list)


def _value(c: Ctx, pred=None):
    vals = c.values(pred)
    return c.pick(vals) if vals else (None, None)


def _insert(c: Ctx, text: str, note: str, expect: str = "compile") -> Res:
    c.insert(text)
    return Res(expect, note)


# compile-time mutations -------------------------------------------------------------------
def undefined_name(c: Ctx):
    """A use of a value renamed to a name nothing defines."""
    top = [st for st in c.fn.body if not isinstance(st, (ast.If, ast.For, ast.While))]
    uses = [n for st in top for n in ast.walk(st) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load) and n.id.startswith("v")]  # an if on a constexpr
    # flag compiles one branch only (in Triton too), so names in branches are left alone
    if not uses:
        return None
    n = c.pick(uses)
    n.id = n.id + c.pick(["x", "_tmp", "0"])
    n._wb_mark = True  # type: ignore[attr-defined]
    return Res("compile", f"undefined name {n.id}")


def misspelled_builtin(c: Ctx):
    """``tl.lod``, ``tl.arnge``...: an attribute ``tl`` does not have."""
    calls = [n for n in ast.walk(c.fn) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
             and n.func.value.id == "tl"]
    if not calls:
        return None
    n = c.pick(calls)
    assert isinstance(n.func, ast.Attribute)
    n.func.attr = n.func.attr[:-1] + "_" if len(n.func.attr) > 3 else n.func.attr + "z"
    n.func._wb_mark = True  # type: ignore[attr-defined]
    return Res("compile", f"tl.{n.func.attr} does not exist")


def bad_arange(c: Ctx):
    """``tl.arange`` of a non-power-of-two, empty, huge, float or runtime range."""
    return _insert(c, "bad = tl.arange(" + c.pick([
        "0, 3", "0, 12", "0, 100", "0, BM - 1", "0, BM + BM // 2", "4, 2", "0, 0",
        "0, 2 ** 21", "0.5, 8", "0, pid_m", "0, pid_m + 8", "1, BM"]) + ")", "bad tl.arange")


def broadcast_mismatch(c: Ctx):
    """A tile combined with a tile of an incompatible shape."""
    v, _ = _value(c)
    if v is None:
        return None
    other = c.pick([f"tl.zeros({c.shape(2)}, tl.int32)",
                    "tl.arange(0, BM * 2)" if c.nd == 1 else "tl.zeros((BM * 2, 1), tl.int32)",
                    f"tl.full({c.shape(4)}, 1, tl.int8)"])
    op = c.pick(["+", "*", "<", "&"]) if c.values(ft.is_int) else c.pick(["+", "*", "<"])
    if op == "&":
        v, _ = _value(c, ft.is_int)
    return _insert(c, f"bad = {v} {op} {other}", "mismatched broadcast")


def nonconstexpr_shape(c: Ctx):
    """A shape that is a runtime argument instead of a ``tl.constexpr``."""
    v, _ = _value(c)
    return _insert(c, "bad = " + c.pick([
        "tl.zeros((pid_m,), tl.float32)", "tl.full((pid_m * 2, BM), 0, tl.int32)",
        f"tl.reshape({v}, (pid_m,))", "tl.zeros((BM, pid_m + 1), tl.int16)",
        f"tl.broadcast_to({v}, (pid_m, BM))"]), "runtime value as a shape")


def bad_axis(c: Ctx):
    """A reduction, scan or dimension operation on an axis the tile does not have."""
    v, d = _value(c)
    if v is None:
        return None
    ax = c.pick([c.nd, c.nd + 1, -c.nd - 1, 7])
    fn = c.pick(["sum", "max", "min", "argmax", "cumsum", "expand_dims", "program_id"])
    if fn == "expand_dims":
        ax = c.pick([c.nd + 1, -c.nd - 2, 9])
        text = f"bad = tl.expand_dims({v}, {ax})"
    elif fn == "program_id":
        text = f"bad = tl.program_id({c.pick([3, -1, 5])})"
    elif fn == "argmax":
        text = f"bad = tl.argmax({v}, axis={ax})"
    else:
        text = f"bad = tl.{fn}({v}, axis={ax})"
    return _insert(c, text, f"{fn} on axis {ax}")


def wrong_type(c: Ctx):
    """An operation on a value of a type it does not take (float shifts and bitwise ops,
    loads and stores through non-pointers, pointer arithmetic with floats, math on ints)."""
    vf, _ = _value(c, lambda d: ft.is_float(d))
    vi, _ = _value(c, lambda d: ft.is_int(d) and d != "i1")
    v, _ = _value(c)
    opts = [f"bad = tl.load({v})", f"tl.store({v}, {v})", "bad = x0_ptr + 1.5",
            "bad = x0_ptr * 2", f"bad = tl.atomic_add({v}, 1)", "bad = x0_ptr + out_ptr",
            f"bad = {v}.to(x0_ptr)", f"bad = tl.where({v}, x0_ptr, 1.5)"]
    if vf:
        opts += [f"bad = {vf} << 1", f"bad = {vf} & 3", f"bad = ~{vf}", f"bad = {vf} >> {vf}"]
    if vi:
        opts += [f"bad = {vi} << 1.5", f"bad = tl.exp({vi})", f"bad = tl.sqrt({vi})",
                 f"bad = tl.dot({vi}, {vi})" if c.nd == 1 else f"bad = {vi} ^ 2.0"]
    return _insert(c, c.pick(opts), "operand of the wrong type")


def bad_reshape(c: Ctx):
    """A reshape, permute, split or join whose shapes do not fit."""
    v, _ = _value(c)
    if v is None:
        return None
    opts = [f"bad = tl.reshape({v}, {c.shape(2)})", f"bad = tl.reshape({v}, (3, BM // 3))",
            f"bad = tl.split({v})", f"bad = tl.join({v}, tl.zeros({c.shape(2)}, tl.int32))",
            f"bad = tl.permute({v}, (0, 0))", f"bad = tl.permute({v}, (0, 1, 2))",
            f"bad = tl.broadcast_to({v}, (3, 5))", f"bad = {v}.shape[3]"]
    if c.nd == 1:
        opts.append(f"bad = tl.trans({v}, 1, 0)")
    return _insert(c, c.pick(opts), "shapes that do not fit")


def bad_dtype(c: Ctx):
    """A dtype that does not exist or is not a dtype."""
    v, _ = _value(c)
    return _insert(c, c.pick([f"bad = {v}.to(tl.int33)", "bad = tl.zeros((BM,), dtype=tl.float33)",
                              "bad = tl.zeros((BM,), dtype=5)", f"bad = {v}.to('int32x')",
                              "bad = tl.full((BM,), 1, tl.void)"]), "not a dtype")


def call_nonjit(c: Ctx):
    """A call of a Python function that is not ``@jit``, of a ``@jit`` helper with the wrong
    argument count, of a non-callable, or of an unsupported Python builtin."""
    v, _ = _value(c)
    which = c.pick(["plain", "arity", "noncallable", "builtin"])
    if which == "plain":
        c.tree.body.insert(-1, ast.parse("def helper(x):\n    return x * 2").body[0])
        return _insert(c, f"bad = helper({v})", "call of a function without @jit")
    if which == "arity":
        c.tree.body.insert(-1, ast.parse("@wb.jit\ndef helper(x, y):\n    return x + y").body[0])
        return _insert(c, f"bad = helper({v})", "@jit helper given 1 of 2 arguments")
    if which == "noncallable":
        return _insert(c, f"bad = BM({v})", "call of a constexpr int")
    return _insert(c, c.pick([f"bad = sorted({v})", f"bad = open({v})", "bad = input()"]),
                   "call of a Python builtin the language does not have")


def wrong_keyword(c: Ctx):
    """A keyword argument a builtin does not take."""
    calls = [n for n in c.calls("load") + c.calls("store") if n.keywords]
    if calls and c.rng.random() < 0.6:
        n = c.pick(calls)
        kw = c.pick(n.keywords)
        kw.arg = c.pick(["maks", "othr", "msk", "eviction"]) if kw.arg != "maks" else "mask_"
        n._wb_mark = True  # type: ignore[attr-defined]
        return Res("compile", f"keyword {kw.arg}")
    v, _ = _value(c)
    return _insert(c, c.pick([f"bad = tl.sum({v}, axs=0)", f"bad = tl.cumsum({v}, dim=0)",
                              "bad = tl.zeros((BM,), dtyp=tl.int32)",
                              f"bad = {v}.to(tl.int32, rounding=1)"]), "unknown keyword")


def store_shape(c: Ctx):
    """The final store writes a tile of the wrong shape (or a pointer, or nothing)."""
    st = c.store()
    st.args[1:2] = [ast.parse(c.pick([f"tl.zeros({c.shape(2)}, tl.int32)",
                                      "tl.zeros((BM * 2, 3), tl.int32)",
                                      f"tl.zeros({c.shape(2)}, tl.int32)[None]"])).body[0].value]  # type: ignore[attr-defined]
    if c.rng.random() < 0.2:
        st.args = st.args[:1]
    st._wb_mark = True  # type: ignore[attr-defined]
    return Res("compile", "store of the wrong shape")


def dot_shapes(c: Ctx):
    """``tl.dot`` of operands whose shapes or dtypes do not fit."""
    a, b = c.pick([("(16, 16), tl.float16", "(32, 16), tl.float16"),
                   ("(8, 8), tl.float16", "(8, 8), tl.float16"),
                   ("(16, 16), tl.float16", "(16, 16), tl.float32"),
                   ("(16,), tl.float16", "(16,), tl.float16"),
                   ("(16, 16), tl.int1", "(16, 16), tl.int1"),
                   ("(16, 32), tl.float32", "(16, 16), tl.float32")])
    return _insert(c, f"bad = tl.dot(tl.zeros({a}), tl.zeros({b}))", "tl.dot of bad shapes")


def unsupported_syntax(c: Ctx):
    """Python the kernel language does not have (comprehensions, try, with, lambda, break out
    of a loop, scalar indexing of a tile)."""
    v, _ = _value(c)
    text = c.pick([f"bad = [{v} for _ in range(2)]", "try:\n    bad = 1\nexcept Exception:\n"
                   "    bad = 2", f"bad = lambda: {v}", f"bad = {v}[0]", f"bad = {v}[1:3]",
                   "for i in range(0, it):\n    break", "while flag > 0:\n    continue",
                   f"with open('x') as f:\n    bad = {v}", f"bad = {{'a': {v}}}",
                   "global gbad\ngbad = 1", f"bad = {v} @ {v}" if c.nd == 1 else "del mask"])
    inner = text.startswith(("for", "while"))  # the error points at break/continue
    c.insert(text, mark=(lambda s: s[0].body[0]) if inner else None)
    return Res("compile", "unsupported Python")


def branch_mismatch(c: Ctx):
    """A name given different types or shapes by the two branches of a runtime ``if``, or a
    loop-carried value whose type changes in the loop."""
    v, d = _value(c)
    if v is None:
        return None
    to = "tl.float64" if d != "fp64" else "tl.int8"
    other = c.pick([f"{v}.to({to})", f"tl.zeros({c.shape(2)}, tl.{ft.TL_NAME[d][3:]})"])
    if c.rng.random() < 0.5:
        text = f"if pid_m > 0:\n    bad = {v}\nelse:\n    bad = {other}\nbad2 = bad"
        return Res("compile", "if branches disagree", []) if c.insert(text) else None
    text = f"bad = {v}\nfor i in range(0, it):\n    bad = {other}\nbad2 = bad"
    c.insert(text, mark=lambda s: s[1])
    return Res("compile", "loop-carried type changes")


def static_checks(c: Ctx):
    """A failing ``tl.static_assert`` or a constexpr division by zero."""
    return _insert(c, c.pick(["tl.static_assert(BM < 0, 'BM must be negative')",
                              "tl.static_assert(BM == BN + 1000)", "bad = tl.arange(0, BM // 0)",
                              "bad = tl.zeros((BM % 0,), tl.int32)"]), "constexpr check")


def _oob_target(c: Ctx, shift: str | None) -> None:
    """Apply ``shift`` (or drop the mask, when None) to the final store or to a new load of an
    input whose value the program stores (a load whose value is dead or folded away, say by
    ``x - x``, is removed by the compiler, in Triton too, so it could not fault)."""
    idx = "rm[:, None] * stride + rn[None, :]" if c.prog.two_d else "offs * stride"
    if c.rng.random() < 0.5:
        n = c.store()
    else:
        i = int(c.rng.integers(len(c.prog.inputs)))
        out = ft.TL_NAME[c.prog.out_dtype]
        c.insert(f"bad = tl.load(x{i}_ptr + {idx}, mask=mask)\n"
                 f"tl.store(out_ptr + {idx}, bad.to({out}), mask=mask)")
        n = c.fn.body[-3].value  # type: ignore[attr-defined]
    if shift is None:
        n.keywords = [k for k in n.keywords if k.arg not in ("mask", "other")]
    else:
        n.args[0] = ast.BinOp(n.args[0], ast.Add(), ast.parse(shift).body[0].value)  # type: ignore[attr-defined]


def oob_offset(c: Ctx):
    """The store or a masked load shifted past either end of its array: every lane the mask
    keeps is out of bounds (the program has at least one such lane)."""
    shift = c.pick(["M * stride", "-(M * stride) - 1", "1000000"])
    _oob_target(c, shift)
    return Res("oob", f"access shifted by {shift}")


def oob_unmasked(c: Ctx):
    """The store or a load without its mask: out of bounds exactly when some program's tile
    reaches past the array (then the error is required, else none is allowed)."""
    _oob_target(c, None)
    p = c.prog
    s = build.stride(p)
    gm = -(-p.M // p.BM)
    if p.two_d:
        gn = -(-p.N // p.BN)
        last = (gm * p.BM - 1) * s + gn * p.BN - 1
    else:
        last = (gm * p.BM - 1) * s
    size = max(p.M * s, 1)
    return Res("oob" if last >= size else "none", f"mask dropped (last offset {last}, size {size})")


def bad_builtin_args(c: Ctx):
    """A builtin given a tile where a compile-time value belongs, too few arguments, a
    combine function that is not ``@jit``, a hint below 1; a tile used as a Python bool; an
    attribute tiles do not have; Python values tiles do not combine with."""
    v, _ = _value(c)
    if v is None:
        return None
    text = c.pick([
        f"bad = tl.sum({v}, axis={v})", f"bad = tl.reshape({v}, {v})", f"bad = tl.arange(0, {v})",
        f"bad = tl.zeros((BM,), dtype={v})", f"bad = {v}.to({v})", "bad = tl.program_id(pid_m)",
        "bad = tl.load()", "tl.store(out_ptr)", "bad = tl.arange(0)", f"bad = tl.dot({v})",
        f"bad = tl.reduce({v}, 0, None)", f"bad = tl.associative_scan({v}, 0, 5)",
        f"bad = tl.reduce({v}, 0, {v})", f"bad = tl.multiple_of({v}, 0)",
        f"bad = tl.max_contiguous({v}, -4)", f"bad = tl.max_constancy({v}, 1.5)",
        f"if {v}:\n    bad = 1", f"bad = {v}.foo", f"bad = {v}.dtype.bar", f"bad = {v} + 'a'",
        f"bad = {v} + None", f"bad = ({v}, {v}) + {v}", f"a, b = {v}",
        f"a, b, c = tl.split(tl.join({v}, {v}))", "def inner():\n    pass", "tl = 3",
        "for i in tl.static_range(0, pid_m):\n    pass", f"bad = {v} + 2 ** 70",
        f"bad = tl.where({v})", f"bad = tl.full((BM,), {v}, tl.int32)"])
    # rebinding tl is legal; the error comes at the next tl.<name>, on a line of its own
    return _insert(c, text, "bad builtin arguments", "launch" if text == "tl = 3" else "compile")


# drawn by a generator of their own (see mutate), so that adding them left the mutation of
# every other seed as it was
EXTRA_MUTATIONS = {f.__name__: f for f in (bad_builtin_args,)}


MUTATIONS = {f.__name__: f for f in (
    undefined_name, misspelled_builtin, bad_arange, broadcast_mismatch, nonconstexpr_shape,
    bad_axis, wrong_type, bad_reshape, bad_dtype, call_nonjit, wrong_keyword, store_shape,
    dot_shapes, unsupported_syntax, branch_mismatch, static_checks, oob_offset, oob_unmasked)}


# launch-time mutations --------------------------------------------------------------------
def _n_pos(p: Program) -> int:
    return len(p.inputs) + 1 + 2 * p.uses("dot") + p.uses("atomic") + 5


def launch_argc(c: Ctx):
    """Too few or too many positional arguments, an unknown or a missing constexpr keyword."""
    n = _n_pos(c.prog)
    return Res("launch", "argument count", [c.pick([
        ("drop", int(c.rng.integers(n))), ("extra", 3), ("kw", "BQ", 16), ("nokw", "BM"),
        ("kw", "M", 5)])])


def launch_types(c: Ctx):
    """An argument of the wrong kind: a string, None, a list or an object for a pointer or an
    integer; an array of an unsupported dtype; a bad grid."""
    n = _n_pos(c.prog)
    ptr = int(c.rng.integers(len(c.prog.inputs) + 1))
    scalar = n - 5 + int(c.rng.integers(5))
    ch = c.pick([("set", ptr, "abc"), ("set", ptr, [1, 2, 3]), ("set", ptr, object()),
                 ("array", ptr, np.complex64), ("set", scalar, object()), ("set", scalar, 2**70),
                 ("grid", (1.5,)), ("grid", ("x",)), ("grid", (1, 1, 1, 1)), ("grid", (-1,)),
                 ("grid", None)])
    return Res("launch", "argument of the wrong kind", [ch])


def launch_lenient(c: Ctx):
    """Arguments Triton accepts or rejects depending on the kernel (a float or None for an
    integer, an integer for a pointer, another array dtype): any located error is fine."""
    n = _n_pos(c.prog)
    ptr = int(c.rng.integers(len(c.prog.inputs) + 1))
    scalar = n - 5 + int(c.rng.integers(5))
    ch = c.pick([("set", scalar, 1.5), ("set", scalar, None), ("set", ptr, 5),
                 ("array", ptr, c.pick([np.float16, np.int8, np.bool_, np.float64, np.uint32])),
                 ("set", scalar, True), ("set", scalar, -(2**40)), ("set", scalar, "7"),
                 ("set", scalar, np.zeros(3))])
    return Res("any", "argument of another type", [ch])


def launch_constexpr(c: Ctx):
    """A constexpr value no ``tl.arange`` or shape can take."""
    name = c.pick(["BM", "BN"] if c.prog.two_d else ["BM"])
    return Res("launch", f"bad {name}", [("kw", name, c.pick([24, 0, -16, 1.5, "a", None, 3]))])


LAUNCH_MUTATIONS = {f.__name__: f for f in (
    launch_argc, launch_types, launch_lenient, launch_constexpr)}
