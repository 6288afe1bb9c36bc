"""Every notebook of notebooks/ opened under Chromium and run as a user runs it (Run All): no
cell left unrun, no error output (tracebacks, stderr with an error, the workbench's error
boxes), no console error, no maths typeset inside a view, no JupyterLab news toast, no view
wider than its output area; each notebook shows at least one IR view. Read from the page, not
from files (:func:`conftest.check_clean_page`).

The notebooks run in JupyterLab, except the layouts notebook, which runs in Notebook 7's
notebook page (``/notebooks/<name>``, the same server), where its stage view must link a
source line to every IR pane by hover and its layout explorer must redraw the picture the
controls describe. The notebooks run ahead of the test reading them
(``tests/browser/scheduler.py``); each kernel is shut down once its notebook is checked. The
quickstart is run by ``test_quickstart.py`` with the same checks; lesson 1 of the course by
``test_course_lesson.py``.
"""
from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pytest

from tests.browser.conftest import check_clean_page, shutdown_kernel
from tests.browser.scheduler import Planned
from tests.browser.test_layout_views import _WATCH, _check_picture_matches_text

ROOT = Path(__file__).resolve().parents[2]
PATHS = [p for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
         if p.name != "01_quickstart.ipynb"]
IN_NOTEBOOK7 = {"04_layouts.ipynb"}


def _ui(path: Path) -> str:
    return "notebook" if path.name in IN_NOTEBOOK7 else "lab"


def NOTEBOOKS(items) -> list:  # noqa: N802 - the name tests/browser/scheduler.py reads
    """The notebooks of the selected tests, in test order (1400 px windows: output areas of
    about 1220 px, which every view must fit), Notebook 7's plain one before the first that
    runs in Notebook 7."""
    out: list = []
    for it in items:
        path = it.callspec.params["path"]
        if _ui(path) == "notebook" and not any(p.name == "plain.ipynb" for p in out):
            out.append(Planned("plain.ipynb", ("1 + 1",), ui="notebook"))
        out.append(Planned(path.name, path, ui=_ui(path)))
    return out


@pytest.fixture(scope="module")
def notebook7_own_errors(notebooks, jupyter_server):
    """The console errors Notebook 7 logs by itself, for a notebook holding only ``1 + 1``
    (Notebook 7.6.5 on JupyterLab 4.6.6 logs one, "reading 'schema'"); only errors beyond
    these are the workbench's."""
    plain = notebooks.run("plain.ipynb")
    plain.close()
    shutdown_kernel(jupyter_server, "plain.ipynb")
    return plain.console_errors


@pytest.mark.parametrize("path", PATHS, ids=lambda p: f"{p.name}-{_ui(p)}")
def test_notebook_runs_in_the_browser(path, jupyter_server, notebooks, request,
                                      record_property):
    known = request.getfixturevalue("notebook7_own_errors") if _ui(path) == "notebook" else []
    nb = notebooks.run(path.name)
    try:
        if _ui(path) == "lab":
            nb.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
            nb.page.wait_for_function("() => window.jupyterapp.shell.leftCollapsed")
        found = check_clean_page(nb, path.name, known)
        if _ui(path) == "notebook":
            _check_linking_and_explorer(nb, record_property)
            check_clean_page(nb, path.name, known)   # nothing logged by hovering or sliding
        print(f"{path.name}: opened and ran in {_ui(path)} in {nb.seconds:.1f} s "
              f"({nb.state['cells']} code cells, {found['views']} views, output area "
              f"{found['area']} px)")
    finally:
        nb.close()
        shutdown_kernel(jupyter_server, path.name)


def _lit(page) -> dict:
    return page.evaluate("""() => { const out = {};
        document.querySelector('.wb-sw').querySelectorAll('.wb-pane').forEach(p => {
            if (!p.hidden) out[p.dataset.stage] = p.querySelectorAll('.wb-ln.wb-hl').length; });
        return out; }""")


# what the explorer's slider shows when no move was timed: the focused element (a notebook
# cell when the notebook took the keys), the slider's value, the redraw count
_DBG = """() => { const a = document.activeElement;
  const s = document.querySelector('.wb-explorer input[data-param="warpsPerCTA[0]"]');
  return {active: a ? `${a.tagName} ${a.className}` : null, value: s.value, max: s.max,
          drawn: document.querySelector('.wb-explorer').dataset.wbDrawn}; }"""


def _check_linking_and_explorer(nb, record_property) -> None:
    """Notebook 7: hover linking both ways in the first stage view, and the layout explorer's
    picture follows a slider within 100 ms and then shows what its controls say."""
    page = nb.page
    view = page.locator(".wb-sw").first
    view.scroll_into_view_if_needed()
    stages = page.evaluate("""() => Array.from(document.querySelector('.wb-sw')
        .querySelectorAll('.wb-pane')).filter(p => !p.hidden).map(p => p.dataset.stage)""")
    assert stages[0] == "source" and len(stages) >= 3, stages
    view.locator(".wb-pane[data-stage=source] .wb-ln[data-src]").filter(
        has_text="tl.load").first.hover()
    lit = _lit(page)
    assert all(lit[s] >= 1 for s in stages), lit
    page.mouse.move(0, 0)
    line = view.locator(".wb-pane[data-stage=ttgir] .wb-ln[data-src]").filter(
        has_text="tt.store").first
    line.scroll_into_view_if_needed()
    line.hover()
    lit = _lit(page)
    assert lit["source"] == 1 and all(lit[s] >= 1 for s in stages), lit
    page.mouse.move(0, 0)
    # the explorer: the picture is the layout the controls show, before and after key presses
    page.evaluate(_WATCH)
    _check_picture_matches_text(page)
    slider = page.locator('.wb-explorer input[data-param="warpsPerCTA[0]"]')
    slider.scroll_into_view_if_needed()
    slider.focus()
    for key in np.random.default_rng().permutation(["ArrowLeft", "ArrowRight", "ArrowRight"]):
        page.keyboard.press(str(key))
        page.wait_for_timeout(100)
        _check_picture_matches_text(page)
    lat = page.evaluate("() => window.wbLat")
    assert len(lat) >= 1, page.evaluate(_DBG)
    record_property("explorer_input_to_frame_ms_notebook7", lat)
    print(f"explorer in Notebook 7: input -> painted frame, median "
          f"{statistics.median(lat):.1f} ms over {len(lat)} moves")
    assert statistics.median(lat) < 100, lat
    page.wait_for_timeout(1500)        # Python's answer to the resting controls
    _check_picture_matches_text(page)
