"""What an exercise of the course is: a task in words, a stub for the student, a good solution
and a correct-but-slow one (both kernels in the package, shown only on request), three levels
of hints, and how to build a test case (inputs, launch, expected outputs) for a size.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

COMPILE_OPTIONS = ("num_warps", "num_stages")


@dataclass
class Case:
    """One run of an exercise's kernel.

    ``label``: the case in words (``"n=1000: the last block is partly masked"``); ``args``:
    positional launch arguments (numpy arrays; outputs pre-filled with NaN or a sentinel so
    unwritten elements show); ``kwargs``: constexpr/keyword arguments; ``grid``: the launch
    grid (tuple of ints); ``expected``: ``{argument index: expected array}``; ``rtol``,
    ``atol``: tolerances for float outputs (integers compare exactly); ``program_of``: flat
    index of an output element -> the program id (tuple) whose tile holds it, for the report."""

    label: str
    args: tuple
    kwargs: dict
    grid: tuple
    expected: dict
    rtol: float = 1e-5
    atol: float = 1e-6
    program_of: Callable[[int], tuple] | None = None

    def launch_kwargs(self) -> dict:
        """``kwargs`` without the compile options (``num_warps``, ``num_stages``), which a
        compiled kernel's launch does not take."""
        return {k: v for k, v in self.kwargs.items() if k not in COMPILE_OPTIONS}

    def fresh_args(self) -> tuple:
        """Copies of the arguments (each run writes its own outputs)."""
        return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in self.args)


@dataclass
class Exercise:
    """One exercise. ``name``: the key of :func:`workbench.course.check`; ``lesson``: lesson
    number (1-based); ``title``; ``task``: what to write, in words; ``params``: the kernel's
    parameter names, in order (the check refuses another signature with a sentence saying
    which); ``stub``: the source the student starts from; ``solution``/``slow``: a good and a
    correct-but-slow ``@jit`` kernel; ``slow_advice``: words the advice for ``slow`` must
    contain (the test of the "right but slow" path); ``make``: ``(rng, size) -> Case``;
    ``sizes``: the sizes checked (tails and non-powers of two included); ``hints``: a nudge,
    the concept, then the relevant lines of a solution."""

    name: str
    lesson: int
    title: str
    task: str
    params: tuple
    stub: str
    solution: Any
    slow: Any
    slow_advice: str
    make: Callable[[np.random.Generator, Any], Case]
    sizes: tuple
    hints: tuple = field(default_factory=tuple)

    def solution_source(self) -> str:
        """The good solution's source text."""
        return inspect.getsource(self.solution.fn)


def grid_1d(n: int, block: int) -> tuple:
    """Programs needed to cover ``n`` elements with tiles of ``block`` (ceil(n / block),)."""
    return (-(-n // block),)
