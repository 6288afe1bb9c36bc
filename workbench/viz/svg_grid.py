"""A grid of coloured cells as inline SVG in HTML: the picture behind the layout, bank and
access-map views.

The SVG scales to the output width (``width: 100%`` up to its natural size); the box around it
scrolls (the plain-CSS fallback where scripts do not run, e.g. on GitHub); a small inline
script (``static/grid.js``) adds zoom (+/- buttons, ctrl + wheel), drag to pan, a hover tooltip
built from the per-cell data, and ``T<lane>:<reg>``-style labels drawn for the cells in view
whenever a cell is large enough to read them. Without the script, labels that fit at the
natural width are in the SVG and each colour run carries an SVG ``<title>``. The legend is HTML
(it wraps, it is never clipped).

Everything drawn is kept as data on :class:`GridPicture` so tests read what was drawn.
"""
from __future__ import annotations

import html
import itertools
import json
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

#: width in CSS px the picture is laid out for (a JupyterLab output area is about 1150 px)
NOMINAL_WIDTH = 1000
#: largest cell side in px (small tiles are not blown up)
MAX_CELL_PX = 44.0
#: smallest label font in px drawn in a cell (smaller text is unreadable)
MIN_FONT_PX = 9.0
#: SVG labels emitted for the no-script fallback at most (the script draws them on zoom)
MAX_STATIC_LABELS = 4096
_GREY = "#e0e0e0"
_ids = itertools.count()


def label_font(cell_px: float, label: str, longest: str = "") -> tuple[float, list[str]]:
    """Font size (px) and lines of ``label`` drawn in a square cell of ``cell_px``, sized for
    the picture's ``longest`` label (so all labels of a picture share one size and shape).

    Labels are split at their ``:`` into two lines when that gives the longest label a larger
    font. Text width is estimated as 0.6 em per character (digits of a sans-serif font).
    ``grid.js`` applies the same rule.
    """
    if not label:
        return 0.0, []
    ref = longest if len(longest) > len(label) else label
    one = min(cell_px * 0.42, cell_px * 0.9 / (0.6 * len(ref)))
    if ":" in ref and ":" in label:
        a, b = ref.split(":", 1)
        two = min(cell_px * 0.36, cell_px * 0.9 / (0.6 * max(len(a), len(b) + 1)))
        if two > one:
            x, y = label.split(":", 1)
            return two, [x, ":" + y]
    return one, [label]


@dataclass
class GridPicture:
    """One picture: ``rows`` x ``cols`` cells, row-major.

    ``colour``: int array [rows*cols], index into ``palette`` (-1: grey, nothing there).
    ``labels``: str per cell ("" for none). ``fields``: ordered mapping name -> int array
    [rows*cols] (``-1`` values are left out) or list of str ("" left out) shown in the
    tooltip. ``marked``: bool array
    [rows*cols] of cells drawn with a red border (a bank conflict, a masked-off lane).
    ``row_ticks`` / ``col_ticks``: (index, text) axis labels. ``legend``: (css colour, text).
    """

    rows: int
    cols: int
    colour: np.ndarray
    palette: list
    labels: list
    fields: dict = field(default_factory=dict)
    marked: np.ndarray | None = None
    title: str = ""
    row_ticks: list = field(default_factory=list)
    col_ticks: list = field(default_factory=list)
    legend: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    #: one rect per cell (True), colour runs merged (False), or per cell up to 4096 (None);
    #: per-cell rects are the cells' children of ``g.wb-cells`` in row-major order
    per_cell: bool | None = None
    #: texts drawn over the cells at a fixed size: (row, col, text) with fractional cell
    #: coordinates (e.g. one label per program region)
    overlays: list = field(default_factory=list)
    #: a 1-D array drawn as a strip: cell i is element i, and the tooltip says so
    strip: bool = False

    @property
    def longest(self) -> str:
        """The longest label (sets the font of all)."""
        return max(self.labels, key=len, default="")

    @property
    def cell_px(self) -> float:
        """Cell side in px at the natural width (:data:`NOMINAL_WIDTH` at most)."""
        return min(MAX_CELL_PX, NOMINAL_WIDTH / max(self.cols, 1))

    def shown_labels(self, cell_px: float | None = None) -> list[str]:
        """Labels readable at ``cell_px`` (default: the natural size): a cell's label, or ""
        where its font would be below :data:`MIN_FONT_PX`."""
        px = self.cell_px if cell_px is None else cell_px
        if label_font(px, self.longest)[0] < MIN_FONT_PX:
            return [""] * len(self.labels)
        return list(self.labels)

    def tooltip(self, i: int) -> str:
        """The tooltip text of cell ``i`` (row-major), as the script shows it."""
        r, c = divmod(i, self.cols)
        parts = [f"element {i}" if self.strip else f"({r}, {c})"]
        for k, v in self.fields.items():
            x = v[i]
            if isinstance(x, str):
                if x:
                    parts.append(f"{k} {x}")
            elif int(x) >= 0:
                parts.append(f"{k} {int(x)}")
        return ", ".join(parts)


#: margins (SVG units) for the row ticks (left) and column ticks (top)
MARGIN_LEFT, MARGIN_TOP, TICK_FONT = 40.0, 16.0, 10.0


def _svg(pic: GridPicture) -> str:
    cp = pic.cell_px
    ml, mt = MARGIN_LEFT, MARGIN_TOP
    w, h = pic.cols * cp + ml, pic.rows * cp + mt
    out = [f'<svg class="wb-grid-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:g} '
           f'{h:g}" width="{w:g}" style="width:100%;max-width:{w:g}px;height:auto;display:block"'
           f' preserveAspectRatio="xMinYMin meet" font-family="sans-serif">']
    for c, t in pic.col_ticks:
        out.append(f'<text class="wb-tick" x="{ml + c * cp + cp / 2:g}" y="{mt - 4:g}" '
                   f'font-size="{TICK_FONT:g}" text-anchor="middle" fill="#555">'
                   f'{html.escape(t)}</text>')
    for r, t in pic.row_ticks:
        out.append(f'<text class="wb-tick" x="{ml - 4:g}" y="{mt + r * cp + cp / 2:g}" '
                   f'font-size="{TICK_FONT:g}" text-anchor="end" dominant-baseline="central" '
                   f'fill="#555">{html.escape(t)}</text>')
    out.append(f'<g class="wb-cells" transform="translate({ml:g},{mt:g})">')
    col = pic.colour.reshape(pic.rows, pic.cols)
    per_cell = pic.per_cell if pic.per_cell is not None else pic.rows * pic.cols <= 4096
    stroke = ' stroke="#fff" stroke-width="0.6"' if cp >= 6 else ""
    for r in range(pic.rows):
        c = 0
        while c < pic.cols:
            k = int(col[r, c])
            e = c + 1
            if not per_cell:
                while e < pic.cols and int(col[r, e]) == k:
                    e += 1
            fill = pic.palette[k] if k >= 0 else _GREY
            tip = pic.tooltip(r * pic.cols + c) if per_cell else \
                f"row {r}, columns {c}..{e - 1}"
            out.append(f'<rect x="{c * cp:g}" y="{r * cp:g}" width="{(e - c) * cp:g}" '
                       f'height="{cp:g}" fill="{fill}"{stroke}><title>{html.escape(tip)}'
                       f'</title></rect>')
            c = e
    if pic.marked is not None:
        for k in np.flatnonzero(pic.marked).tolist():
            r, c = divmod(k, pic.cols)
            out.append(f'<rect x="{c * cp + 0.8:g}" y="{r * cp + 0.8:g}" width="{cp - 1.6:g}" '
                       f'height="{cp - 1.6:g}" fill="none" stroke="#d00000" stroke-width="1.6"'
                       f' pointer-events="none" class="wb-mark"/>')
    for r, c, t in pic.overlays:
        out.append(f'<text class="wb-overlay" x="{c * cp:g}" y="{r * cp:g}" font-size="14" '
                   f'font-weight="bold" text-anchor="middle" dominant-baseline="central" '
                   f'fill="#000" stroke="#fff" stroke-width="3" paint-order="stroke" '
                   f'pointer-events="none">{html.escape(t)}</text>')
    out.append('</g><g class="wb-lbls" pointer-events="none" '
               f'transform="translate({ml:g},{mt:g})">')
    shown = pic.shown_labels()
    if sum(1 for s in shown if s) <= MAX_STATIC_LABELS:
        for j, lb in enumerate(shown):
            if lb:
                out.append(_text(j, pic.cols, cp, lb, pic.longest))
    out.append("</g></svg>")
    return "".join(out)


def _text(i: int, cols: int, cp: float, label: str, longest: str) -> str:
    r, c = divmod(i, cols)
    fs, lines = label_font(cp, label, longest)
    x, y = c * cp + cp / 2, r * cp + cp / 2
    if len(lines) == 1:
        body = html.escape(lines[0])
        return (f'<text x="{x:g}" y="{y:g}" font-size="{fs:.1f}" text-anchor="middle" '
                f'dominant-baseline="central" data-i="{i}">{body}</text>')
    spans = "".join(f'<tspan x="{x:g}" dy="{d}">{html.escape(t)}</tspan>'
                    for t, d in zip(lines, ("-0.55em", "1.1em"), strict=True))
    return (f'<text x="{x:g}" y="{y:g}" font-size="{fs:.1f}" text-anchor="middle" '
            f'dominant-baseline="central" data-i="{i}">{spans}</text>')


def grid_script() -> str:
    """The text of ``static/grid.js`` (zoom, pan, tooltip and labels of every grid on a page)."""
    return resources.files("workbench.viz").joinpath("static/grid.js").read_text(encoding="utf-8")


def render_html(pic: GridPicture, kind: str = "grid") -> str:
    """The picture as one HTML fragment: title, zoom buttons, the scrolling box with the SVG,
    the legend, notes and the grid script. ``kind`` becomes ``data-wb-kind`` (tests find views
    by it). The per-cell data (labels, tooltip fields, ticks) is a JSON ``data-wb-grid``
    attribute the script reads."""
    vid = f"wb-grid-{next(_ids)}"
    data = {"rows": pic.rows, "cols": pic.cols, "labels": pic.labels, "minFont": MIN_FONT_PX,
            "cell": pic.cell_px, "longest": pic.longest, "ox": MARGIN_LEFT, "oy": MARGIN_TOP,
            "fields": {k: v if isinstance(v, list) else np.asarray(v).astype(int).tolist()
                       for k, v in pic.fields.items()},
            "maxStatic": MAX_STATIC_LABELS, "strip": pic.strip}
    legend = "".join(
        f'<span class="wb-leg" style="display:inline-flex;align-items:center;margin:0 10px 2px '
        f'0;white-space:nowrap"><span style="display:inline-block;width:12px;height:12px;'
        f'background:{c};margin-right:4px;border:1px solid #999"></span>{html.escape(t)}</span>'
        for c, t in pic.legend)
    notes = "".join(f'<div class="wb-note" style="font-size:12px;color:#444">{html.escape(n)}'
                    f"</div>" for n in pic.notes)
    btn = ('style="font:12px sans-serif;padding:0 6px;margin-right:3px;cursor:pointer"')
    return (
        f'<div class="wb-grid" id="{vid}" data-wb-kind="{html.escape(kind)}" '
        f'data-wb-grid="{html.escape(json.dumps(data, separators=(",", ":")))}" '
        f'style="font-family:sans-serif;max-width:100%">'
        f'<div class="wb-grid-title" style="font-size:13px;margin:2px 0">'
        f"{html.escape(pic.title)}</div>"
        f'<div class="wb-grid-bar" style="font-size:12px;color:#555;margin:2px 0">'
        f'<button class="wb-zin" {btn} title="zoom in">+</button>'
        f'<button class="wb-zout" {btn} title="zoom out">&minus;</button>'
        f'<button class="wb-zfit" {btn} title="fit to width">fit</button>'
        f"<span> drag to pan, ctrl+wheel to zoom, hover a cell for its owner</span></div>"
        f'<div class="wb-grid-box" style="overflow:auto;max-height:80vh;max-width:100%;'
        f'border:1px solid #ddd;position:relative">{_svg(pic)}</div>'
        f'<div class="wb-legend" style="display:flex;flex-wrap:wrap;font-size:12px;'
        f'margin:4px 0">{legend}</div>{notes}'
        f'<div class="wb-tip" style="position:fixed;display:none;pointer-events:none;'
        f'background:#ffffe8;border:1px solid #888;padding:2px 5px;font:12px monospace;'
        f'z-index:1000"></div>'
        f"<script>{grid_script()}\nwbGridInit(document.getElementById({json.dumps(vid)}));"
        f"</script></div>")
