"""Write a course lesson notebook from a lesson text and the exercises of workbench.course.

    python tools/course_notebook.py tools/course_lessons/05_shared_memory_banks.py

A lesson text is a Python file defining ``LESSON`` (its number), ``CELLS`` (the lesson before
the exercises: a list of ``("markdown" | "code", source)``), ``NAME`` (the notebook's file
name) and optionally ``RUN_SECONDS`` (its run time, from ``tools/course_timings.py``, for the
closing note). The exercises part is the same in every lesson: the common instructions, then per
exercise a heading with its task, its answer cell (the stub, metadata ``{"course":
{"exercise", "role": "answer"}}``) and its check cell (``role: "check"``), then a closing note.
Cell ids are derived from the lesson and the cell's position, so a rewrite is stable.
"""
from __future__ import annotations

import hashlib
import json
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EXERCISES_INTRO = (
    "## Exercises\n\nComplete each kernel in its cell, run it, then run the check below it. "
    "The check runs your kernel on fresh random inputs of several sizes (tails and sizes that "
    "are not powers of two included) on the interpreter and the CPU backend, says what is "
    "wrong if something is, and once it is right, compiles it for an H200 and says what would "
    "make it faster. `hint(name)`, `hint(name, 2)` and `hint(name, 3)` say more and more; "
    "`solution(name)` shows a good solution.")
CLOSING = "When every check above is right and fast, go on to the next lesson."


def closing(seconds: float | None = None) -> str:
    """The closing note; with ``seconds`` (the lesson's measured run time with every answer
    filled in, from ``tools/course_timings.py``) it says how long the lesson took to run."""
    if seconds is None:
        return CLOSING
    return (f"{CLOSING}\n\nWith every answer filled in, this lesson ran top to bottom in "
            f"about {seconds:.0f} s on a busy 2-core machine with no GPU (compile cache "
            f"empty; an idle machine is faster); "
            f"`python tools/course_timings.py` times it on yours.")


def _lines(text: str) -> list:
    lines = text.splitlines(keepends=True)
    if lines and lines[-1].endswith("\n"):
        lines[-1] = lines[-1][:-1]
    return lines


def _cell(kind: str, source: str, key: str, meta: dict | None = None) -> dict:
    cid = hashlib.sha1(key.encode()).hexdigest()[:8]
    cell: dict = {"cell_type": kind, "id": cid, "metadata": meta or {},
                  "source": _lines(source)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def build(lesson: int, cells: list, seconds: float | None = None) -> dict:
    """The notebook (nbformat 4.5 dict) of lesson ``lesson``: ``cells`` then its exercises,
    then the closing note (:func:`closing`)."""
    from workbench.course import EXERCISES
    out = [_cell(kind, src, f"{lesson}:{i}") for i, (kind, src) in enumerate(cells)]
    out.append(_cell("markdown", EXERCISES_INTRO, f"{lesson}:exercises"))
    for ex in (e for e in EXERCISES.values() if e.lesson == lesson):
        out.append(_cell("markdown", f"### {ex.title} (`{ex.name}`)\n\n{ex.task}",
                         f"{lesson}:{ex.name}:task"))
        out.append(_cell("code", ex.stub.rstrip("\n"), f"{lesson}:{ex.name}:answer",
                         {"course": {"exercise": ex.name, "role": "answer"}}))
        out.append(_cell("code", f'check("{ex.name}", {ex.name})', f"{lesson}:{ex.name}:check",
                         {"course": {"exercise": ex.name, "role": "check"}}))
    out.append(_cell("markdown", closing(seconds), f"{lesson}:closing"))
    return {"cells": out, "metadata": {"kernelspec": {"display_name": "Python 3",
                                                      "language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


def main(argv: list) -> None:
    """Write each lesson text's notebook into notebooks/course/."""
    for path in argv:
        spec = runpy.run_path(path)
        nb = build(spec["LESSON"], spec["CELLS"], spec.get("RUN_SECONDS"))
        dest = ROOT / "notebooks" / "course" / spec["NAME"]
        dest.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(dest)


if __name__ == "__main__":
    main(sys.argv[1:])
