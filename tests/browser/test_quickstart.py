"""The quickstart notebook in JupyterLab under Chromium, asserted by data read from the page."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.scheduler import Planned

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [Planned("01_quickstart.ipynb", ROOT / "notebooks" / "01_quickstart.ipynb")]


@pytest.fixture(scope="module")
def quickstart(notebooks):
    nb = notebooks.run("01_quickstart.ipynb")
    yield nb
    nb.close()


def test_runs_without_cell_or_console_errors(quickstart):
    page = quickstart.page
    assert quickstart.state["unrun"] == 0, quickstart.state
    errors = page.evaluate("""() => Array.from(document.querySelectorAll(
        '[data-mime-type="application/vnd.jupyter.stderr"], .jp-OutputArea-output [data-wb-error]'
        )).map(e => e.textContent.slice(0, 300))""")
    tracebacks = page.evaluate("""() => Array.from(document.querySelectorAll(
        '.jp-RenderedText[data-mime-type="application/vnd.jupyter.error"]'
        )).map(e => e.textContent.slice(0, 300))""")
    assert tracebacks == [], tracebacks
    assert [e for e in errors if "Error" in e] == [], errors
    assert quickstart.console_errors == [], quickstart.console_errors
    print(f"quickstart opened and ran in {quickstart.seconds:.1f} s")


def test_no_maths_inside_views(quickstart):
    counts = quickstart.page.evaluate("""() => {
        const views = document.querySelectorAll('.wb-view, .wb-sw');
        let maths = 0;
        views.forEach(v => { maths += v.querySelectorAll('mjx-container, .MathJax').length; });
        return {views: views.length, maths: maths};
    }""")
    assert counts["views"] >= 3, counts
    assert counts["maths"] == 0, counts
