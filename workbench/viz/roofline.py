"""Rooflines from live runs (Williams, Waterman, Patterson, "Roofline: an insightful visual
performance model for multicore architectures", CACM 52(4), 2009).

:func:`roofline_points` (no plotting library) places each :class:`~workbench.testing.work.Run`
against :class:`~workbench.testing.ceilings.Ceilings`: arithmetic intensity (FLOP/byte),
achieved FLOP/s, the attainable bound ``min(roof(dtype), intensity x bandwidth)``, the
fraction of that bound reached, which roof limits it, and whether it sits above its roof (by
more than ``tolerance``). A point above its roof means the FLOPs or bytes were counted wrong
(or the ceilings were measured on a busy machine, or the working set lived in a cache, which
the reason says when it fits in the last-level cache). :func:`roofline` draws them on log-log
axes with the measured roofs (solid) and datasheet roofs (dotted grey), each point marked by its
number only (the table beside the plot, and a hover tooltip, give its figures: see
:mod:`workbench.viz.roofline_view`), and keeps everything drawn in ``workbench_data``. When a
point lands above the roof of this machine, that roof is measured again first (a roof measured
while the machine was busy is low), and the view says so.
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
    that cannot sit on log axes: no FLOPs or no bytes), ``label``, ``number`` (1-based, as drawn
    and tabled), ``config`` (the run's meta-parameters)."""
    points = []
    for number, r in enumerate(_as_runs(runs), start=1):
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
                       "bytes": r.bytes, "number": number,
                       "config": dict(getattr(r, "config", None) or {})})
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


def _on_this_machine(ceilings) -> bool:
    from ..testing.ceilings import machine_id
    try:
        return ceilings.machine == machine_id(ceilings.target)
    except Exception:  # noqa: BLE001 - no GPU to name: not this machine's cuda ceilings
        return False


def default_remeasure(ceilings, points: list):
    """Re-measure the roofs that points landed above (see
    :func:`workbench.testing.ceilings.remeasure`) when the ceilings are this machine's;
    returns ``(ceilings, notes)``, unchanged with no notes otherwise."""
    if not _on_this_machine(ceilings):
        return ceilings, []
    from ..testing.ceilings import remeasure
    above = [p for p in points if p["above_roof"]]
    memory = any(p["limiter"] == "memory" for p in above)
    dtypes = sorted({p["dtype"] for p in above if p["limiter"] == "compute"})
    return remeasure(ceilings, memory=memory, dtypes=dtypes)


def _with_remeasured(runs, ceilings, tolerance, remeasure):
    """Points against ``ceilings``; when some are above their roof and ``remeasure`` is on,
    the roofs are measured again and the points recomputed, with a note naming the points
    that caused it."""
    points = roofline_points(runs, ceilings, tolerance)
    above = [p["name"] for p in points if p["above_roof"]]
    if not above or remeasure is False:
        return points, ceilings, []
    fn = default_remeasure if remeasure is True else remeasure
    try:
        ceilings, notes = fn(ceilings, points)
    except Exception as e:  # noqa: BLE001 - a failed re-measurement keeps the first roofs
        return points, ceilings, [f"the roofs could not be re-measured ({type(e).__name__}: "
                                  f"{str(e).splitlines()[0][:160]})"]
    if not notes:
        return points, ceilings, []
    points = roofline_points(runs, ceilings, tolerance)
    still = [p["name"] for p in points if p["above_roof"]]
    why = f"{', '.join(above)} landed above {'its' if len(above) == 1 else 'their'} roof"
    notes = [f"{why}, so the roofs were measured again: " + "; ".join(notes)]
    if still:
        notes.append(f"{', '.join(still)} still above the re-measured roof: the FLOPs or "
                     "bytes counted for it are probably wrong, or its data stayed in a cache")
    else:
        notes.append("every point is now under its roof: the first roof was measured while "
                     "the machine was busy")
    return points, ceilings, notes


def _limits(points, ceilings):
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
    return (x_lo, x_hi), (y_lo, y_hi)


def _draw_roofs(ax, ceilings, xlim) -> None:
    x_lo, x_hi = xlim
    bw = ceilings.bandwidth
    roofs = dict(ceilings.compute)
    ds = getattr(ceilings, "datasheet", None) or {}
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


# where a point's number may go, as offsets (points) of the label's lower-left corner from
# the point: right-up first, then round the point, then further out
_LABEL_SPOTS: list[tuple[float, float]] = [(5, 4), (5, -12), (-6, 4), (-6, -12), (5, 13),
                                            (5, -21), (-6, 13), (-6, -21)]
_LABEL_PT = 8.0          # font size of the numbers (points)


def _label_boxes(spot: tuple, text: str, at: tuple) -> tuple:
    """The box (x0, y0, x1, y1, in points) of ``text`` put at ``spot`` beside a point at
    ``at`` (points); left spots end at the offset rather than start there."""
    w, h = 0.62 * _LABEL_PT * len(text) + 1, _LABEL_PT
    dx, dy = spot
    x0 = at[0] + dx - (w if dx < 0 else 0)
    return (x0, at[1] + dy, x0 + w, at[1] + dy + h)


def _free_spot(text: str, at: tuple, taken: list) -> tuple:
    """The first spot of :data:`_LABEL_SPOTS` whose box overlaps none of ``taken``; if all
    do, further right in steps of the label's width (labels never overlap)."""
    def clear(b):
        return all(b[2] <= t[0] or t[2] <= b[0] or b[3] <= t[1] or t[3] <= b[1] for t in taken)
    for spot in _LABEL_SPOTS:
        if clear(_label_boxes(spot, text, at)):
            return spot
    k = 1
    while True:
        spot = (5 + k * (0.62 * _LABEL_PT * len(text) + 3), 4.0)
        if clear(_label_boxes(spot, text, at)):
            return spot
        k += 1


def _draw_points(ax, drawn: list) -> None:
    """Each point as a marker (red cross when above its roof) carrying the gid the SVG view
    hangs its tooltip on, and its number as the only label, placed where it overlaps no other
    number (call after the axes' limits are set: placement is in screen points)."""
    from .roofline_view import LABEL_GID, POINT_GID
    taken: list = []
    to_pt = 72.0 / ax.figure.dpi
    for p in drawn:
        above = p["above_roof"]
        (line,) = ax.plot([p["intensity"]], [p["flops_per_s"]], "x" if above else "o",
                          color="red" if above else "black", ms=10 if above else 6,
                          mew=2.5 if above else 1)
        line.set_gid(POINT_GID.format(p["number"]))
        x, y = ax.transData.transform((p["intensity"], p["flops_per_s"]))
        text = str(p["number"])
        spot = _free_spot(text, (x * to_pt, y * to_pt), taken)
        taken.append(_label_boxes(spot, text, (x * to_pt, y * to_pt)))
        ann = ax.annotate(text, (p["intensity"], p["flops_per_s"]), fontsize=_LABEL_PT,
                          xytext=spot, textcoords="offset points", ha="left", va="bottom",
                          color="red" if above else "black")
        if spot[0] < 0:
            ann.set_ha("right")
        ann.set_gid(LABEL_GID.format(p["number"]))


def roofline(runs, ceilings=None, *, ax=None, title: str | None = None,
             tolerance: float = DEFAULT_TOLERANCE, target: str | None = None,
             remeasure=True):
    """A log-log roofline of ``runs`` (a Run, a list of Runs, or a SweepResult) against
    ``ceilings`` (default: :func:`workbench.testing.ceilings` of the first run's target,
    measured or cached), as a :class:`~workbench.viz.roofline_view.RooflineView` (the
    notebook shows the plot as SVG with a tooltip per point and a numbered table beside it;
    the matplotlib Figure is ``view.figure`` and its attributes are the view's). Each point is
    marked with its number; points above their roof are red crosses, listed in
    ``workbench_data["flagged"]``. ``remeasure``: when a point lands above a roof of this
    machine, measure that roof again (best of the old and new figure) before judging it
    (``False``: never; a callable ``(ceilings, points) -> (ceilings, notes)``: instead of
    :func:`default_remeasure`); ``workbench_data["notes"]`` then says so. ``workbench_data``
    also holds ``points`` (see :func:`roofline_points`), ``roofs`` (name -> FLOP/s),
    ``bandwidth`` (bytes/s), ``datasheet``, ``ceilings``, ``xlim``/``ylim`` and ``text``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from .roofline_view import RooflineView

    runs = _as_runs(runs)
    if ceilings is None:
        from ..testing.ceilings import ceilings as measure
        ceilings = measure(target or (runs[0].target if runs else "cpu"))
    points, ceilings, notes = _with_remeasured(runs, ceilings, tolerance, remeasure)
    if ax is None:
        fig = Figure(figsize=(7, 4.6))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    drawn = [p for p in points if p["drawn"]]
    xlim, ylim = _limits(points, ceilings)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _draw_roofs(ax, ceilings, xlim)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    _draw_points(ax, drawn)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("performance (FLOP/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title or f"roofline: {ceilings.machine} ({ceilings.target})", fontsize=9)
    text = "\n".join([roofline_text(points, ceilings)] + notes)
    attach(fig, workbench_data={
        "points": points, "roofs": dict(ceilings.compute), "bandwidth": ceilings.bandwidth,
        "datasheet": getattr(ceilings, "datasheet", None) or {}, "ceilings": ceilings,
        "flagged": [p["name"] for p in drawn if p["above_roof"]],
        "not_drawn": [p["name"] for p in points if not p["drawn"]], "notes": notes,
        "xlim": xlim, "ylim": ylim, "text": text})
    return RooflineView(fig, points, notes)
