"""Lesson 5 (shared memory and bank conflicts) in a real browser: opened in JupyterLab and run
as a student gets it: the lesson's own cells assert that the conversion's planned buffer is
conflict-free (and a plain buffer is not) and draw the bank view, and every check says "not
yet right" in words; then with the first exercise answered its check says it is right and as
good as the solution (read from the page's data attributes)."""
from __future__ import annotations

import time
from pathlib import Path

import nbformat

from tests.browser.conftest import edit_and_run, shutdown_kernel
from tests.browser.scheduler import Planned
from workbench.course import solution

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "course" / "05_shared_memory_banks.ipynb"
NAME = "course_05_shared_memory_banks.ipynb"    # notebooks/ has a 05_shared_memory_banks too
NOTEBOOKS = [Planned(NAME, LESSON)]

CHECKS_JS = """() => Array.from(document.querySelectorAll('[data-wb-view="check"]')).map(e => ({
    correct: e.dataset.correct, advice: e.dataset.advice, text: e.textContent.slice(0, 400)}))"""
BANKS_JS = "() => document.querySelectorAll('[data-wb-kind=\"banks\"]').length"


def test_lesson_five_runs_and_its_checks_answer(jupyter_server, notebooks):
    name = NAME
    page = notebooks.run(name)
    try:
        assert page.state["unrun"] == 0, page.state
        # Run All stops at a failing cell: every cell ran, so the lesson's asserts on the
        # conversion's conflict-free buffer held; the bank view is on the page
        assert page.page.evaluate(BANKS_JS) >= 1
        checks = page.page.evaluate(CHECKS_JS)
        assert len(checks) == 3, checks
        for c in checks:
            assert c["correct"] == "0" and "not yet right" in c["text"], c
            assert "Traceback" not in c["text"]
        assert page.console_errors == [], page.console_errors
        # the student answers the first exercise in the page and runs its two cells again
        nb = nbformat.read(LESSON, as_version=4)
        at = {c.metadata["course"]["role"]: i for i, c in enumerate(nb.cells)
              if c.metadata.get("course", {}).get("exercise") == "transpose_wide"}
        t0 = time.monotonic()
        edit_and_run(page, at["answer"], at["check"],
                     solution("transpose_wide").replace("@jit", "@wb.jit", 1))
        first = page.page.evaluate(CHECKS_JS)[0]
        assert first["correct"] == "1" and first["advice"] == "0", first
        assert "as good as the solution" in first["text"], first
        assert page.console_errors == [], page.console_errors
        print(f"lesson 5 ran in {page.seconds:.1f} s, answered in "
              f"{time.monotonic() - t0:.1f} s")
    finally:
        page.close()
        shutdown_kernel(jupyter_server, name)
