"""Line plot of a :class:`~workbench.testing.sweep.SweepResult`: the metric (GB/s, GFLOP/s,
TFLOP/s or ms) against the swept size or configuration, one line per provider (the kernel and
each baseline), as Triton's ``perf_report`` draws its benchmarks."""
from __future__ import annotations

import math


def sweep_series(result) -> dict:
    """``{provider: (x positions, values)}``: sizes are their own x positions; configurations
    are numbered 0..n-1 (their labels become tick labels)."""
    xs = result.xs
    numeric = all(isinstance(x, (int, float)) for x in xs)
    pos = {repr(x): (x if numeric else i) for i, x in enumerate(xs)}
    out: dict = {}
    for r in result.rows:
        px, py = out.setdefault(r["provider"], ([], []))
        px.append(pos[repr(r["x"])])
        py.append(r["value"])
    return out


def sweep_figure(result, ax=None, logx: bool | None = None):
    """A matplotlib Figure of ``result`` (one line per provider; the kernel's line thicker).
    ``logx``: log-scale x (default: for numeric sizes spanning more than 10x).
    ``fig.workbench_data``: ``{"series": sweep_series(result), "metric", "x_name",
    "labels"}``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from ..testing.sweep import _label
    if ax is None:
        fig = Figure(figsize=(7, 4.2))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    series = sweep_series(result)
    xs = result.xs
    numeric = all(isinstance(x, (int, float)) for x in xs)
    for provider, (px, py) in series.items():
        main = provider == result.kernel_name
        ax.plot(px, [v if v is not None else math.nan for v in py], "o-",
                lw=2.5 if main else 1.5, label=provider)
    if logx is None:
        logx = numeric and len(xs) > 1 and max(xs) / max(min(xs), 1e-30) > 10
    if logx:
        ax.set_xscale("log", base=2)
    labels = [_label(x) for x in xs]
    if not numeric:
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
    ax.set_xlabel(result.x_name)
    ax.set_ylabel(result.metric)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{result.kernel_name}: {result.metric} by {result.x_name}", fontsize=9)
    fig.tight_layout()
    # the data the picture shows, kept on the Figure (matplotlib's stubs do not know it)
    data = {"series": series, "metric": result.metric, "x_name": result.x_name,
            "labels": labels}
    fig.workbench_data = data  # type: ignore[attr-defined]
    return fig
