"""A course in the notebook: lessons under ``notebooks/course/``, each with exercises that
check themselves.

    from workbench.course import check, hint, solution, stub
    print(stub("vector_add"))           # the kernel to complete
    check("vector_add", my_kernel)      # right? on fresh random inputs, several sizes
    hint("vector_add", 2)               # a nudge (1), the concept (2), solution lines (3)
    solution("vector_add")              # the good solution's source, on request

:func:`check` runs the student's kernel on the interpreter and the CPU backend against numpy
(:mod:`workbench.course.checking`), says in words what is wrong (the case, the elements, the
program id and the line), and for a right answer compares what the compiler decided for an
H200 with a good solution's (:mod:`workbench.course.advice`). It never raises for a wrong
kernel.
"""
from __future__ import annotations

import numpy as np

from .checking import check_correct, signature_problem
from .exercise import Exercise
from .lessons import EXERCISES, LESSONS
from .report import CheckReport

__all__ = ["CheckReport", "EXERCISES", "LESSONS", "Exercise", "check", "exercise", "hint",
           "solution", "stub"]


def exercise(name: str) -> Exercise:
    """The exercise called ``name``. Raises KeyError with the known names."""
    try:
        return EXERCISES[name]
    except KeyError:
        raise KeyError(f"no exercise named {name!r}; the exercises are: "
                       + ", ".join(EXERCISES)) from None


def stub(name: str) -> str:
    """The source the student starts from."""
    return exercise(name).stub


class ShownText(str):
    """A string a notebook shows as text, not as a quoted Python literal: Markdown in
    Jupyter (``code=True``: a Python code block), plain lines in a terminal IPython."""

    code = False

    def _repr_markdown_(self) -> str:
        return f"```python\n{self}\n```" if self.code else str(self)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


class ShownCode(ShownText):
    """Source code shown as a Python code block (see :class:`ShownText`)."""

    code = True


def hint(name: str, level: int = 1) -> ShownText:
    """Hint ``level`` (1: a nudge, 2: the concept, 3: the relevant lines of a solution), a
    string that a notebook shows as text. Raises ValueError for another level."""
    hints = exercise(name).hints
    if not 1 <= level <= len(hints):
        raise ValueError(f"hint levels are 1 to {len(hints)}")
    text = hints[level - 1]
    return ShownCode(text) if level == len(hints) else ShownText(text)


def solution(name: str) -> ShownCode:
    """The good solution's source (kept in the package, out of the student's notebook), a
    string that a notebook shows as a code block."""
    return ShownCode(exercise(name).solution_source())


def check(name: str, kernel, *, seed: int | None = None, speed: bool = True) -> CheckReport:
    """Check the student's ``kernel`` (a ``@jit`` kernel with the exercise's parameters)
    against the exercise's reference on fresh random inputs (``seed``: reproduce a run) at
    every size, on the interpreter and the CPU backend. When right and ``speed``, compile it
    and the good solution for cuda:90 and give advice on what would make it faster. Returns a
    :class:`CheckReport` (shown as text or HTML); never raises for a wrong kernel. An
    ``@autotune``/``@heuristics`` kernel is checked through its ``@jit`` kernel at every case's
    configuration (the cases of the autotuning lesson sweep them as an autotuner would)."""
    ex = exercise(name)
    kernel = getattr(kernel, "base_fn", kernel)
    problem = signature_problem(kernel, ex)
    if problem is not None:
        from .checking import Failure
        return CheckReport(name, False, [Failure("launch", "any", problem,
                                                 "the parameter list of your kernel")])
    rng = np.random.default_rng(seed)
    failures = check_correct(kernel, ex, rng)
    cases = [ex.make(np.random.default_rng(0), s).label.split(" (")[0] for s in ex.sizes]
    if failures:
        return CheckReport(name, False, failures, cases=cases)
    report = CheckReport(name, True, cases=cases)
    if speed:
        _judge_speed(report, ex, kernel)
    return report


def _judge_speed(report: CheckReport, ex: Exercise, kernel) -> None:
    from . import advice
    case = ex.make(np.random.default_rng(0), ex.sizes[-1])
    try:
        mine, good = advice.facts(kernel, case), advice.facts(ex.solution, case)
    except Exception as e:  # noqa: BLE001 - speed advice is a bonus; say why it is missing
        report.advice_error = (f"judging it for {advice.TARGET} failed: {type(e).__name__}: "
                               f"{str(e).splitlines()[0][:200]}")
        return
    report.advice = advice.compare(mine, good)
