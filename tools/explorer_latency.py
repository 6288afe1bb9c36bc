"""Measure the layout explorer's update latency in JupyterLab: slider input event -> the next
painted frame with the new picture.

Starts JupyterLab on a free local port (token auth) in a temporary directory, opens a notebook
whose one cell shows ``layout_explorer(shape=(64, 64))``, runs it in headless Chromium through
playwright, moves the sizePerThread[1] slider ten times and prints the median and maximum.
Needs jupyterlab, playwright and a ``chromium`` binary. Run from the repository root:
``python tools/explorer_latency.py [seconds between moves, default 0.3]``.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
MOVE = """async ([name, index]) => {
  const root = document.querySelector('.wb-explorer');
  const s = root.querySelector(`input[data-param="${name}"]`);
  const before = +root.dataset.wbDrawn;
  const t0 = performance.now();
  s.value = String(index); s.dispatchEvent(new Event('input'));
  await new Promise((r) => requestAnimationFrame(() => r()));
  return {ms: performance.now() - t0, drawn: +root.dataset.wbDrawn - before};
}"""


def _notebook(path: pathlib.Path) -> None:
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from workbench.viz import layout_explorer\nlayout_explorer(shape=(64, 64))")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(path))


def main(pause: float) -> None:
    from playwright.sync_api import sync_playwright
    work = pathlib.Path(tempfile.mkdtemp())
    _notebook(work / "explorer.ipynb")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    log = open(work / "server.log", "w")
    srv = subprocess.Popen([sys.executable, "-m", "jupyter", "lab", "--no-browser",
                            f"--port={port}", "--ServerApp.token=wb", "--ServerApp.ip=127.0.0.1",
                            "--allow-root", f"--ServerApp.root_dir={work}"], stdout=log,
                           stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        for _ in range(240):
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"),
                                        args=["--no-sandbox", "--disable-gpu",
                                              "--disable-dev-shm-usage"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/lab/tree/explorer.ipynb?token=wb")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90000)
            time.sleep(3)
            page.click(".jp-Cell .jp-InputArea-editor")
            page.keyboard.press("Shift+Enter")
            page.wait_for_selector(".wb-explorer canvas", timeout=120000)
            time.sleep(2)
            times = []
            for v in (0, 1, 3, 2, 4, 2, 1, 3, 0, 2):
                r = page.evaluate(MOVE, ["sizePerThread[1]", v])
                assert r["drawn"] == 1, r
                times.append(r["ms"])
                time.sleep(pause)
            browser.close()
        print(f"JupyterLab, 64x64 explorer: slider input -> picture painted: median "
              f"{statistics.median(times):.1f} ms, max {max(times):.1f} ms over {len(times)} "
              f"moves {pause} s apart")
    finally:
        srv.terminate()
        srv.wait(20)
        log.close()


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 0.3)
