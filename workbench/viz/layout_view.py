"""Pictures of thread-to-data layouts: each element coloured by warp, labelled ``T<lane>:<reg>``.

Data comes from :func:`workbench.layouts.ownership` (the same linear layouts code generation
uses); the figure keeps it in ``fig.workbench_data`` so tests and widgets can read what was drawn.
Built on :class:`matplotlib.figure.Figure` directly (no pyplot state), so it works with any
backend, including Agg in tests and the inline backend in notebooks.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from workbench.layouts import LayoutError, Ownership, ownership

from .figure_data import attach
from .layout_svg import _selection

#: Tiles with more cells than this are drawn as colour only (labels would be unreadable).
MAX_LABELLED_CELLS = 2048
_GREY = np.array([0.88, 0.88, 0.88])


def warp_colours(num_warps: int) -> np.ndarray:
    """RGB colours (float array ``[num_warps, 3]``) for warps: tab10, then tab20, then hsv."""
    from matplotlib import colormaps
    if num_warps <= 10:
        cmap, n = colormaps["tab10"], 10
    elif num_warps <= 20:
        cmap, n = colormaps["tab20"], 20
    else:
        cmap, n = colormaps["hsv"], num_warps
    return np.array([cmap(i / n if n > 20 else i)[:3] for i in range(num_warps)])


def _as_grid(arr: np.ndarray) -> np.ndarray:
    """View a tile as 2-D: rank 1 wraps in rows of 32, rank > 2 stacks the leading dims."""
    if arr.ndim == 1:
        n = arr.shape[0]
        cols = min(n, 32)
        return arr.reshape(-1, cols)
    if arr.ndim == 2:
        return arr
    return arr.reshape(-1, arr.shape[-1])


def layout_figure(layout, shape: Sequence[int], warp: int | None = None,
                  thread: int | None = None, per_thread: bool = False) -> Figure:
    """Draw which thread holds each element of a tile.

    Args:
        layout: a distributed encoding (blocked, slice, nvidia_mma, dot_op, linear).
        shape: tile shape (powers of two); rank-1 tiles wrap in rows of 32, rank > 2 stack the
            leading dims as rows.
        warp: show only this warp's elements (others grey).
        thread: highlight one thread: a lane of ``warp`` when ``warp`` is given, else a CTA-wide
            thread id ``warp * 32 + lane``.
        per_thread: the hardware view instead: one row per thread (of ``warp`` or all warps),
            one column per register, each cell labelled with the tensor coordinate it holds.
    Returns: a matplotlib Figure with ``fig.workbench_data`` (the :class:`Ownership`),
        ``fig.workbench_labels`` (str array of the drawn grid, "" where unlabelled or hidden)
        and ``fig.workbench_highlight`` (bool array of the drawn grid: cells shown in colour).
    Raises: LayoutError for a shared layout or a bad shape; ValueError for a warp/thread out of
        range.
    """
    own = ownership(layout, shape)
    nw = own.num_warps
    sel_warp, sel_lane = _selection(warp, thread, nw)
    if per_thread:
        return _hardware_view(own, sel_warp, sel_lane)

    colours = warp_colours(nw)
    wg, cg = _as_grid(own.warp), _as_grid(own.copies)
    shown = _shown(own, wg, sel_warp, sel_lane)
    rgb = np.where(shown[..., None], colours[wg], _GREY)
    rows, cols = wg.shape
    labelled = rows * cols <= MAX_LABELLED_CELLS
    labels = _cell_labels(own, shown, sel_warp, sel_lane, labelled)
    cell = 0.62 if labelled else max(0.08, min(0.3, 14.0 / max(rows, cols)))
    fig = Figure(figsize=(min(max(cols * cell + 1.6, 4), 26), min(max(rows * cell + 1.2, 2.5), 26)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.imshow(rgb, interpolation="nearest", aspect="equal")
    if labelled:
        _draw_labels(fig, ax, labels, cg)
    _ticks(ax, rows, cols)
    if len(own.shape) == 1:
        ax.set_yticklabels([str(int(t) * cols) for t in ax.get_yticks()])
    ax.set_xticks(np.arange(-0.5, cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, rows, 1), minor=True)
    if labelled:
        ax.grid(which="minor", color="white", linewidth=0.6)
    ax.tick_params(which="minor", length=0)
    ax.set_title(_title(layout, own, sel_warp, sel_lane, labelled), fontsize=9)
    _legend(ax, colours, sel_warp)
    fig.tight_layout()
    return attach(fig, workbench_data=own, workbench_labels=labels, workbench_highlight=shown)


def _shown(own: Ownership, wg: np.ndarray, sel_warp, sel_lane) -> np.ndarray:
    """Bool grid of the cells drawn in colour: all, the selected warp's, or every element the
    selected thread holds (copies of replicated elements included)."""
    if sel_lane is not None:
        mask = np.zeros(own.shape, bool)
        for c in own.thread_elements(sel_warp, sel_lane):
            mask[c] = True
        return _as_grid(mask)
    if sel_warp is not None:
        return wg == sel_warp
    return np.ones(wg.shape, bool)


def _cell_labels(own: Ownership, shown: np.ndarray, sel_warp, sel_lane,
                 labelled: bool) -> np.ndarray:
    """Object array of ``T<lane>:<register>`` per shown cell ("" elsewhere or when not
    ``labelled``); with a selected thread, its lane and its register for the cell."""
    lg, rg = _as_grid(own.lane), _as_grid(own.register)
    labels = np.full(shown.shape, "", dtype=object)
    reg_at: dict = {}
    if sel_lane is not None:
        for r, c in enumerate(own.thread_elements(sel_warp, sel_lane)):
            reg_at.setdefault(_grid_index(c, own.shape), r)
    if labelled:
        for i, j in np.ndindex(shown.shape):
            if not shown[i, j]:
                continue
            if sel_lane is not None:
                labels[i, j] = f"T{sel_lane}:{reg_at[(i, j)]}"
            else:
                labels[i, j] = f"T{lg[i, j]}:{rg[i, j]}"
    return labels


def _draw_labels(fig: Figure, ax, labels: np.ndarray, cg: np.ndarray) -> None:
    """Write each cell's label (and ``×copies`` on small tiles) in a font that fits a cell."""
    rows, cols = labels.shape
    w_in, h_in = fig.get_size_inches()
    cell_pt = min((w_in - 1.6) / cols, (h_in - 1.2) / rows) * 72
    fs = max(3.0, min(8.0, cell_pt / 3.4))
    for (i, j), text in np.ndenumerate(labels):
        if text:
            suffix = f"\n×{cg[i, j]}" if cg[i, j] > 1 and rows * cols <= 512 else ""
            ax.text(j, i, text + suffix, ha="center", va="center", fontsize=fs)


def _title(layout, own: Ownership, sel_warp, sel_lane, labelled: bool) -> str:
    """The figure title: layout, shape, copies, the selection and why labels are missing."""
    title = f"{type(layout).__name__} over {list(own.shape)}: colour = warp"
    if int(own.copies.max()) > 1:
        title += f", up to ×{int(own.copies.max())} copies"
    if sel_lane is not None:
        title += f"; thread (warp {sel_warp}, lane {sel_lane})"
    elif sel_warp is not None:
        title += f"; warp {sel_warp}"
    if not labelled:
        title += (f"\n(no T<lane>:<reg> labels above {MAX_LABELLED_CELLS} cells: pick a warp "
                  "or a thread, or draw a smaller tile)")
    return title


def _grid_index(coord, shape):
    if len(shape) == 1:
        return divmod(coord[0], min(shape[0], 32))
    if len(shape) == 2:
        return tuple(coord)
    flat_row = 0
    for d in range(len(shape) - 1):
        flat_row = flat_row * shape[d] + coord[d]
    return flat_row, coord[-1]


def _ticks(ax, rows, cols):
    step_r = max(1, rows // 16)
    step_c = max(1, cols // 16)
    ax.set_xticks(np.arange(0, cols, step_c))
    ax.set_yticks(np.arange(0, rows, step_r))
    ax.tick_params(labelsize=7)
    ax.xaxis.tick_top()


def _legend(ax, colours, sel_warp):
    from matplotlib.patches import Patch
    warps = range(len(colours)) if sel_warp is None else [sel_warp]
    if len(colours) > 16 and sel_warp is None:
        return
    handles = [Patch(color=colours[w], label=f"warp {w}") for w in warps]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
              frameon=False)


def _hardware_view(own, sel_warp, sel_lane) -> Figure:
    """Rows = threads, columns = registers, cells = tensor coordinate held."""
    coords = own.linear.coords()  # [W, L, R, rank]
    warps = range(own.num_warps) if sel_warp is None else [sel_warp]
    lanes = range(32) if sel_lane is None else [sel_lane]
    threads = [(w, ln) for w in warps for ln in lanes]
    R = coords.shape[2]
    if len(threads) * R > 16384:
        raise LayoutError(f"per-thread view of {len(threads)} threads x {R} registers is too "
                          f"large: pick a warp or a thread")
    colours = warp_colours(own.num_warps)
    rgb = np.array([[colours[w]] * R for w, _ in threads])
    labels = np.full((len(threads), R), "", dtype=object)
    for i, (w, ln) in enumerate(threads):
        for r in range(R):
            labels[i, r] = "(" + ",".join(str(int(x)) for x in coords[w, ln, r]) + ")"
    rows, cols = labels.shape
    labelled = rows * cols <= MAX_LABELLED_CELLS
    cell = 0.7 if labelled else 0.12
    fig = Figure(figsize=(min(max(cols * cell + 2, 4), 26),
                          min(max(rows * cell * 0.5 + 1.2, 2.5), 26)))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.imshow(rgb, interpolation="nearest", aspect="auto")
    if labelled:
        for (i, j), text in np.ndenumerate(labels):
            ax.text(j, i, text, ha="center", va="center", fontsize=6)
    step = max(1, rows // 32)
    ax.set_yticks(np.arange(0, rows, step))
    ax.set_yticklabels([f"w{threads[i][0]} T{threads[i][1]}" for i in range(0, rows, step)],
                       fontsize=6)
    ax.set_xticks(np.arange(cols))
    ax.set_xticklabels([f"r{j}" for j in range(cols)], fontsize=6)
    ax.xaxis.tick_top()
    ax.set_title(f"per-thread view: registers of each thread over {list(own.shape)}", fontsize=9)
    fig.tight_layout()
    return attach(fig, workbench_data=own, workbench_labels=labels,
                  workbench_highlight=np.ones(labels.shape, bool))
