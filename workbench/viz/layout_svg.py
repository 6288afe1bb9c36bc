"""Layout pictures as inline SVG: which (warp, lane, register) holds each element of a tile.

The data comes from :func:`workbench.layouts.ownership` (the linear layouts code generation
uses). Cells are coloured by warp and labelled ``T<lane>:<reg>`` where the label is readable;
every cell's tooltip gives its index, thread, lane, warp and register. A 1-D tile is drawn as
a strip: rows of :data:`STRIP` elements with the index of each row's first element. Tiles of
rank > 2 stack their leading dims as rows. The picture is an HTML fragment
(:mod:`workbench.viz.svg_grid`): it scales to the output width, zooms and pans, and its legend
wraps.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.layouts import Ownership, ownership

from .svg_grid import GridPicture, render_html

#: elements per row of a 1-D strip
STRIP = 64
_TAB20 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
          "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"]


def warp_palette(num_warps: int) -> list[str]:
    """CSS colours for ``num_warps`` warps: tab20's colours, then evenly spaced hues."""
    if num_warps <= len(_TAB20):
        return _TAB20[:num_warps]
    return [f"hsl({round(360 * w / num_warps)},65%,60%)" for w in range(num_warps)]


def grid_shape(shape: Sequence[int]) -> tuple[int, int]:
    """(rows, cols) a tile of ``shape`` is drawn as: a 1-D tile of n elements as rows of
    ``min(n, STRIP)``; a 2-D tile as is; higher ranks with the leading dims stacked."""
    shape = tuple(int(s) for s in shape)
    if len(shape) == 1:
        cols = min(shape[0], STRIP)
        return -(-shape[0] // cols), cols
    if len(shape) == 0:
        return 1, 1
    return int(np.prod(shape[:-1])), shape[-1]


def _ticks(n: int, every: int, scale: int = 1) -> list:
    return [(i, str(i * scale)) for i in range(0, n, every)]


def _tick_step(n: int) -> int:
    step = 1
    while n // step > 16:
        step *= 2
    return step


@dataclass
class LayoutView:
    """A drawn layout. ``ownership``: the :class:`Ownership`; ``picture``: the
    :class:`GridPicture`; ``highlight``: bool array of the drawn grid (cells in colour);
    ``labels``: str array of the drawn grid (``T<lane>:<reg>``, "" where not shown in colour);
    ``html``: the HTML fragment. Shows itself in a notebook (``_repr_html_``)."""

    ownership: Ownership
    picture: GridPicture
    highlight: np.ndarray
    labels: np.ndarray
    html: str

    # the names the matplotlib figure used, so code reading either keeps working
    @property
    def workbench_data(self) -> Ownership:
        """The :class:`Ownership` (as on :func:`layout_figure`'s figure)."""
        return self.ownership

    @property
    def workbench_labels(self) -> np.ndarray:
        """The labels of the drawn grid (as on :func:`layout_figure`'s figure)."""
        return self.labels

    @property
    def workbench_highlight(self) -> np.ndarray:
        """The cells drawn in colour (as on :func:`layout_figure`'s figure)."""
        return self.highlight

    @property
    def cells(self) -> list[dict]:
        """Tooltip data of every element, row-major over the drawn grid: dicts with ``row``,
        ``col``, ``index`` (tensor coordinate, a tuple), ``thread`` (warp * 32 + lane), ``lane``,
        ``warp``, ``register``, ``copies``."""
        f = self.picture.fields
        shape = self.ownership.shape
        out = []
        for i in range(self.picture.rows * self.picture.cols):
            if i >= int(np.prod(shape)):
                break
            r, c = divmod(i, self.picture.cols)
            out.append({"row": r, "col": c,
                        "index": tuple(int(x) for x in np.unravel_index(i, shape)),
                        "thread": int(f["thread"][i]), "lane": int(f["lane"][i]),
                        "warp": int(f["warp"][i]), "register": int(f["register"][i]),
                        "copies": int(f["copies"][i])})
        return out

    def shown_labels(self, cell_px: float | None = None) -> np.ndarray:
        """Labels drawn at ``cell_px`` per cell (default: the natural size), "" where they do
        not fit (:data:`workbench.viz.svg_grid.MIN_FONT_PX`)."""
        p = self.picture
        return np.array(p.shown_labels(cell_px), dtype=object).reshape(p.rows, p.cols)

    def _repr_html_(self) -> str:
        return self.html


def _selection(warp: int | None, thread: int | None, nw: int) -> tuple[int | None, int | None]:
    """``(warp, lane)`` selected by the ``warp``/``thread`` arguments of :func:`layout_figure`
    (either may be None); raises ValueError when out of range."""
    if warp is not None and not 0 <= warp < nw:
        raise ValueError(f"warp = {warp} is outside 0..{nw - 1}")
    if thread is None:
        return warp, None
    sel_warp, sel_lane = (warp, thread) if warp is not None else divmod(thread, 32)
    if not 0 <= sel_lane < 32 or not 0 <= sel_warp < nw:
        raise ValueError(f"thread = {thread} is outside the layout's {nw} warps x 32 lanes")
    return sel_warp, sel_lane


def _flat(arr: np.ndarray, size: int) -> np.ndarray:
    out = np.full(size, -1, np.int64)
    out[: arr.size] = arr.reshape(-1)
    return out


def layout_picture(layout, shape: Sequence[int], warp: int | None = None,
                thread: int | None = None) -> LayoutView:
    """Draw which thread holds each element of a tile, as SVG in HTML.

    Args:
        layout: a distributed encoding (blocked, slice, nvidia_mma, dot_op, linear) or its
            Triton text.
        shape: tile shape (powers of two); 1-D tiles are drawn as strips of 64 elements.
        warp: show only this warp's elements in colour (others grey).
        thread: highlight one thread: a lane of ``warp`` when ``warp`` is given, else a CTA-wide
            thread id ``warp * 32 + lane``.
    Returns: a :class:`LayoutView` (data and HTML).
    Raises: LayoutError for a shared layout or a bad shape; ValueError for a warp or thread out
        of range.
    """
    if isinstance(layout, str):
        from workbench.layouts import parse
        layout = parse(layout)
    own = ownership(layout, shape)
    nw = own.num_warps
    sel_warp, sel_lane = _selection(warp, thread, nw)
    rows, cols = grid_shape(own.shape)
    size = rows * cols
    n = int(np.prod(own.shape))
    wf, lf, rf = (_flat(a, size) for a in (own.warp, own.lane, own.register))
    shown = np.zeros(size, bool)
    reg = rf.copy()
    if sel_lane is not None and sel_warp is not None:
        mine = np.zeros(own.shape, bool)
        for r_i, c in enumerate(own.thread_elements(sel_warp, sel_lane)):
            flat = int(np.ravel_multi_index(c, own.shape)) if own.shape else 0
            if not mine.reshape(-1)[flat]:
                reg[flat] = r_i
            mine[c] = True
        shown[:n] = mine.reshape(-1)
        lf = np.where(shown, sel_lane, lf)
    elif sel_warp is not None:
        shown[:n] = own.warp.reshape(-1) == sel_warp
    else:
        shown[:n] = True
    colour = np.where(shown, wf, -1)
    labels = [f"T{lf[i]}:{reg[i]}" if shown[i] else "" for i in range(size)]
    fields = {"thread": np.where(wf >= 0, wf * 32 + lf, -1), "warp": wf, "lane": lf,
              "register": reg, "copies": _flat(own.copies, size)}
    pic = GridPicture(rows=rows, cols=cols, colour=colour, palette=warp_palette(nw),
                      labels=labels, fields=fields, title=_title(layout, own, sel_warp,
                                                                 sel_lane))
    if len(own.shape) == 1:
        pic.strip = True
        pic.row_ticks = _ticks(rows, _tick_step(rows), cols)
        pic.col_ticks = _ticks(cols, 8)
    else:
        pic.row_ticks = _ticks(rows, _tick_step(rows))
        pic.col_ticks = _ticks(cols, _tick_step(cols))
    warps = range(nw) if sel_warp is None else [sel_warp]
    pic.legend = [(pic.palette[w], f"warp {w}") for w in warps]
    if int(own.copies.max()) > 1:
        pic.notes.append(f"elements are held by up to {int(own.copies.max())} threads or "
                         f"registers (broadcast): the tooltip gives the count, the label the "
                         f"lowest owner")
    return LayoutView(own, pic, shown.reshape(rows, cols),
                      np.array(labels, dtype=object).reshape(rows, cols),
                      render_html(pic, "layout"))


def _title(layout, own: Ownership, sel_warp, sel_lane) -> str:
    text = str(layout)
    if len(text) > 140:
        text = text[:137] + "..."
    title = f"{text} over {list(own.shape)}: colour = warp, label = T<lane>:<register>"
    if sel_lane is not None:
        title += f"; thread (warp {sel_warp}, lane {sel_lane})"
    elif sel_warp is not None:
        title += f"; warp {sel_warp}"
    return title
