"""Notebooks started ahead of the tests that read them: the browser tests' time goes to kernels
running cells and to Chromium rendering JupyterLab, so while one test reads its page the next
notebooks of the session are already running (up to ``ahead`` at once).

Each test module names the notebooks it opens, in the order it reads them, in a module-level
``NOTEBOOKS`` list of :class:`Planned` (or a function of the module's selected pytest items
returning one); the session's plan is those lists in the order pytest
runs the modules (only the modules selected). ``Scheduler.run(name)`` waits for notebook
``name`` (starting it first if it was not started yet) and returns its
:class:`~tests.browser.conftest.NotebookPage`; closing that page starts the next planned
notebooks. ``WB_BROWSER_AHEAD`` sets ``ahead`` (default 3: on two cores three kernels keep
both busy while one page is read).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Planned:
    """A notebook a test opens: ``name`` in the server's root, ``source`` (a notebook file to
    copy, or the code cells of a scratch notebook), the UI (``"lab"`` or ``"notebook"``:
    Notebook 7) and the window size."""

    name: str
    source: Path | tuple
    ui: str = "lab"
    width: int = 1400
    height: int = 1000


@dataclass
class Scheduler:
    """Starts the planned notebooks, ``ahead`` at a time (see the module docstring)."""

    server: object
    start: object                      # conftest's start(name, width, height, ui) -> Pending
    plan: list
    ahead: int = field(default_factory=lambda: int(os.environ.get("WB_BROWSER_AHEAD", "3")))
    pending: dict = field(default_factory=dict)
    running: int = 0

    def _launch(self, p: Planned) -> None:
        if isinstance(p.source, Path):
            self.server.add_notebook(p.source, p.name)
        else:
            self.server.write_notebook(p.name, list(p.source))
        self.pending[p.name] = self.start(p.name, p.width, p.height, p.ui)
        self.running += 1

    def top_up(self) -> None:
        """Start planned notebooks, in plan order, while fewer than ``ahead`` are open."""
        for p in self.plan:
            if self.running >= self.ahead:
                return
            if p.name not in self.pending:
                self._launch(p)

    def run(self, name: str):
        """Notebook ``name`` of the plan, run to the end: its NotebookPage. Its ``close()``
        frees its slot for the next planned notebook."""
        planned = next((p for p in self.plan if p.name == name), None)
        assert planned is not None, f"{name} is in no test module's NOTEBOOKS"
        if name not in self.pending:
            self._launch(planned)
        self.top_up()
        nb = self.pending[name].finish()
        release = nb.release

        def done() -> None:
            if release is not None:
                release()
            self.running -= 1
            self.top_up()

        nb.release = done
        return nb


def session_plan(items) -> list:
    """The ``NOTEBOOKS`` of the browser-test modules of ``items`` (pytest's items, in run
    order; other test modules may have a ``NOTEBOOKS`` of their own, which is not a plan)."""
    plan, seen = [], set()
    here = os.path.dirname(os.path.abspath(__file__))
    for it in items:
        mod = getattr(it, "module", None)
        if mod is None or mod.__name__ in seen or \
                os.path.dirname(os.path.abspath(getattr(mod, "__file__", ""))) != here:
            continue
        seen.add(mod.__name__)
        planned = getattr(mod, "NOTEBOOKS", [])
        if callable(planned):          # a module whose notebooks follow its selected tests
            planned = planned([i for i in items if getattr(i, "module", None) is mod])
        plan += list(planned)
    names = [p.name for p in plan]
    assert len(names) == len(set(names)), f"two planned notebooks share a name: {names}"
    return plan
