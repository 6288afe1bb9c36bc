"""Rooflines from live runs (Williams, Waterman, Patterson, "Roofline: an insightful visual
performance model for multicore architectures", CACM 52(4), 2009).

:func:`roofline_points` (no plotting library) places each :class:`~workbench.testing.work.Run`
against :class:`~workbench.testing.ceilings.Ceilings`: arithmetic intensity (FLOP/byte),
achieved FLOP/s, the attainable bound ``min(roof(dtype), intensity x bandwidth)``, the
fraction of that bound reached, which roof limits it, and whether it sits above its roof (by
more than ``tolerance``). A point above its roof means the FLOPs or bytes were counted wrong
(or the ceilings were measured on a busy machine, or the working set lived in a cache, which
the reason says when it fits in the last-level cache). :func:`roofline` draws them on log-log
axes with the measured roofs (solid) and datasheet roofs (dotted grey), and keeps everything
drawn in ``fig.workbench_data``.
"""
from __future__ import annotations

import math

from .figure_data import attach

DEFAULT_TOLERANCE = 0.10


def _as_runs(runs) -> list:
    if hasattr(runs, "runs") and callable(runs.runs):  # a SweepResult
        return runs.runs()
    if hasattr(runs, "seconds"):
        return [runs]
    return list(runs)


def roofline_points(runs, ceilings, tolerance: float = DEFAULT_TOLERANCE) -> list[dict]:
    """One dict per run: ``name``, ``dtype``, ``roof`` (the roof's FLOP/s), ``intensity``
    (FLOP/byte), ``flops_per_s``, ``bytes_per_s``, ``bound`` (attainable FLOP/s),
    ``fraction`` (achieved / bound; for a run without FLOPs, achieved bytes/s over the
    bandwidth), ``limiter`` (``"memory"`` or ``"compute"``), ``above_roof`` (bool: achieved
    > bound x (1 + tolerance)), ``reason`` (why it was flagged), ``drawn`` (False for runs
    that cannot sit on log axes: no FLOPs or no bytes), ``label``."""
    points = []
    for r in _as_runs(runs):
        roof = ceilings.roof(r.dtype)
        intensity = r.intensity
        achieved = r.flops_per_s
        bw = ceilings.bandwidth
        bound = min(roof, intensity * bw) if math.isfinite(intensity) else roof
        if r.flops > 0 and bound > 0:
            fraction = achieved / bound
        else:
            fraction = r.bytes_per_s / bw if bw else math.nan
        limiter = "memory" if intensity < roof / bw else "compute"
        above = fraction > 1.0 + tolerance
        reason = ""
        if above:
            reason = (f"{fraction:.2f}x its {limiter} roof: the FLOPs or bytes are probably "
                      "counted wrong (pass flops=/bytes=, or exact=True)")
            llc = getattr(ceilings, "llc_bytes", 0) or 0
            if limiter == "memory" and llc and r.bytes < llc:
                reason += (f"; or its {r.bytes / 2**20:.1f} MiB working set was served by the "
                           f"{llc / 2**20:.0f} MiB last-level cache, which the DRAM roof does "
                           "not bound")
        drawn = r.flops > 0 and r.bytes > 0 and r.seconds > 0
        label = (f"{r.name}\nAI {intensity:.3g} FLOP/B, {fraction:.0%} of bound"
                 if r.flops > 0 else f"{r.name}\n0 FLOP, {fraction:.0%} of bandwidth")
        points.append({"name": r.name, "dtype": r.dtype, "roof": roof, "intensity": intensity,
                       "flops_per_s": achieved, "bytes_per_s": r.bytes_per_s,
                       "bound": bound, "fraction": fraction, "limiter": limiter,
                       "above_roof": above, "reason": reason, "drawn": drawn,
                       "label": label, "seconds": r.seconds, "flops": r.flops,
                       "bytes": r.bytes})
    return points


def roofline_text(points, ceilings) -> str:
    """The figures of a roofline as text: one line per point."""
    lines = [f"roofs: {ceilings.bandwidth / 1e9:.2f} GB/s; "
             + ", ".join(f"{k} {v / 1e9:.2f} GFLOP/s" for k, v in ceilings.compute.items())]
    for p in points:
        flag = "  ABOVE ROOF: " + p["reason"] if p["above_roof"] else ""
        lines.append(f"{p['name']}: {p['seconds'] * 1e3:.4g} ms, {p['flops'] / 1e6:.4g} MFLOP, "
                     f"{p['bytes'] / 1e6:.4g} MB, AI {p['intensity']:.3g} FLOP/B, "
                     f"{p['flops_per_s'] / 1e9:.3g} GFLOP/s, {p['bytes_per_s'] / 1e9:.3g} GB/s, "
                     f"{p['fraction']:.0%} of the {p['limiter']} bound{flag}")
    return "\n".join(lines)


def roofline(runs, ceilings=None, *, ax=None, title: str | None = None,
             tolerance: float = DEFAULT_TOLERANCE, target: str | None = None):
    """A log-log roofline (matplotlib Figure) of ``runs`` (a Run, a list of Runs, or a
    SweepResult) against ``ceilings`` (default: :func:`workbench.testing.ceilings` of the
    first run's target, measured or cached). One labelled point per run (intensity and
    fraction of its bound in the label); points above their roof are drawn as red crosses and
    listed in ``fig.workbench_data["flagged"]``. ``fig.workbench_data`` also holds
    ``points`` (see :func:`roofline_points`), ``roofs`` (name -> FLOP/s), ``bandwidth``
    (bytes/s), ``datasheet``, ``ceilings``, ``xlim``/``ylim`` and ``text``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    runs = _as_runs(runs)
    if ceilings is None:
        from ..testing.ceilings import ceilings as measure
        ceilings = measure(target or (runs[0].target if runs else "cpu"))
    points = roofline_points(runs, ceilings, tolerance)
    if ax is None:
        fig = Figure(figsize=(8, 5.2))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    bw = ceilings.bandwidth
    roofs = dict(ceilings.compute)
    ds = getattr(ceilings, "datasheet", None) or {}
    drawn = [p for p in points if p["drawn"]]
    ridges = [v / bw for v in roofs.values()] or [1.0]
    xs = [p["intensity"] for p in drawn] + ridges
    x_lo = 10 ** math.floor(math.log10(min(xs) / 4))
    x_hi = 10 ** math.ceil(math.log10(max(xs) * 4))
    top = max(list(roofs.values()) + [p["flops_per_s"] for p in drawn])
    if ds:
        top = max([top] + list(ds["compute"].values()))
    y_lo = 10 ** math.floor(math.log10(min([bw * x_lo] + [p["flops_per_s"] for p in drawn])))
    y_hi = 10 ** math.ceil(math.log10(top * 2))
    ax.set_xscale("log")
    ax.set_yscale("log")
    colours = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    peak = max(roofs.values()) if roofs else bw * x_hi
    ax.plot([x_lo, peak / bw], [bw * x_lo, peak], color="#d62728", lw=2,
            label=f"memory {bw / 1e9:.3g} GB/s (measured)")
    for i, (name, v) in enumerate(sorted(roofs.items(), key=lambda kv: -kv[1])):
        ax.plot([v / bw, x_hi], [v, v], color=colours[i % len(colours)], lw=2,
                label=f"{name} {v / 1e9:.3g} GFLOP/s (measured)")
    if ds:
        dbw = ds["bandwidth"]
        dpeak = max(ds["compute"].values())
        ax.plot([x_lo, dpeak / dbw], [dbw * x_lo, dpeak], color="grey", ls=":", lw=1,
                label=f"datasheet: {ds.get('source', '')}")
        for name, v in ds["compute"].items():
            ax.plot([v / dbw, x_hi], [v, v], color="grey", ls=":", lw=1)
            ax.annotate(f"{name} (datasheet)", (x_hi, v), fontsize=7, color="grey",
                        ha="right", va="bottom")
    flagged = []
    for i, p in enumerate(drawn):
        if p["above_roof"]:
            flagged.append(p["name"])
            ax.plot([p["intensity"]], [p["flops_per_s"]], "x", color="red", ms=10, mew=2.5)
        else:
            ax.plot([p["intensity"]], [p["flops_per_s"]], "o", color="black", ms=5)
        label = p["label"] + ("\nABOVE ROOF: counting error?" if p["above_roof"] else "")
        ax.annotate(label, (p["intensity"], p["flops_per_s"]), fontsize=7,
                    xytext=(6, -4 - 10 * (i % 3)), textcoords="offset points",
                    color="red" if p["above_roof"] else "black")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("performance (FLOP/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title or f"roofline: {ceilings.machine} ({ceilings.target})", fontsize=9)
    return attach(fig, workbench_data={
        "points": points, "roofs": roofs, "bandwidth": bw, "datasheet": ds,
        "ceilings": ceilings, "flagged": flagged,
        "not_drawn": [p["name"] for p in points if not p["drawn"]],
        "xlim": (x_lo, x_hi), "ylim": (y_lo, y_hi), "text": roofline_text(points, ceilings)})
