"""Bad inputs from valid ones: each seed's valid program (:func:`build.generate`) is broken in
one way, at the AST level of its kernel source or at its launch, and the mutant records what the
workbench must answer.

``mutate(seed)`` -> :class:`Mutant`. Its ``expect`` is one of

- ``"compile"``: a :class:`~workbench.errors.WorkbenchError` whose message names the mutant's
  file and the broken line (``file:line:col``) with a caret;
- ``"launch"``: a WorkbenchError naming the mutant's file with a caret (the ``def`` line, a
  parameter or the broken line: the launch is wrong, not one statement);
- ``"oob"``: an :class:`~workbench.errors.OutOfBoundsError` naming the program id and the
  offset;
- ``"none"``: no error (an unmasked access that stays inside the arrays is still valid);
- ``"any"``: no error or a located WorkbenchError (Triton accepts some of these, e.g. a float
  where an int was passed); only an internal exception or a crash is wrong.

The source mutations are in :mod:`.mutations`; this module picks one, applies it to the
parsed kernel and finds the line it broke.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np

from . import build
from . import mutations as mt
from .program import Program


@dataclass
class Mutant:
    """One bad program: ``seed`` (of :func:`mutate`), ``kind`` (the mutation's name),
    ``prog`` (the valid program it came from), ``text`` (module source of the mutated kernel
    ``kern``), ``expect`` (see the module docstring), ``line`` (the 1-based line the error
    must name, or None), ``launch`` (launch changes, see :func:`apply_launch`) and ``note``
    (a sentence describing the change)."""
    seed: int
    kind: str
    prog: Program
    text: str
    expect: str
    line: int | None = None
    launch: list = field(default_factory=list)
    note: str = ""


def _kernel_def(tree: ast.Module) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "kern")


def _marked_line(tree: ast.Module, text: str) -> int | None:
    """The line, in ``text`` (the unparsed ``tree``), of the node marked ``_wb_mark``: both
    trees have the same shape, so the node sits at the same place of a breadth-first walk."""
    order = list(ast.walk(tree))
    idx = next((i for i, n in enumerate(order) if getattr(n, "_wb_mark", False)), None)
    if idx is None:
        return None
    node = list(ast.walk(ast.parse(text)))[idx]
    return getattr(node, "lineno", None)


def mutate(seed: int) -> Mutant:
    """The mutant of ``seed``: the valid program ``generate(seed)`` with one mutation, chosen
    by ``seed`` from :data:`workbench.testing.fuzz.mutations.MUTATIONS` (source changes) and
    :data:`~workbench.testing.fuzz.mutations.LAUNCH_MUTATIONS` (launch changes), or now and
    then from :data:`~workbench.testing.fuzz.mutations.EXTRA_MUTATIONS`."""
    prog = build.generate(seed)
    rng = np.random.default_rng([seed, 0xBAD])
    tree = ast.parse(build.source(prog))
    ctx = mt.Ctx(rng, prog, tree, _kernel_def(tree))
    names = list(mt.MUTATIONS) + list(mt.LAUNCH_MUTATIONS)
    table = {**mt.MUTATIONS, **mt.LAUNCH_MUTATIONS, **mt.EXTRA_MUTATIONS}
    extra = np.random.default_rng([seed, 0xBAD, 2])
    for _ in range(50):
        kind = str(rng.choice(names))
        if extra.random() < 0.08:
            kind = str(extra.choice(list(mt.EXTRA_MUTATIONS)))
            ctx.rng = extra
        res = table[kind](ctx)
        if res is not None:
            break
    else:  # pragma: no cover - every program has loads and a store, so some mutation applies
        raise RuntimeError(f"no mutation applies to seed {seed}")
    text = f"# bad-input fuzz program, seed {seed}, mutation {kind}\n" + \
        ast.unparse(tree) + "\n"
    line = _marked_line(tree, text) if res.expect == "compile" else None
    return Mutant(seed, kind, prog, text, res.expect, line, res.launch, res.note)


def apply_launch(m: Mutant, pos: list, kw: dict, grid: tuple) -> tuple:
    """``(pos, kw, grid)`` after the mutant's launch changes. Each change is a tuple:
    ``("drop", i)`` drops positional ``i``; ``("extra", v)`` appends ``v``; ``("set", i, v)``
    replaces positional ``i``; ``("kw", name, v)`` sets a keyword; ``("nokw", name)`` drops
    one; ``("grid", g)`` replaces the grid; ``("array", i, dtype)`` passes positional ``i``
    as ``dtype``."""
    pos, kw = list(pos), dict(kw)
    for ch in m.launch:
        op = ch[0]
        if op == "drop":
            del pos[ch[1]]
        elif op == "extra":
            pos.append(ch[1])
        elif op == "set":
            pos[ch[1]] = ch[2]
        elif op == "kw":
            kw[ch[1]] = ch[2]
        elif op == "nokw":
            kw.pop(ch[1], None)
        elif op == "grid":
            grid = ch[1]
        elif op == "array":
            pos[ch[1]] = np.asarray(pos[ch[1]]).astype(ch[2])
    return pos, kw, grid


def describe(kind: str) -> str:
    """What mutation ``kind`` (a name of :data:`~workbench.testing.fuzz.mutations.MUTATIONS`,
    ``LAUNCH_MUTATIONS`` or ``EXTRA_MUTATIONS``) does to a valid program, in plain words (its
    function's docstring on one line); raises KeyError for an unknown kind."""
    fn = {**mt.MUTATIONS, **mt.LAUNCH_MUTATIONS, **mt.EXTRA_MUTATIONS}[kind]
    return " ".join((fn.__doc__ or "").split()).replace("``", "")
