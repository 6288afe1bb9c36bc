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
