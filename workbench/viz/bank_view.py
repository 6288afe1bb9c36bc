"""Pictures of shared-memory bank use: rows of 32 banks, cells coloured by the lane hitting them.

Data comes from :func:`workbench.layouts.bank_conflicts` (CUDA C++ Programming Guide, Shared
Memory: 32 banks of 4 bytes). One warp-wide request is drawn: each row is a 128-byte line of
shared memory (32 words, one per bank) that the request touches; a cell is coloured by the
lane that reads or writes that word and labelled with its lane number(s); cells in a bank that
the same phase hits at several different words (a conflict) get a red border. The title gives
the wavefronts of the request and the ideal count. ``compare`` draws the same access on
another shared layout (swizzled or padded) side by side. The drawn data is in
``fig.workbench_data``.
"""
from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from workbench.layouts import bank_conflicts
from workbench.layouts.banks import NUM_BANKS

from .figure_data import attach

_EMPTY = np.array([0.95, 0.95, 0.95])


def bank_grid(report, request: int = 0) -> dict:
    """The data of one request as drawn.

    Returns a dict: ``lines`` (int array [n]: the 128-byte line index of each drawn row),
    ``lanes`` (object array [n, 32]: sorted list of lanes touching each word, [] when none),
    ``conflict`` (bool array [n, 32]: the word's bank is hit at another word in the same phase),
    ``wavefronts`` and ``ideal`` (ints).
    """
    req = report.requests[request]
    words = req.addresses // 4  # [32, wpl], -1 where none
    valid = req.addresses >= 0
    lines = np.unique(words[valid] // NUM_BANKS)
    row_of = {int(line): i for i, line in enumerate(lines)}
    lanes = np.empty((len(lines), NUM_BANKS), dtype=object)
    for idx in np.ndindex(lanes.shape):
        lanes[idx] = []
    conflict = np.zeros((len(lines), NUM_BANKS), bool)
    # per phase: the distinct words of each bank
    phase_words: dict[tuple[int, int], set] = {}
    for lane in range(words.shape[0]):
        for w in words[lane][valid[lane]]:
            w = int(w)
            cell = (row_of[w // NUM_BANKS], w % NUM_BANKS)
            if lane not in lanes[cell]:
                lanes[cell].append(lane)
            phase_words.setdefault((int(req.phase_of_lane[lane]), w % NUM_BANKS), set()).add(w)
    for (_phase, bank), ws in phase_words.items():
        if len(ws) > 1:
            for w in ws:
                conflict[row_of[w // NUM_BANKS], bank] = True
    return {"lines": lines, "lanes": lanes, "conflict": conflict,
            "wavefronts": req.wavefronts, "ideal": req.ideal, "warp": req.warp,
            "registers": req.registers}


def _draw(ax, report, request: int, title: str) -> dict:
    from matplotlib import colormaps
    grid = bank_grid(report, request)
    lanes = grid["lanes"]
    n = lanes.shape[0]
    cmap = colormaps["hsv"]
    rgb = np.tile(_EMPTY, (n, NUM_BANKS, 1))
    for (i, b), ls in np.ndenumerate(lanes):
        if ls:
            rgb[i, b] = np.array(cmap(ls[0] / 32)[:3]) * 0.55 + 0.45
    ax.imshow(rgb, interpolation="nearest", aspect="auto")
    fs = 6 if n <= 40 else 0
    for (i, b), ls in np.ndenumerate(lanes):
        if ls and fs:
            text = ",".join(str(x) for x in ls[:2]) + ("…" if len(ls) > 2 else "")
            ax.text(b, i, text, ha="center", va="center", fontsize=fs)
        if grid["conflict"][i, b]:
            ax.add_patch(Rectangle((b - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red",
                                   linewidth=1.5))
    ax.set_xticks(range(0, NUM_BANKS, 4))
    ax.set_xlabel("bank")
    step = max(1, n // 24)
    ax.set_yticks(range(0, n, step))
    ax.set_yticklabels([f"{int(grid['lines'][i]) * 128} B" for i in range(0, n, step)], fontsize=6)
    ax.tick_params(labelsize=7)
    deg = grid["wavefronts"] / grid["ideal"]
    ax.set_title(f"{title}\nrequest {request} (warp {grid['warp']}): {grid['wavefronts']} "
                 f"wavefront(s), ideal {grid['ideal']}"
                 + (f" — {deg:g}-way conflict" if deg > 1 else " — conflict-free"), fontsize=8)
    return grid


def banks_figure(shared, access_layout, shape: Sequence[int], dtype, compare=None,
                 request: int = 0, vector_bytes: int | None = None) -> Figure:
    """Draw which lane hits which bank for one warp-wide request.

    Args:
        shared: the shared layout (SwizzledSharedLayout, NVMMASharedLayout, PaddedRowMajor).
        access_layout: the distributed layout of the registers stored/loaded.
        shape: tile shape; dtype: Triton short name or numpy dtype.
        compare: optional second shared layout drawn side by side (e.g. a swizzle or padding).
        request: which request of the report to draw (warp-major, then register order).
        vector_bytes: bytes per lane per request (None: as :func:`bank_conflicts` chooses).
    Returns: a matplotlib Figure; ``fig.workbench_data`` is a dict with ``reports`` (the
        :class:`BankReport` of each panel), ``grids`` (:func:`bank_grid` of each panel) and
        ``request``.
    Raises: LayoutError from :func:`bank_conflicts`; IndexError for a request out of range.
    """
    layouts = [shared] + ([compare] if compare is not None else [])
    reports = [bank_conflicts(s, access_layout, shape, dtype, vector_bytes) for s in layouts]
    for rep in reports:
        if not 0 <= request < len(rep.requests):
            raise IndexError(f"request = {request} is outside 0..{len(rep.requests) - 1}")
    rows = max(len(bank_grid(r, request)["lines"]) for r in reports)
    fig = Figure(figsize=(8.5 * len(layouts), min(max(1.6 + 0.32 * rows, 2.6), 20)))
    FigureCanvasAgg(fig)
    grids = []
    for k, (lay, rep) in enumerate(zip(layouts, reports, strict=False)):
        ax = fig.add_subplot(1, len(layouts), k + 1)
        grids.append(_draw(ax, rep, request, "\n".join(textwrap.wrap(str(lay), 80))))
    fig.suptitle(f"{list(shape)} {dtype}, {reports[0].vector_bytes} B per lane; colour and "
                 f"label = lane, red border = bank conflict", fontsize=9)
    fig.tight_layout()
    return attach(fig, workbench_data={"reports": reports, "grids": grids, "request": request})


# ------------------------------------------------------------------------- SVG pictures
def word_wavefronts(report, request: int = 0) -> dict[int, int]:
    """Wavefront (0-based, in issue order) serving each 4-byte word of one request:
    ``{word address // 4: wavefront}``. Phases are served one after another; inside a phase a
    bank's distinct words take one wavefront each, in ascending address order (the order of
    words inside a bank is the model's choice: the hardware does not document it).
    Source: CUDA C++ Programming Guide, Shared Memory."""
    req = report.requests[request]
    words = req.addresses // 4
    out: dict[int, int] = {}
    start = 0
    for p in range(int(req.phase_of_lane.max()) + 1):
        sel = req.phase_of_lane == p
        pw = np.unique(words[sel][words[sel] >= 0])
        if pw.size == 0:
            continue
        depth = 0
        for b in range(NUM_BANKS):
            ws = pw[pw % NUM_BANKS == b]
            for k, w in enumerate(ws):
                out.setdefault(int(w), start + k)
            depth = max(depth, len(ws))
        start += depth
    return out


def _bank_picture(report, request: int, title: str):
    from .svg_grid import GridPicture
    grid = bank_grid(report, request)
    lanes, lines = grid["lanes"], grid["lines"]
    n = len(lines)
    wfs = word_wavefronts(report, request)
    size = n * NUM_BANKS
    colour = np.full(size, -1, np.int64)
    labels, lane_text = [""] * size, [""] * size
    addr = np.full(size, -1, np.int64)
    bank = np.full(size, -1, np.int64)
    wave = np.full(size, -1, np.int64)
    for (i, b), ls in np.ndenumerate(lanes):
        k = i * NUM_BANKS + b
        word = int(lines[i]) * NUM_BANKS + b
        addr[k], bank[k] = word * 4, b
        if ls:
            colour[k] = ls[0]
            labels[k] = ",".join(str(x) for x in ls[:2]) + ("+" if len(ls) > 2 else "")
            lane_text[k] = ",".join(str(x) for x in ls)
            wave[k] = wfs.get(word, -1)
    palette = [f"hsl({round(360 * ln / 32)},60%,72%)" for ln in range(32)]
    deg = grid["wavefronts"] / grid["ideal"]
    pic = GridPicture(
        rows=n, cols=NUM_BANKS, colour=colour, palette=palette, labels=labels,
        fields={"byte address": addr, "bank": bank, "lanes": lane_text, "wavefront": wave},
        marked=grid["conflict"].reshape(-1),
        title=(f"{title}: request {request} (warp {grid['warp']}), {grid['wavefronts']} "
               f"wavefront(s), ideal {grid['ideal']}"
               + (f" - {deg:g}-way conflict" if deg > 1 else " - conflict-free")),
        row_ticks=[(i, f"{int(lines[i]) * 128} B") for i in range(0, n, max(1, n // 24))],
        col_ticks=[(b, str(b)) for b in range(0, NUM_BANKS, 4)],
        legend=[("#d00000", "red border: bank conflict (another word of the same bank in the "
                 "same phase)"), (palette[0], "colour and label: the lane(s) touching the word")])
    return pic, grid


class BanksView:
    """A drawn bank picture: ``reports`` (one :class:`BankReport` per panel), ``grids``
    (:func:`bank_grid` per panel), ``pictures`` (:class:`~workbench.viz.svg_grid.GridPicture`
    per panel: rows = 128-byte lines, columns = banks), ``request`` and ``html``."""

    def __init__(self, reports, grids, pictures, request: int, html_text: str):
        self.reports, self.grids, self.pictures = reports, grids, pictures
        self.request, self.html = request, html_text

    @property
    def workbench_data(self) -> dict:
        """``reports``, ``grids`` and ``request`` (as on :func:`banks_figure`'s figure)."""
        return {"reports": self.reports, "grids": self.grids, "request": self.request}

    def _repr_html_(self) -> str:
        return self.html


def banks_picture(shared, access_layout, shape: Sequence[int], dtype, compare=None,
               request: int = 0, vector_bytes: int | None = None) -> BanksView:
    """Draw which lane hits which bank for one warp-wide request, as SVG in HTML.

    Arguments as :func:`banks_figure`. Each cell is a 4-byte word (row = 128-byte line of
    shared memory, column = bank); its tooltip gives the byte address, bank, lanes and the
    wavefront serving it (:func:`word_wavefronts`). Returns a :class:`BanksView`.
    Raises: LayoutError from :func:`bank_conflicts`; IndexError for a request out of range.
    """
    from .svg_grid import render_html
    layouts = [shared] + ([compare] if compare is not None else [])
    reports = [bank_conflicts(s, access_layout, shape, dtype, vector_bytes) for s in layouts]
    for rep in reports:
        if not 0 <= request < len(rep.requests):
            raise IndexError(f"request = {request} is outside 0..{len(rep.requests) - 1}")
    pics, grids, parts = [], [], []
    for lay, rep in zip(layouts, reports, strict=True):
        pic, grid = _bank_picture(rep, request, str(lay))
        pics.append(pic)
        grids.append(grid)
        parts.append(f'<div style="flex:1 1 600px;min-width:0">{render_html(pic, "banks")}'
                     f"</div>")
    head = (f'<div style="font:13px sans-serif">{list(shape)} {dtype}, '
            f"{reports[0].vector_bytes} B per lane</div>")
    body = f'<div style="display:flex;flex-wrap:wrap;gap:12px">{"".join(parts)}</div>'
    return BanksView(reports, grids, pics, request, head + body)
