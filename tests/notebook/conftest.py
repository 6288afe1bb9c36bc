"""An IPython InteractiveShell with the workbench extension loaded, and a helper that runs a
cell and returns what it displayed (``text/html`` and ``text/plain`` per output)."""
from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output


class Shell:
    """Runs cells in one InteractiveShell; ``run(cell)`` -> (result, outputs)."""

    def __init__(self, ip):
        self.ip = ip

    @property
    def ns(self) -> dict:
        return self.ip.user_ns

    def run(self, cell: str):
        with capture_output() as cap:
            result = self.ip.run_cell(cell)
        outputs = [dict(o.data) for o in cap.outputs]
        return result, outputs, cap.stdout + cap.stderr

    @staticmethod
    def failed(result) -> bool:
        """The cell failed the way %%tilekernel fails it after showing an error box: one
        short CellFailed line, no traceback."""
        return cell_failed(result)

    def html(self, cell: str, fails: bool = False) -> str:
        """Run ``cell``; it must display, and succeed (or, with ``fails``, fail the cell as
        %%tilekernel does after showing an error); returns all its HTML joined."""
        result, outputs, _ = self.run(cell)
        if fails:
            assert self.failed(result), result.error_in_exec
        else:
            assert result.success, result.error_in_exec
        assert outputs, "the cell displayed nothing"
        return "".join(o.get("text/html", "") for o in outputs)


def cell_failed(result) -> bool:
    """The cell failed the way %%tilekernel fails it after showing an error box: one short
    CellFailed line, no traceback."""
    from workbench.notebook.magics import CellFailed
    return not result.success and isinstance(result.error_in_exec, CellFailed)


@pytest.fixture
def shell(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    ip = InteractiveShell.instance()
    if "workbench" not in ip.extension_manager.loaded:
        ip.run_line_magic("load_ext", "workbench")  # once per process: IPython remembers it
    from workbench.notebook import load_ipython_extension
    load_ipython_extension(ip)  # every test: puts jit and tl back after a reset
    yield Shell(ip)
    ip.reset(new_session=False)
