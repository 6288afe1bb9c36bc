"""Every notebook of notebooks/ opened in JupyterLab under Chromium and run as a user runs it
(Run All): no cell left unrun, no error output (tracebacks, stderr with an error, the
workbench's error boxes), no console error, no maths typeset inside a view, no JupyterLab
news toast; each notebook shows at least one IR view. Read from the page, not from files.

The quickstart is run by ``test_quickstart.py`` with the same checks; lesson 1 of the course
by ``test_course_lesson.py`` (the other lessons run under nbclient in ``tests/course``:
another 75 s here, too slow for the default run). Each notebook's kernel is shut down once
it is checked.
"""
from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [p for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
             if p.name != "01_quickstart.ipynb"]

PROBLEMS_JS = """() => {
  const text = (sel) => Array.from(document.querySelectorAll(sel))
      .map(e => e.textContent.slice(0, 400));
  const views = document.querySelectorAll('.wb-view, .wb-sw, .wb-grid, .wb-explorer, .wb-access');
  let maths = 0;
  views.forEach(v => { maths += v.querySelectorAll('mjx-container, .MathJax').length; });
  return {
    tracebacks: text('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"], '
                     + '.jp-RenderedText[data-mime-type="application/vnd.jupyter.error"]'),
    stderr: text('.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]'),
    wb_errors: text('.jp-OutputArea-output [data-wb-error="1"], '
                    + '.jp-OutputArea-output [data-wb-usage="1"]'),
    ir_views: document.querySelectorAll('[data-wb-view="ir"], .wb-sw').length,
    views: views.length, maths,
    news: text('.jp-toast-message, .Toastify__toast').filter(t => /news/i.test(t)),
    // views wider than their output area (they must fit it and scroll or zoom inside)
    overflow: Array.from(views).filter(v => { const a = v.closest('.jp-OutputArea-output');
        return a && v.getBoundingClientRect().right > a.getBoundingClientRect().right + 1; })
      .map(v => v.className + ' ' + Math.round(v.getBoundingClientRect().width) + ' px'),
    area: Math.round(Math.max(...Array.from(document.querySelectorAll('.jp-OutputArea-output'))
      .map(a => a.getBoundingClientRect().width))),
  };
}"""


def _shutdown(server, name: str) -> None:
    with urllib.request.urlopen(server.url + "api/sessions", timeout=10) as r:
        sessions = json.load(r)
    for s in sessions:
        if s.get("path", "").endswith(name):
            req = urllib.request.Request(server.url + f"api/sessions/{s['id']}",
                                         method="DELETE")
            urllib.request.urlopen(req, timeout=10).close()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_in_jupyterlab(path, jupyter_server, run_notebook):
    name = jupyter_server.add_notebook(path)
    # 1400 px window, side bar closed: output areas of 1220 px (every view must fit its area)
    nb = run_notebook(name, width=1400, height=1000)
    try:
        nb.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        nb.page.wait_for_timeout(300)
        found = nb.page.evaluate(PROBLEMS_JS)
        assert nb.state["unrun"] == 0, (path.name, nb.state)
        assert found["tracebacks"] == [], found["tracebacks"]
        assert [e for e in found["stderr"] if "Error" in e or "Traceback" in e] == [], \
            found["stderr"]
        assert found["wb_errors"] == [], found["wb_errors"]
        assert nb.console_errors == [], nb.console_errors
        assert found["ir_views"] >= 1, f"{path.name} shows no IR view"
        assert found["maths"] == 0, found
        assert found["news"] == [], found["news"]
        assert found["overflow"] == [], (found["area"], found["overflow"])
        print(f"{path.name}: opened and ran in JupyterLab in {nb.seconds:.1f} s "
              f"({nb.state['cells']} code cells, {found['views']} views, output area "
              f"{found['area']} px)")
    finally:
        nb.page.close()
        _shutdown(jupyter_server, name)
