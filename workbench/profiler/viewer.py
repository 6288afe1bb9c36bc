"""Read and print what :func:`workbench.profiler.finalize` wrote (Triton's
``triton.profiler.viewer``: ``parse`` then ``print_tree``).

Derived metrics, from a frame's ``time (ns)``: ``time/ns``, ``time/us``, ``time/ms``,
``time/s`` (the mean per entry: total over ``count``), ``tflop<N>/s`` and ``gflop<N>/s``
(the frame's ``flops<N>`` over its total time), ``gbyte/s`` (``bytes`` over total time).
"""
from __future__ import annotations

import json
import re

_TIME = {"time/ns": 1.0, "time/us": 1e-3, "time/ms": 1e-6, "time/s": 1e-9}


def _derive(metrics: dict, name: str) -> float | None:
    ns, count = metrics.get("time (ns)", 0), max(metrics.get("count", 0), 1)
    if name in _TIME:
        return ns / count * _TIME[name]
    m = re.fullmatch(r"([tg])flop(\d+)/s", name)
    if m:
        work = metrics.get(f"flops{m.group(2)}")
        scale = 1e-12 if m.group(1) == "t" else 1e-9
        return None if work is None or not ns else work / (ns * 1e-9) * scale
    if name == "gbyte/s":
        b = metrics.get("bytes")
        return None if b is None or not ns else b / (ns * 1e-9) * 1e-9
    return metrics.get(name)


def parse(metric_names: list, filename: str):
    """``(tree, metrics)``: the frame tree of ``filename`` with ``metric_names`` computed
    into each frame's ``derived`` dict, and the names. Raises OSError/ValueError for a
    missing or malformed file."""
    with open(filename, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, list) or not data or "frame" not in data[0]:
        raise ValueError(f"{filename}: not a profile written by workbench.profiler")
    root = data[0]

    def walk(node):
        node["derived"] = {n: _derive(node["metrics"], n) for n in metric_names}
        for c in node["children"]:
            walk(c)
    walk(root)
    return root, list(metric_names)


def print_tree(tree, metrics) -> None:
    """Print each frame, indented by depth, with its metrics."""
    def show(node, depth):
        vals = ", ".join(f"{n}={v:.4g}" if isinstance(v, (int, float)) else f"{n}=-"
                         for n, v in node["derived"].items())
        print(f"{'  ' * depth}{node['frame']['name']}: {vals}")
        for c in node["children"]:
            show(c, depth + 1)
    show(tree, 0)
