"""Notebook cells as real files: each ``%%tilekernel`` cell's source is written to a
content-hashed file and compiled with that file name, so every Location names the cell's own
lines, ``linecache`` (and so error carets) finds them, and ``inspect.getsource`` works.
"""
from __future__ import annotations

import ast
import hashlib
import os
import tempfile
from pathlib import Path

from ..config import cache_dir


def cell_path(source: str, base: Path | None = None) -> Path:
    """``<cache>/cells/cell_<sha1[:12]>.py`` for a cell's source text."""
    digest = hashlib.sha1(source.encode("utf-8")).hexdigest()[:12]
    return (base or cache_dir()) / "cells" / f"cell_{digest}.py"


def write_cell(source: str, base: Path | None = None) -> str:
    """Write ``source`` to its content-hashed file (atomically; kept when already present
    with the same text) and return the path as a string."""
    path = cell_path(source, base)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if path.read_text(encoding="utf-8") == source:
            return str(path)
    except (OSError, UnicodeDecodeError):
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".cell_", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return str(path)


class CellNames:
    """Which notebook cell (execution count) each cell file and each IPython cell belongs to,
    so that errors and tables say ``In [12], line 5`` as IPython does, not the file's name.
    One instance per IPython shell (:func:`cell_names`)."""

    def __init__(self, shell=None):
        self.shell = shell
        self.counts: dict[str, int] = {}

    def remember(self, path: str, count: int | None) -> None:
        """``path`` (a ``%%tilekernel`` cell's file) holds the cell run as ``In [count]``."""
        if count is not None:
            self.counts[str(path)] = int(count)

    def __call__(self, file: str) -> str | None:
        """``"In [12]"`` for a cell's file (ours, or IPython's own cell files), else None."""
        n = self.counts.get(file)
        if n is None and self.shell is not None:
            n = getattr(getattr(self.shell, "compile", None), "_filename_map", {}).get(file)
        return f"In [{n}]" if n is not None else None


def current_cell_number(shell) -> int | None:
    """The number IPython shows for the cell running now (``In [n]``): the one its compiler
    gave the cell's code (``shell.compile._filename_map``, newest entry), which is also what
    its own tracebacks print; ``execution_count`` may already be one ahead while a cell runs
    (IPython 9 with ipykernel 7). None without a shell."""
    fmap = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if fmap:
        return int(list(fmap.values())[-1])
    count = getattr(shell, "execution_count", None)
    return int(count) if count is not None else None


def cell_names(shell) -> CellNames:
    """The :class:`CellNames` of ``shell`` (made on first use and registered with
    :func:`workbench.errors.add_file_namer`)."""
    names = getattr(shell, "_workbench_cell_names", None)
    if names is None:
        from ..errors import add_file_namer
        names = CellNames(shell)
        shell._workbench_cell_names = names
        add_file_namer(names)
    return names


def run_cell_source(source: str, path: str, namespace: dict) -> None:
    """Compile ``source`` with file name ``path`` and execute it in ``namespace`` (the user's
    namespace). Raises SyntaxError or whatever the cell raises."""
    code = compile(source, path, "exec")
    exec(code, namespace)  # noqa: S102 - running the user's own cell is the point


def defined_functions(source: str) -> list[str]:
    """Names of the top-level functions a cell defines (``def``), in order."""
    tree = ast.parse(source)
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
