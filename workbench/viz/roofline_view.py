"""A roofline as the notebook shows it: the matplotlib figure rendered as inline SVG whose
points carry a hover tooltip (kernel, configuration, time, FLOPs, bytes, arithmetic intensity,
percent of the roof), beside a table with one numbered row per point, so labels never overlap
on the plot (each point is marked only with its number).

:class:`RooflineView` wraps the :class:`matplotlib.figure.Figure` that
:func:`workbench.viz.roofline` draws; attribute access falls through to the figure
(``view.workbench_data``, ``view.axes``, ``view.savefig``), so code written for the figure
keeps working.
"""
from __future__ import annotations

import html
import io
import math
import re

POINT_GID = "wb-roofline-point-{}"
#: the SVG id of point n's number label
LABEL_GID = "wb-roofline-label-{}"


def _si(v: float, unit: str) -> str:
    if not math.isfinite(v):
        return f"{v} {unit}"
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {prefix}{unit}"
    return f"{v:.3g} {unit}"


def config_text(config: dict) -> str:
    """``{"BLOCK": 1024, "num_warps": 4}`` -> ``"BLOCK=1024, num_warps=4"`` ('' when empty)."""
    return ", ".join(f"{k}={v}" for k, v in (config or {}).items())


def point_tooltip(p: dict) -> str:
    """The hover text of one roofline point (a dict of :func:`roofline_points`): kernel,
    configuration, time (ms), FLOPs, bytes, intensity (FLOP/byte), achieved rate and percent of
    the roof that bounds it, and why it is flagged when it sits above that roof."""
    lines = [f"#{p['number']} {p['name']}"]
    if p.get("config"):
        lines.append(config_text(p["config"]))
    lines += [f"time {p['seconds'] * 1e3:.4g} ms",
              f"{_si(p['flops'], 'FLOP')}, {_si(p['bytes'], 'B')} moved",
              f"intensity {p['intensity']:.3g} FLOP/B",
              f"{_si(p['flops_per_s'], 'FLOP/s')}, {_si(p['bytes_per_s'], 'B/s')}",
              f"{p['fraction']:.0%} of the {p['limiter']} roof ({p['dtype']})"]
    if p["above_roof"]:
        lines.append("above its roof: " + p["reason"])
    return "\n".join(lines)


def _svg_with_tooltips(fig, points: list) -> str:
    """The figure as SVG text with a ``<title>`` (the browser's tooltip) inside each point's
    group (the groups are found by the gid :func:`roofline` set on each point's marker)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]                     # drop the XML prolog and doctype
    for p in points:
        gid = POINT_GID.format(p["number"])
        title = f"<title>{html.escape(point_tooltip(p))}</title>"
        m = re.search(rf'<g id="{re.escape(gid)}"[^>]*>', svg)
        if m is not None:
            svg = svg[:m.end()] + title + svg[m.end():]
    # scale with the output area instead of a fixed size in points
    return re.sub(r'<svg([^>]*?) width="[^"]+" height="[^"]+"',
                  r'<svg\1 style="width:100%;height:auto;max-width:760px"', svg, count=1)


TABLE_HEAD = ("#", "kernel", "configuration", "time (ms)", "FLOP", "bytes",
              "intensity (FLOP/B)", "achieved", "% of roof", "bound by")


def table_rows(points: list) -> list:
    """One tuple of strings per point, in the columns of :data:`TABLE_HEAD`."""
    rows = []
    for p in points:
        rate = (_si(p["flops_per_s"], "FLOP/s") if p["flops"] > 0
                else _si(p["bytes_per_s"], "B/s"))
        rows.append((str(p["number"]), p["name"], config_text(p.get("config") or {}),
                     f"{p['seconds'] * 1e3:.4g}", _si(p["flops"], ""), _si(p["bytes"], ""),
                     f"{p['intensity']:.3g}", rate, f"{p['fraction']:.0%}",
                     f"{p['limiter']} ({p['dtype']})" + (" - above!" if p["above_roof"] else "")))
    return rows


TABLE_STYLE = ("<style>.wb-roofline-table{font:12px/1.35 system-ui,sans-serif;"
               "border-collapse:collapse}.wb-roofline-table th,.wb-roofline-table td{"
               "padding:2px 6px;text-align:left;border-bottom:1px solid #ddd;"
               "white-space:nowrap}</style>")


class RooflineView:
    """The notebook view of a roofline (see the module docstring). ``figure``: the matplotlib
    Figure; ``points``: the dicts of :func:`roofline_points` (each with its ``number``);
    ``notes``: sentences about the roofs (e.g. that one was re-measured)."""

    def __init__(self, figure, points: list, notes: list):
        self.figure = figure
        self.points = points
        self.notes = notes

    def __getattr__(self, name):
        if name == "figure":               # not set yet (during unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.figure, name)

    def table_html(self) -> str:
        """The table of points as HTML (flagged rows in red, the reason in the row's title)."""
        head = "".join(f"<th>{html.escape(h)}</th>" for h in TABLE_HEAD)
        body = []
        for p, row in zip(self.points, table_rows(self.points), strict=True):
            style = ' style="color:#c00"' if p["above_roof"] else ""
            tip = html.escape(point_tooltip(p))
            cells = "".join(f"<td>{html.escape(c)}</td>" for c in row)
            body.append(f'<tr data-point="{p["number"]}" title="{tip}"{style}>{cells}</tr>')
        return (TABLE_STYLE + '<table class="wb-roofline-table">'
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")

    def _repr_html_(self) -> str:
        notes = "".join(f"<p style='font-size:12px;margin:2px 0'>{html.escape(n)}</p>"
                        for n in self.notes)
        flagged = "".join(
            "<p style='font-size:12px;color:#c00;margin:2px 0'>"
            f"#{p['number']} {html.escape(p['name'])} is above its roof: "
            f"{html.escape(p['reason'])}</p>" for p in self.points if p["above_roof"])
        svg = _svg_with_tooltips(self.figure, [p for p in self.points if p["drawn"]])
        return ('<div data-wb-view="roofline" class="tex2jax_ignore mathjax_ignore" '
                'style="display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start">'
                f'<div style="flex:1 1 420px;min-width:320px">{svg}</div>'
                # the table at its own width beside the plot, or below it when both do not fit
                f'<div style="flex:0 1 auto;max-width:100%;overflow-x:auto">{self.table_html()}'
                f"{notes}{flagged}</div></div>")

    def to_text(self) -> str:
        """The roofs and one line per point, as plain text."""
        return "\n".join([self.figure.workbench_data["text"]] + self.notes)

    def __repr__(self) -> str:
        return self.to_text()
