"""The course in a real browser: lesson 1 opened in JupyterLab and run as a student gets it
(every check says "not yet right" in words), then the first exercise answered in the page and
its two cells run again (its check says it is right); read from the page's data attributes."""
from __future__ import annotations

import time
from pathlib import Path

import nbformat

from tests.browser.conftest import edit_and_run, shutdown_kernel
from tests.browser.scheduler import Planned
from workbench.course import solution

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "course" / "01_program_ids_blocks_masks.ipynb"
NAME = "course_01_program_ids_blocks_masks.ipynb"
NOTEBOOKS = [Planned(NAME, LESSON)]

PANES_JS = """() => {
    const box = document.querySelector('.wb-sw .wb-panes');
    const shown = Array.from(box.querySelectorAll('.wb-pane')).filter(p => !p.hidden);
    const src = box.querySelector('.wb-pane[data-stage="source"]');
    const code = src.querySelector('.wb-code');
    const text = Array.from(code.querySelectorAll('.wb-tx')).map(t => t.getBoundingClientRect());
    const codeBox = code.getBoundingClientRect();
    return {panes: shown.map(p => p.dataset.stage), box: box.getBoundingClientRect().width,
            source: src.getBoundingClientRect().width,
            clipped: text.filter(r => r.right > codeBox.right + 1).length, lines: text.length};
}"""
CHECKS_JS = """() => Array.from(document.querySelectorAll('[data-wb-view="check"]')).map(e => ({
    correct: e.dataset.correct, advice: e.dataset.advice, text: e.textContent.slice(0, 400)}))"""


def _cells(exercise: str) -> tuple[int, int]:
    """The indices of an exercise's answer cell and its check cell in the lesson."""
    nb = nbformat.read(LESSON, as_version=4)
    at = {c.metadata["course"]["role"]: i for i, c in enumerate(nb.cells)
          if c.metadata.get("course", {}).get("exercise") == exercise}
    return at["answer"], at["check"]


def test_lesson_one_runs_and_its_checks_answer(jupyter_server, notebooks):
    name = NAME
    page = notebooks.run(name)
    try:
        assert page.state["unrun"] == 0, page.state
        checks = page.page.evaluate(CHECKS_JS)
        assert len(checks) == 3, checks
        for c in checks:
            assert c["correct"] == "0" and "not yet right" in c["text"], c
            assert "Traceback" not in c["text"]
        assert page.console_errors == [], page.console_errors
        # the stage view shows the source and the two stages the lesson discusses; the source
        # pane gets up to 40 % of the row (the IR panes share the rest), and its longer lines
        # wrap (none hides past the pane's edge)
        panes = page.page.evaluate(PANES_JS)
        assert panes["panes"] == ["source", "ttgir", "ptx"], panes
        assert 0.3 * panes["box"] < panes["source"] <= 0.41 * panes["box"], panes
        assert panes["lines"] > 0 and panes["clipped"] == 0, panes
        print(f"source pane {panes['source']:.0f} of {panes['box']:.0f} px; "
              f"{panes['clipped']} of {panes['lines']} source lines clipped")
        # the student answers the first exercise in the page and runs its two cells again
        answer, check = _cells("vector_add")
        t0 = time.monotonic()
        edit_and_run(page, answer, check,
                     solution("vector_add").replace("@jit", "@wb.jit", 1))
        first, *rest = page.page.evaluate(CHECKS_JS)
        assert first["correct"] == "1" and "right on the interpreter and the CPU backend" in \
            first["text"], first
        assert [c["correct"] for c in rest] == ["0", "0"], rest
        assert page.console_errors == [], page.console_errors
        print(f"lesson 1 ran in {page.seconds:.1f} s, answered in "
              f"{time.monotonic() - t0:.1f} s")
    finally:
        page.close()
        shutdown_kernel(jupyter_server, name)
