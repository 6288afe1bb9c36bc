"""The course in a real browser: lesson 1 opened in JupyterLab and run as a student gets it
(every check says "not yet right" in words), then with the first exercise answered (its check
says it is right); read from the page's data attributes."""
from __future__ import annotations

from pathlib import Path

import nbformat

from workbench.course import solution

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "notebooks" / "course" / "01_program_ids_blocks_masks.ipynb"

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


def test_lesson_one_runs_and_its_checks_answer(jupyter_server, start_notebook):
    name = jupyter_server.add_notebook(LESSON)
    nb = nbformat.read(LESSON, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("course", {}).get("exercise") == "vector_add" \
                and cell.metadata["course"]["role"] == "answer":
            cell.source = solution("vector_add").replace("@jit", "@wb.jit", 1)
    nbformat.write(nb, jupyter_server.root / "lesson1_answered.ipynb")
    # both run side by side: the lesson as given and with the first exercise answered
    pending = start_notebook(name), start_notebook("lesson1_answered.ipynb")
    page, answered = (p.finish() for p in pending)
    assert page.state["unrun"] == 0, page.state
    checks = page.page.evaluate(CHECKS_JS)
    assert len(checks) == 3, checks
    for c in checks:
        assert c["correct"] == "0" and "not yet right" in c["text"], c
        assert "Traceback" not in c["text"]
    assert page.console_errors == [], page.console_errors
    # the stage view shows the source and the two stages the lesson discusses; the source
    # pane gets the larger share, and its longer lines wrap (none hides past the pane's edge)
    panes = page.page.evaluate(PANES_JS)
    assert panes["panes"] == ["source", "ttgir", "ptx"], panes
    assert panes["source"] > 0.45 * panes["box"], panes
    assert panes["lines"] > 0 and panes["clipped"] == 0, panes
    print(f"source pane {panes['source']:.0f} of {panes['box']:.0f} px; "
          f"{panes['clipped']} of {panes['lines']} source lines clipped")
    first = answered.page.evaluate(CHECKS_JS)[0]
    assert first["correct"] == "1" and "right on the interpreter and the CPU backend" in \
        first["text"], first
    print(f"lesson 1 ran in {page.seconds:.1f} s, answered in {answered.seconds:.1f} s")
