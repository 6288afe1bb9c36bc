"""Every lesson notebook runs as a student gets it (each check says "not yet right" in words,
never a traceback) and with the solutions filled in (each check passes)."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from workbench.course import solution

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks" / "course").glob("*.ipynb"))


def _run(nb, tmp_path, monkeypatch):
    from nbclient import NotebookClient
    pythonpath = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    monkeypatch.setenv("PYTHONPATH", pythonpath)
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()


def _checks(nb) -> dict:
    """exercise name -> the check cell's HTML output."""
    out = {}
    for cell in nb.cells:
        course = cell.metadata.get("course", {})
        if course.get("role") == "check":
            html = [o["data"]["text/html"] for o in cell.outputs
                    if "text/html" in o.get("data", {})]
            assert html, f"{course['exercise']}: the check showed nothing"
            out[course["exercise"]] = html[0]
    return out


def test_there_are_lessons():
    assert len(LESSONS) >= 3


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lesson_with_stubs_fails_in_words(path, tmp_path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    _run(nb, tmp_path, monkeypatch)
    checks = _checks(nb)
    assert checks
    for name, html in checks.items():
        assert 'data-correct="0"' in html and "not yet right" in html, name
        assert "Traceback" not in html, name


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lesson_with_solutions_passes(path, tmp_path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        course = cell.metadata.get("course", {})
        if course.get("role") == "answer":
            cell.source = solution(course["exercise"]).replace("@jit", "@wb.jit", 1)
    _run(nb, tmp_path, monkeypatch)
    for name, html in _checks(nb).items():
        assert 'data-correct="1"' in html and 'data-advice="0"' in html, (name, html[-600:])
    views = [o for c in nb.cells for o in c.get("outputs", [])
             if 'data-wb-view="ir"' in o.get("data", {}).get("text/html", "")]
    assert views, "the lesson shows no stage view"


def test_grade_script_grades_a_completed_release(tmp_path):
    """The release's grade.py runs a completed copy of lesson 1 and grades each exercise."""
    import subprocess
    import sys

    from workbench.course.release import release
    out = tmp_path / "student"
    release(out)
    lesson = sorted(out.glob("01_*.ipynb"))[0]
    nb = nbformat.read(lesson, as_version=4)
    answers = [c for c in nb.cells if c.metadata.get("course", {}).get("role") == "answer"]
    for cell in answers[:-1]:                    # the last exercise is left as its stub
        cell.source = solution(cell.metadata["course"]["exercise"]).replace("@jit", "@wb.jit")
    nbformat.write(nb, lesson)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
        WORKBENCH_CACHE_DIR=str(tmp_path / "cache"))
    res = subprocess.run([sys.executable, str(out / "grade.py"), str(lesson)], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    names = [c.metadata["course"]["exercise"] for c in answers]
    for name in names[:-1]:
        assert f"{lesson}: {name}: pass" in res.stdout
    assert f"{lesson}: {names[-1]}: fail" in res.stdout
    assert res.stdout.strip().endswith(f"{len(names) - 1} / {len(names)}")
