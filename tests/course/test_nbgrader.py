"""nbgrader itself grades the course: the release of lesson 1 goes through `nbgrader
generate_assignment` (the student version keeps the stubs), a student's copy with two of three
exercises answered is submitted, and `nbgrader autograde` gives those two check cells their
point and the third none."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from workbench.course import solution
from workbench.course.release import release

pytest.importorskip("nbgrader", reason="nbgrader is not installed (pip install -e '.[dev]')")

ROOT = Path(__file__).resolve().parents[2]
LESSON = "01_program_ids_blocks_masks.ipynb"


def _nbgrader(course: Path, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
        WORKBENCH_CACHE_DIR=str(course / "cache"))
    res = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--force"], cwd=course,
                         env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    return res.stdout + res.stderr


@pytest.mark.slow   # nbgrader's autograde executes lesson 1 in a fresh kernel: 40-80 s here
def test_nbgrader_generates_and_autogrades_lesson_one(tmp_path):
    from nbgrader.api import Gradebook
    course = tmp_path / "course"
    source = course / "source" / "lesson1"
    release(source)
    for extra in source.iterdir():
        if extra.name == "nbgrader_config.py":
            extra.rename(course / extra.name)
        elif extra.name != LESSON:
            extra.unlink()
    _nbgrader(course, "generate_assignment", "lesson1")

    student = nbformat.read(course / "release" / "lesson1" / LESSON, as_version=4)
    answers = [c for c in student.cells if c.metadata.get("course", {}).get("role") == "answer"]
    names = [c.metadata["course"]["exercise"] for c in answers]
    assert names == ["vector_add", "saxpy", "clamp"]
    for cell in answers:                      # nbgrader kept the stub, not its placeholder
        assert "BEGIN SOLUTION" not in cell.source and "NotImplementedError" not in cell.source
        assert f"def {cell.metadata['course']['exercise']}(" in cell.source
        assert cell.source.rstrip().endswith("pass")
    for cell in answers[:2]:                  # the student answers two of three
        cell.source = solution(cell.metadata["course"]["exercise"]).replace("@jit", "@wb.jit")
    submitted = course / "submitted" / "student1" / "lesson1"
    submitted.mkdir(parents=True)
    nbformat.write(student, submitted / LESSON)
    _nbgrader(course, "autograde", "lesson1")

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {n: gb.find_grade(f"{n}-check", LESSON[:-6], "lesson1", "student1").score
                  for n in names}
        total = gb.find_submission("lesson1", "student1").score
    assert scores == {"vector_add": 1, "saxpy": 1, "clamp": 0}, scores
    assert total == 2
    shutil.rmtree(course / "cache", ignore_errors=True)
