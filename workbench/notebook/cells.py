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


def run_cell_source(source: str, path: str, namespace: dict) -> None:
    """Compile ``source`` with file name ``path`` and execute it in ``namespace`` (the user's
    namespace). Raises SyntaxError or whatever the cell raises."""
    code = compile(source, path, "exec")
    exec(code, namespace)  # noqa: S102 - running the user's own cell is the point


def defined_functions(source: str) -> list[str]:
    """Names of the top-level functions a cell defines (``def``), in order."""
    tree = ast.parse(source)
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
