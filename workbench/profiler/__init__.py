"""A minimal stand-in for Triton's profiler, proton (``triton.profiler``): named scopes timed
by the host's clock, with the metrics a script attaches (``bytes``, ``flops16``, ...),
written on :func:`finalize` to ``<name>.hatchet`` (JSON, a tree of frames as proton writes)
and read back by :mod:`workbench.profiler.viewer`.

What proton does and this does not: no hooks into kernel launches (``hook="triton"`` is
accepted and records nothing by itself), no device timers: a scope measures host wall-clock
time from entry to exit. Launches on the CPU backend and the interpreter return when done,
so there the scope holds the kernels' time; on a GPU, synchronise inside the scope (e.g.
``torch.cuda.synchronize()``) or the time is the launch's alone. Sessions: one at a time.
"""
from __future__ import annotations

import contextlib
import json
import time

from .state import Session, current


def start(name: str = "proton", *, context: str | None = None, data: str | None = None,
          backend: str | None = None, mode: str | None = None, hook: str | None = None) -> int:
    """Start a session writing ``<name>.hatchet`` at :func:`finalize`; recording on. The
    other keywords are proton's and are accepted without effect. Returns the session id (0).
    Raises RuntimeError when a session is already running."""
    if current.session is not None:
        raise RuntimeError("a profiler session is already running: finalize() it first")
    current.session = Session(name)
    return 0


def activate(session: int | None = 0) -> None:
    """Resume recording scopes (after :func:`deactivate`)."""
    if current.session is not None:
        current.session.active = True


def deactivate(session: int | None = 0) -> None:
    """Stop recording scopes until :func:`activate`."""
    if current.session is not None:
        current.session.active = False


@contextlib.contextmanager
def scope(name: str, metrics: dict | None = None):
    """Time the enclosed code as the frame ``name`` (nested scopes nest) and add
    ``metrics`` (name -> number, e.g. ``{"bytes": ..., "flops16": ...}``) to it; ``count``
    counts the entries. Records nothing outside an active session."""
    s = current.session
    if s is None or not s.active:
        yield
        return
    node = s.enter(name)
    t0 = time.perf_counter_ns()
    try:
        yield
    finally:
        node["metrics"]["time (ns)"] += time.perf_counter_ns() - t0
        node["metrics"]["count"] += 1
        for k, v in (metrics or {}).items():
            node["metrics"][k] = node["metrics"].get(k, 0) + v
        s.leave()


def finalize(session: int | None = 0, output_format: str = "hatchet") -> str | None:
    """End the session and write ``<name>.hatchet`` (JSON: ``[root frame]``, each frame
    ``{"frame": {"name"}, "metrics", "children"}``, the root's metrics the sums of its
    children's). Returns the file's path, or None without a session. Raises ValueError for
    another ``output_format``."""
    s = current.session
    if s is None:
        return None
    if output_format != "hatchet":
        raise ValueError(f"output_format {output_format!r}: only 'hatchet' is written")
    current.session = None
    root = s.root
    for child in root["children"]:
        for k, v in child["metrics"].items():
            root["metrics"][k] = root["metrics"].get(k, 0) + v
    path = f"{s.name}.hatchet"
    with open(path, "w", encoding="utf-8") as f:
        json.dump([root], f, indent=1)
    return path


__all__ = ["activate", "deactivate", "finalize", "scope", "start"]
