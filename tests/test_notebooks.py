"""Execute every notebook in notebooks/ with nbclient (a python3 kernel through ipykernel,
cwd = the repository root, PYTHONPATH set so ``import workbench`` works) and fail on any cell
error; also check that committed notebooks carry no outputs. Where the browser tests can run
(chromium, playwright and jupyterlab present), they run the notebooks instead."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 300


def test_there_are_notebooks():
    assert any(p.name == "01_quickstart.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, cell.source[:60]


def _browser_runs_them() -> bool:
    """True when tests/browser can run here: it then opens and runs every notebook in
    JupyterLab (the same checks and more), so this nbclient run would only repeat it."""
    import importlib.util
    import shutil
    return shutil.which("chromium") is not None and all(
        importlib.util.find_spec(m) is not None for m in ("playwright", "jupyterlab"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path, monkeypatch):
    if _browser_runs_them() and os.environ.get("WORKBENCH_NBCLIENT") != "1":
        pytest.skip("tests/browser/test_notebooks_in_lab.py and test_quickstart.py run this "
                    "notebook in JupyterLab (WORKBENCH_NBCLIENT=1 runs it here too)")
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    pythonpath = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    monkeypatch.setenv("PYTHONPATH", pythonpath)  # the kernel process inherits the env
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}})
    try:
        client.execute()
    except CellExecutionError as e:  # the message holds the cell and its traceback
        pytest.fail(f"{path.name}: a cell raised:\n{e}", pytrace=False)
    # a %%tilekernel cell reports its errors as a box instead of raising: none may appear
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            html = out.get("data", {}).get("text/html", "")
            assert 'data-wb-error="1"' not in html and 'data-wb-usage="1"' not in html, (
                f"{path.name}: a cell showed an error:\n{cell.source[:80]}\n"
                f"{out['data'].get('text/plain', '')}")
    views = [o for c in nb.cells for o in c.get("outputs", [])
             if 'data-wb-view="ir"' in o.get("data", {}).get("text/html", "")]
    assert views, f"{path.name} shows no IR view"
