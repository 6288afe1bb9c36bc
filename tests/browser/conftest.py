"""A real browser on a real JupyterLab: fixtures for the ``browser`` tests.

``jupyter_server`` starts JupyterLab headless on a free local port (no token, a temporary root
folder, its own temporary Jupyter config/data/runtime/IPython folders, so nothing in ``~`` is
read or written; the kernels it starts import this checkout's ``workbench``). ``browser`` is
Debian's system Chromium driven by playwright's sync API (``executable_path`` is
``shutil.which("chromium")``; playwright's own browser downloads are never used).
(``browser`` itself is in ``tests/conftest.py``: one playwright session serves every test
that drives Chromium, since playwright's sync API cannot run twice in one process.)
``run_notebook`` opens a notebook (in JupyterLab or Notebook 7), runs all its cells, waits until
the kernel is idle and every code cell has run, and returns a :class:`NotebookPage` (the page,
the console errors seen); ``start_notebook`` only starts it, so several run side by side.
``check_clean_page`` asserts what every notebook page must (no errors, no maths in a view).

Every test here skips with the reason when chromium, playwright or jupyterlab is missing.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.browser.scheduler import Scheduler, session_plan

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 90
RUN_TIMEOUT_S = 420   # the roofline notebook measures for about 3 minutes on a busy 2-core machine


def missing_tool() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if shutil.which("chromium") is None:
        return "needs Debian's chromium on PATH (apt-get install chromium; .ci/run does it)"
    for module, extra in (("playwright", "playwright"), ("jupyterlab", "jupyterlab")):
        try:
            __import__(module)
        except ImportError:
            return f"needs the {module} Python package (pip install {extra}; the dev extra)"
    return None


def pytest_collection_modifyitems(config, items):
    reason = missing_tool()
    here = Path(__file__).parent
    for it in items:
        if Path(str(it.fspath)).parent == here:
            it.add_marker(pytest.mark.browser)
            if reason:
                it.add_marker(pytest.mark.skip(reason=reason))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A running JupyterLab: its base URL and root folder (notebooks are copied there)."""

    url: str
    root: Path
    proc: subprocess.Popen

    def add_notebook(self, path: Path | str, name: str | None = None) -> str:
        """Copy a notebook into the server's root; returns its name there."""
        name = name or Path(path).name
        shutil.copy(path, self.root / name)
        return name

    def write_notebook(self, name: str, cells: list[str]) -> str:
        """Write a notebook of code ``cells`` (no outputs) into the root; returns its name."""
        import nbformat
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nbformat.write(nb, self.root / name)
        return name


def _wait_up(url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url + "api/status", timeout=2) as r:
                json.load(r)
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"jupyter lab did not answer within {START_TIMEOUT_S} s:\n"
                       f"{log.read_text()}")


# The CPU ceilings, measured briefly and cached in the server's cache folder, where
# ``ceilings("cpu")`` in the roofline and autotuning notebooks finds them, as a user's second
# run of those notebooks does: measuring them in full costs each notebook about 40 s of CPU,
# which these tests (about the views, not the roofs: tests/testing measures them) need not
# spend. A triad working set smaller than the notebooks' (48 MiB) gives a memory roof their
# triads stay under (a cache's bandwidth; the ceilings' notes say so), so no point lands
# above its roof and the roofline does not measure again.
_SEED_CEILINGS = """
from workbench.testing.ceilings import cache_path, machine_id, measure, save
c = measure("cpu", working_set_bytes=16 << 20, rounds=2, rep_ms=200, compute_ms=2)
save(c, cache_path("cpu", machine_id("cpu")))
print(c)
"""


@pytest.fixture(scope="session")
def jupyter_server():
    """JupyterLab on 127.0.0.1:<free port>, token off, all its folders temporary."""
    tmp = Path(tempfile.mkdtemp(prefix="wb-browser-"))
    root = tmp / "root"
    root.mkdir()
    env = dict(os.environ)
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython"),
                     ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                     ("WORKBENCH_CACHE_DIR", "cache")):
        (tmp / sub).mkdir()
        env[var] = str(tmp / sub)
    # every cell stays rendered (JupyterLab's windowing would hide cells scrolled out of view,
    # and the tests read every output)
    tracker = tmp / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    # no "Would you like to get notified about official Jupyter news?" toast over the page
    # (it covers the views in screenshots) and no update check
    news = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["HOME"] = str(tmp)          # nothing of the user's home is read by the server
    port = _free_port()
    log = tmp / "server.log"
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
           "--ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
           "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={root}",
           "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
           "--JupyterNotebookApp.expose_app_in_browser=True",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.extension_manager=readonly"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")     # CI containers run as root
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    # meanwhile the roofs the roofline and autotuning notebooks read (see _SEED_CEILINGS)
    seed = subprocess.Popen([sys.executable, "-c", _SEED_CEILINGS], env=env, cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_up(url, proc, log)
        seeded = seed.communicate(timeout=START_TIMEOUT_S)[0]
        assert seed.returncode == 0, seeded
        yield Server(url, root, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class NotebookPage:
    """An opened, fully run notebook: the playwright page and the console errors seen.
    ``close()`` closes the notebook (a JupyterLab page goes back to the pool for the next
    notebook; a Notebook 7 page is closed)."""

    page: object
    state: dict
    console_errors: list = field(default_factory=list)
    seconds: float = 0.0
    release: object = None

    def close(self) -> None:
        """Close the notebook; the page must not be used afterwards."""
        if self.release is not None:
            self.release()
            self.release = None


# counts cells still queued or running and whether the kernel is idle (JupyterLab exposes its
# application as window.jupyterapp with --LabApp.expose_app_in_browser)
_STATE_JS = """() => {
  const app = window.jupyterapp; const w = app && app.shell.currentWidget;
  if (!w || !w.content || !w.sessionContext) return null;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  const cells = w.content.widgets.filter(c => c.model.type === 'code');
  const running = cells.filter(c => c.promptNode && c.promptNode.textContent.includes('*'));
  const unrun = cells.filter(c => c.model.executionCount === null);
  return {status: k ? k.status : 'none', running: running.length, unrun: unrun.length,
          cells: cells.length};
}"""


def _wait_idle(page, timeout_s: float) -> dict:
    """Wait until the kernel is idle and no cell is queued or running, twice in a row half a
    second apart (Run All stops at a failing cell, so cells may stay unrun: ``unrun``)."""
    deadline = time.monotonic() + timeout_s
    state = None
    quiet = 0
    while time.monotonic() < deadline:
        state = page.evaluate(_STATE_JS)
        quiet = quiet + 1 if state and state["status"] == "idle" and not state["running"] else 0
        if quiet >= 2:
            return state
        page.wait_for_timeout(500)
    raise AssertionError(f"the notebook did not finish within {timeout_s} s: {state}")


@dataclass
class Pending:
    """A notebook opened and told to Run All, still running: ``finish()`` waits for it."""

    page: object
    errors: list
    t0: float
    release: object = None

    def finish(self, timeout_s: float = RUN_TIMEOUT_S) -> NotebookPage:
        """Wait until the kernel is idle and no cell is queued or running."""
        state = _wait_idle(self.page, timeout_s)
        return NotebookPage(self.page, state, self.errors, time.monotonic() - self.t0,
                            self.release)


# the notebook `name` is the current widget of the page's app and its kernel is idle
_OPENED_JS = """(name) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.context && w.context.path === name && w.sessionContext &&
            w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle'; }"""

# close every document of the page's main area, unsaved changes dropped (no dialog)
_CLOSE_ALL_JS = """() => { const app = window.jupyterapp;
  for (const w of Array.from(app.shell.widgets('main'))) {
    if (w.context && w.context.model) w.context.model.dirty = false;
    w.dispose(); }
  return Array.from(app.shell.widgets('main')).filter(w => w.context).length; }"""


class _LabPages:
    """JupyterLab pages kept open between notebooks: loading JupyterLab's front end costs
    a page several seconds of CPU, so a page whose notebook was closed opens the next one
    (``docmanager:open``) instead of a new page loading the app again. A page holds one
    notebook at a time, so the tests' document-wide queries see only that notebook."""

    def __init__(self, browser, url: str):
        self.browser, self.url = browser, url
        self.free: list = []
        self.all: list = []
        self.errors: dict = {}      # page -> the list console errors go to now

    def _new(self, width: int, height: int, ui: str):
        page = self.browser.new_page(viewport={"width": width, "height": height})
        self.all.append(page)
        key = id(page)
        self.errors[key] = []
        page.on("console", lambda m: self.errors[key].append(m.text)
                if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors[key].append(f"page error: {e}"))
        return page

    def open(self, name: str, width: int, height: int, ui: str):
        """A page showing notebook ``name`` with its kernel idle, its console error list
        and the function that closes it."""
        if ui == "lab" and self.free:
            page = self.free.pop()
            self.errors[id(page)] = []
            page.set_viewport_size({"width": width, "height": height})
            page.evaluate("(name) => window.jupyterapp.commands.execute('docmanager:open', "
                          "{path: name, factory: 'Notebook'})", name)
        else:
            page = self._new(width, height, ui)
            # ?reset: a fresh workspace, so notebooks opened by earlier tests are not
            # restored as hidden tabs of this page
            where = "lab/tree" if ui == "lab" else "notebooks"
            page.goto(f"{self.url}{where}/{name}" + ("?reset" if ui == "lab" else ""))
        page.wait_for_function(_OPENED_JS, arg=name, timeout=START_TIMEOUT_S * 1000)
        return page, self.errors[id(page)], (lambda: self._release(page, ui))

    def _release(self, page, ui: str) -> None:
        if page.is_closed():
            return
        if ui != "lab":
            page.close()
            return
        left = page.evaluate(_CLOSE_ALL_JS)
        if left:
            page.close()
        else:
            self.free.append(page)

    def close(self) -> None:
        for p in self.all:
            if not p.is_closed():
                p.close()


@pytest.fixture(scope="session")
def start_notebook(jupyter_server, browser):
    """``start_notebook(name, width=1400, height=1000, ui="lab")``: open ``name`` (in the
    server's root) in JupyterLab (``ui="notebook"``: Notebook 7's notebook page), wait for its
    kernel, start Run All and return a :class:`Pending` at once, so that several notebooks'
    kernels run side by side. JupyterLab pages are reused once their notebook is closed
    (:meth:`NotebookPage.close`)."""
    pages = _LabPages(browser, jupyter_server.url)

    def start(name: str, width: int = 1400, height: int = 1000, ui: str = "lab") -> Pending:
        t0 = time.monotonic()
        page, errors, release = pages.open(name, width, height, ui)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        # Run All has queued the cells once one shows its prompt's star or a count
        page.wait_for_function(
            "() => { const w = window.jupyterapp.shell.currentWidget;"
            " return w.content.widgets.some(c => c.model.type === 'code' &&"
            " (c.model.executionCount !== null ||"
            "  (c.promptNode && c.promptNode.textContent.includes('*')))); }",
            timeout=START_TIMEOUT_S * 1000)
        return Pending(page, errors, t0, release)

    yield start
    pages.close()


# replace cell i's text as a student types it, then run cells i..j in order (each awaited)
_EDIT_RUN_JS = """async ([i, j, text]) => {
  const app = window.jupyterapp; const w = app.shell.currentWidget;
  w.content.widgets[i].model.sharedModel.setSource(text);
  for (let k = i; k <= j; k++) {
    w.content.activeCellIndex = k;
    await app.commands.execute('notebook:run-cell');
  }
}"""


def edit_and_run(nb: NotebookPage, first: int, last: int, text: str,
                 timeout_s: float = RUN_TIMEOUT_S) -> dict:
    """In the open notebook of ``nb``, set cell ``first``'s text to ``text`` and run cells
    ``first`` to ``last`` (indices as in the .ipynb file, markdown cells counted), as a
    student answering an exercise does; waits until the kernel is idle and returns the
    notebook's state (see ``_wait_idle``)."""
    nb.page.evaluate(_EDIT_RUN_JS, [first, last, text])
    return _wait_idle(nb.page, timeout_s)


@pytest.fixture(scope="session")
def run_notebook(start_notebook):
    """``run_notebook(name, width=1400, height=1000, ui="lab")``: :func:`start_notebook`, then
    wait until it has run; returns a :class:`NotebookPage`."""
    def run(name: str, width: int = 1400, height: int = 1000, ui: str = "lab") -> NotebookPage:
        return start_notebook(name, width, height, ui).finish()

    return run


@pytest.fixture(scope="session")
def notebooks(jupyter_server, start_notebook, request):
    """The session's :class:`~tests.browser.scheduler.Scheduler`: ``notebooks.run(name)``
    returns notebook ``name`` of a test module's ``NOTEBOOKS``, run to the end, while the next
    planned notebooks already run."""
    return Scheduler(jupyter_server, start_notebook, session_plan(request.session.items))


def shutdown_kernel(server: Server, name: str) -> None:
    """Shut down the kernel session of notebook ``name`` (its memory and CPU freed)."""
    with urllib.request.urlopen(server.url + "api/sessions", timeout=10) as r:
        sessions = json.load(r)
    for s in sessions:
        if s.get("path", "") == name:
            req = urllib.request.Request(server.url + f"api/sessions/{s['id']}",
                                         method="DELETE")
            urllib.request.urlopen(req, timeout=10).close()


# what a notebook page shows that a user would call broken, read from the page: tracebacks,
# stderr with an error, the workbench's error boxes, maths typeset inside a view, a news toast,
# views wider than their output area; and how many views and IR views there are
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
    overflow: Array.from(views).filter(v => { const a = v.closest('.jp-OutputArea-output');
        return a && v.getBoundingClientRect().right > a.getBoundingClientRect().right + 1; })
      .map(v => v.className + ' ' + Math.round(v.getBoundingClientRect().width) + ' px'),
    area: Math.round(Math.max(...Array.from(document.querySelectorAll('.jp-OutputArea-output'))
      .map(a => a.getBoundingClientRect().width))),
  };
}"""


def check_clean_page(nb: NotebookPage, label: str, known_errors: list | None = None) -> dict:
    """Assert that a run notebook page shows no problem of :data:`PROBLEMS_JS` and logged no
    console error beyond ``known_errors`` (the UI's own, seen on a notebook of ``1 + 1``);
    returns what was found."""
    found = nb.page.evaluate(PROBLEMS_JS)
    assert nb.state["unrun"] == 0, (label, nb.state)
    assert found["tracebacks"] == [], found["tracebacks"]
    assert [e for e in found["stderr"] if "Error" in e or "Traceback" in e] == [], \
        found["stderr"]
    assert found["wb_errors"] == [], found["wb_errors"]
    ours = [e for e in nb.console_errors if e not in (known_errors or [])]
    assert ours == [], nb.console_errors
    assert found["ir_views"] >= 1, f"{label} shows no IR view"
    assert found["maths"] == 0, found
    assert found["news"] == [], found["news"]
    assert found["overflow"] == [], (found["area"], found["overflow"])
    return found


def screenshot(page, locator, path) -> None:
    """Write ``locator``'s element, whole, as a PNG at ``path``. JupyterLab scrolls its
    notebook inside a panel, not the page, so playwright cannot scroll an element taller than
    the window into view and captures the app's menus and empty space instead: the window is
    made tall enough first (pictures whose box is a fraction of the window's height grow with
    it, so until the element fits), the element centred in it, and the size restored after."""
    size = page.viewport_size
    for _ in range(4):
        h = locator.evaluate("e => e.getBoundingClientRect().height")
        if h + 220 <= page.viewport_size["height"]:
            break
        page.set_viewport_size({"width": size["width"], "height": int(h) + 300})
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => "
                      "requestAnimationFrame(r)))")
    locator.evaluate("e => e.scrollIntoView({block: 'center'})")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    locator.screenshot(path=str(path))
    page.set_viewport_size(size)
