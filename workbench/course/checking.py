"""Does the student's kernel compute the right thing? Each case of the exercise runs on the
interpreter and on the CPU backend with fresh random inputs; the first difference is explained
in words: which case, which elements, the program id whose tile holds the first wrong element,
and the line of the kernel that stores that output. Nothing here raises for a wrong kernel.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass

import numpy as np

from ..errors import CompilationError, OutOfBoundsError, WorkbenchError, place
from .exercise import Case, Exercise

TARGETS = ("interpreter", "cpu")


@dataclass
class Failure:
    """Why one case failed on one target: ``target``, ``case`` (its label), ``message`` (the
    explanation, several sentences), ``look_at`` (what to look at next, one sentence) and
    ``compiling`` (the kernel did not compile: the case does not matter)."""

    target: str
    case: str
    message: str
    look_at: str
    compiling: bool = False


def store_lines(kernel) -> dict:
    """``{parameter name: (where, source line)}`` of the first ``tl.store`` whose pointer
    expression names that parameter (read from the kernel's source with :mod:`ast`): ``where``
    is the line for people (``In [12], line 5`` in a notebook, else ``file:line``, see
    :func:`workbench.errors.place`); empty when the source cannot be read."""
    fn = getattr(kernel, "fn", kernel)
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return {}
    src = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return {}
    params = list(inspect.signature(fn).parameters)
    found: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "store" \
                and node.args:
            names = {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
            for p in params:
                if p in names and p not in found:
                    found[p] = (place(fn.__code__.co_filename, first + node.lineno - 1),
                                src.splitlines()[node.lineno - 1].strip())
    return found


def _run(kernel, case: Case, target: str) -> tuple:
    from ..runtime.aot import compile as wb_compile
    args = case.fresh_args()
    compiled = wb_compile(kernel, *args, target=target, **case.kwargs)
    compiled[case.grid](*args, **case.launch_kwargs())
    return args


def compile_message(e: CompilationError) -> str:
    """The student's part of a compile error: where (``file:line:col``, the source line, a
    caret), what is wrong and what to do; without the position counted from the ``def`` line
    that Triton's own message carries (the file position already says it)."""
    return "\n".join(line for line in str(e).splitlines()
                     if not line.startswith("(Triton's position:"))


def _explain_error(e: Exception, target: str, case: Case) -> Failure:
    if isinstance(e, CompilationError):
        return Failure(target, case.label, compile_message(e),
                       "the line the message points at (fix it, then run the check again)",
                       compiling=True)
    if isinstance(e, OutOfBoundsError):
        pid = tuple(e.program_id or ())[:len(case.grid)]
        pid_text = f"id {pid[0]}" if len(pid) == 1 else f"id {pid}"
        return Failure(target, case.label,
                       f"program {pid_text} accessed '{e.arg}' outside the array (element offset "
                       f"{e.element_offset}):\n{e}",
                       "the mask of that load or store: lanes past the end must be masked off")
    if isinstance(e, WorkbenchError):
        return Failure(target, case.label, str(e), "the line the message points at")
    return Failure(target, case.label, f"the kernel raised {type(e).__name__}: {e}",
                   "the line of your kernel named in the message")


def _compare(kernel, case: Case, target: str, got: tuple, params: tuple) -> Failure | None:
    for idx, want in case.expected.items():
        have = np.asarray(got[idx])
        if have.shape != want.shape:
            return Failure(target, case.label, f"'{params[idx]}' has shape {have.shape}, "
                           f"expected {want.shape}", "how the output is allocated")
        if _untouched(have, case.args[idx]):
            return _stores_nothing(kernel, target, case, params[idx])
        if np.issubdtype(want.dtype, np.floating):
            bad = ~np.isclose(have, want, rtol=case.rtol, atol=case.atol, equal_nan=False)
        else:
            bad = have != want
        if not bad.any():
            continue
        flat = np.flatnonzero(bad.ravel())
        i = int(flat[0])
        where = np.unravel_index(i, want.shape)
        unwritten = np.issubdtype(have.dtype, np.floating) and np.isnan(have.ravel()[i])
        pid = case.program_of(i) if case.program_of else None
        line = store_lines(kernel).get(params[idx])
        msg = (f"'{params[idx]}' differs in {flat.size} of {want.size} elements; the first is "
               f"{params[idx]}{list(int(w) for w in where)}: got {have.ravel()[i].item()!r}, "
               f"expected {want.ravel()[i].item()!r}"
               + (" (never written)" if unwritten else "") + ".")
        if pid is not None:
            pid = tuple(pid) if isinstance(pid, (tuple, list)) else (pid,)
            msg += (f" That element belongs to the tile of program id "
                    f"{pid[0] if len(pid) == 1 else pid}.")
        if line is not None:
            msg += f" It is stored at {line[0]}: {line[1]}"
        hint = ("which elements your program ids and offsets cover: some were never stored"
                if unwritten else "the values you compute for that element")
        return Failure(target, case.label, msg, hint)
    return None


def _untouched(have: np.ndarray, before) -> bool:
    """Every element of the output is as it was before the launch (NaN or the sentinel)."""
    before = np.asarray(before)
    if before.shape != have.shape:
        return False
    return bool(np.array_equal(have, before, equal_nan=have.dtype.kind in "fc"))


def _stores_nothing(kernel, target: str, case: Case, param: str) -> Failure:
    line = store_lines(kernel).get(param)
    if line is None:
        msg = (f"your kernel stores nothing into '{param}' yet: every element is as it was "
               f"before the launch. Write the kernel's body (replace the stub's `pass`): "
               f"compute the offsets, load the inputs, and `tl.store` the result into "
               f"{param}.")
        look = "the stub's TODO comment: it says what the body must do"
    else:
        msg = (f"your kernel stores nothing into '{param}': every element is as it was "
               f"before the launch, though {line[0]} stores to it: {line[1]}")
        look = "that store's mask and offsets (is the mask ever true?)"
    return Failure(target, case.label, msg, look)


def check_case(kernel, exercise: Exercise, case: Case, target: str) -> Failure | None:
    """Run ``kernel`` on ``target`` for ``case`` and compare; None when right."""
    try:
        got = _run(kernel, case, target)
    except Exception as e:  # noqa: BLE001 - a student's kernel may fail in any way
        return _explain_error(e, target, case)
    return _compare(kernel, case, target, got, exercise.params)


def signature_problem(kernel, exercise: Exercise) -> str | None:
    """A sentence when ``kernel`` is not a ``@jit`` kernel with the exercise's parameters."""
    fn = getattr(kernel, "fn", None)
    if fn is None or not hasattr(kernel, "run"):
        return (f"check('{exercise.name}', k) expects a @jit kernel; got "
                f"{type(kernel).__name__}. Decorate your function with @wb.jit.")
    names = tuple(inspect.signature(fn).parameters)
    if names != tuple(exercise.params):
        return (f"'{fn.__name__}' takes ({', '.join(names)}); this exercise launches it as "
                f"({', '.join(exercise.params)}). Keep the stub's parameters.")
    return None


def _same_fault(a: Failure, b: Failure) -> bool:
    """The same case failing the same way: the same words, or an out-of-bounds access on
    both backends (each words its own bounds check; the first backend's words are kept)."""
    return a.case == b.case and (a.message == b.message or (
        "out-of-bounds" in a.message and "out-of-bounds" in b.message))


def check_correct(kernel, exercise: Exercise, rng: np.random.Generator,
                  targets=TARGETS) -> list:
    """Every size of ``exercise`` on every target: the list of :class:`Failure` (empty when
    the kernel is right everywhere). Stops at the first failing size per target, and after
    a compile error (reported once: every backend compiles the same source)."""
    failures: list[Failure] = []
    cases = [exercise.make(rng, size) for size in exercise.sizes]
    for target in targets:
        for case in cases:
            f = check_case(kernel, exercise, case, target)
            if f is None:
                continue
            same = [g for g in failures if _same_fault(g, f)]
            if same:                 # the same fault on another backend: said once
                same[0].target += f" and the {target}"
            else:
                failures.append(f)
            break
        if failures and failures[-1].compiling:
            break          # the kernel does not compile: the same on every backend
    return failures
