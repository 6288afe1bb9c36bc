"""Program-level access maps: for one launch, run on the interpreter, which elements of each
array every program id loads and stores, the lanes its masks switch off, and per access site
the fraction of lanes kept and the bytes used per 32-byte sector and 128-byte line.

``access_map(kernel, grid, *args, **kwargs)`` returns an :class:`AccessMap` (data:
``accesses``, ``sites``, ``programs``, ``states(...)``, ``program_map(...)``) that shows itself
as HTML: a table of the access sites, one picture per array of which program stores (else
loads) each element (the program ordering), and the arrays as one program sees them, with a
program-id slider. No GPU is needed. The model behind the coalescing figures is described in
:mod:`workbench.viz.access_data`.
"""
from __future__ import annotations

import html
import itertools
import json
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from .access_data import Access, build_accesses, cell_states, site_stats
from .layout_svg import grid_shape
from .svg_grid import GridPicture, render_html

#: arrays with more elements than this get no per-program picture (the table and the program
#: map still cover them)
MAX_SLIDER_CELLS = 16384
STATE_COLOURS = ["#4e79a7", "#f28e2b", "#b07aa1", "#f4a6a6"]
STATE_NAMES = ["loaded", "stored", "loaded and stored", "masked-off lane (no access)"]
_ids = itertools.count()


@dataclass
class AccessMap:
    """The accesses of one launch (see :func:`access_map`). ``accesses``: list of
    :class:`~workbench.viz.access_data.Access` (execution order); ``sites``: list of
    :class:`~workbench.viz.access_data.SiteStats`; ``programs``: the program ids run, in
    order; ``arrays``: name -> shape drawn (the numpy argument's shape, or (n,) for a strided
    view); ``grid``: the 3-D grid."""

    accesses: list
    sites: list
    programs: list
    arrays: dict
    grid: tuple
    notes: list = field(default_factory=list)

    def of_program(self, program) -> list[Access]:
        """The accesses of one program: a linear id (int) or an (x, y, z) tuple."""
        if isinstance(program, tuple):
            program = self.programs.index(tuple(program) + (0,) * (3 - len(program)))
        return [a for a in self.accesses if a.program == program]

    def states(self, program, array: str) -> np.ndarray:
        """Per element of ``array`` (its shape): 0 untouched, 1 loaded, 2 stored, 3 both, 4
        only masked-off lanes point at it, for one program (as drawn)."""
        shape = self.arrays[array]
        return cell_states(self.of_program(program), array, int(np.prod(shape))).reshape(shape)

    def program_map(self, array: str, kind: str = "store") -> np.ndarray:
        """Per element of ``array``: the linear id of the last program whose active lanes
        ``kind`` ("store" or "load") it, -1 for none. int64 array of the array's shape."""
        shape = self.arrays[array]
        out = np.full(int(np.prod(shape)), -1, np.int64)
        for a in self.accesses:
            if a.array == array and a.kind == kind:
                on = a.indices[a.mask]
                on = on[(on >= 0) & (on < out.size)]
                out[on] = a.program
        return out.reshape(shape)

    def _repr_html_(self) -> str:
        return self.html

    @property
    def html(self) -> str:
        """The whole view as one HTML fragment."""
        return render(self)


def _array_shapes(kernel, args, kwargs) -> dict:
    names = [p.name for p in kernel.params]
    given = dict(zip(names, args, strict=False))
    given.update(kwargs)
    out = {}
    for name, v in given.items():
        if isinstance(v, np.ndarray):
            out[name] = tuple(v.shape) if v.flags.c_contiguous and v.ndim <= 2 else (v.size,)
            if v.ndim == 0:
                out[name] = (1,)
    return out


def access_map(kernel, grid, *args, **kwargs) -> AccessMap:
    """Run ``kernel[grid](*args, **kwargs)`` on the interpreter and record its accesses.

    Args: a ``@jit`` kernel, its grid (int, tuple or callable, as a launch) and its arguments
        (numpy arrays for pointers; constexprs and options as keywords). The launch really
        runs: stored arrays are written. Loads and stores are recorded (atomics and
        asynchronous copies are not).
    Returns: an :class:`AccessMap`.
    Raises: what a launch raises (LaunchError, CompilationError, OutOfBoundsError).
    """
    from workbench.backends.interp.recorder import AccessRecorder
    rec = AccessRecorder()
    kernel.run_recorded(*args, grid=grid, recorder=rec, **kwargs)
    grid3 = tuple(rec.grid)
    accesses = build_accesses(rec.events, grid3)
    programs = [(x, y, z) for z in range(grid3[2]) for y in range(grid3[1])
                for x in range(grid3[0])]
    arrays = _array_shapes(kernel, args, kwargs)
    am = AccessMap(accesses, site_stats(accesses), programs, arrays, grid3)
    for a in accesses:
        if a.array in arrays:
            n = int(np.prod(arrays[a.array]))
            out = int(np.sum(~a.mask & ((a.indices < 0) | (a.indices >= n))))
            if out:
                am.notes.append(f"program {a.pid}, line {a.line}: {out} masked-off lane(s) "
                                f"point outside {a.array} (not drawn)")
    if len(am.notes) > 6:
        am.notes[6:] = [f"... and {len(am.notes) - 6} more such accesses"]
    return am


# ------------------------------------------------------------------------------ rendering
def _sites_table(am: AccessMap) -> str:
    pad = ' style="padding:1px 8px;text-align:left"'
    head = "".join(f"<th{pad}>{h}</th>" for h in (
        "access", "line", "array", "lanes kept", "bytes used / 32-B sector",
        "bytes used / 128-B line", "source"))
    rows = []
    for s in am.sites:
        cells = [s.kind, str(s.line), html.escape(str(s.array)),
                 f"{100 * s.keep_fraction:.1f}%",
                 f"{s.bytes_per_sector:.1f} ({100 * s.bytes_per_sector / 32:.0f}%)",
                 f"{s.bytes_per_line:.1f} ({100 * s.bytes_per_line / 128:.0f}%)",
                 f"<code>{html.escape(s.source)}</code>"]
        rows.append(f'<tr data-wb-site="{s.kind}:{s.line}:{html.escape(str(s.array))}">'
                    + "".join(f"<td{pad}>{c}</td>" for c in cells) + "</tr>")
    return ('<table class="wb-access-sites" style="border-collapse:collapse;font-size:12px">'
            f"<tr>{head}</tr>{''.join(rows)}</table>")


def _ticks(n: int, scale: int = 1) -> list:
    step = 1
    while n // step > 16:
        step *= 2
    return [(i, str(i * scale)) for i in range(0, n, step)]


def _picture_geometry(shape) -> tuple[int, int, list, list]:
    rows, cols = grid_shape(shape)
    if len(shape) == 1:
        return rows, cols, _ticks(rows, cols), _ticks(cols)
    return rows, cols, _ticks(rows), _ticks(cols)


def order_picture(am: AccessMap, array: str, kind: str = "store") -> GridPicture:
    """The program map of ``array`` as a picture: colour and label = the program id that
    ``kind``s each element (see :meth:`AccessMap.program_map`)."""
    pm = am.program_map(array, kind).reshape(-1)
    rows, cols, rt, ct = _picture_geometry(am.arrays[array])
    size = rows * cols
    flat = np.full(size, -1, np.int64)
    flat[: pm.size] = pm
    n = len(am.programs)
    palette = [f"hsl({round(360 * ((p * 0.618) % 1))},55%,{62 + 12 * (p % 2)}%)"
               for p in range(n)]
    labels = [str(p) if p >= 0 else "" for p in flat]
    pid_text = [str(am.programs[p]) if p >= 0 else "" for p in flat]
    pic = GridPicture(rows=rows, cols=cols, colour=flat, palette=palette, labels=labels,
                      fields={"program": flat, "pid (x, y, z)": pid_text},
                      title=f"{array}: which program {kind}s each element (colour and label ="
                            f" linear program id; hover for its (x, y, z))",
                      row_ticks=rt, col_ticks=ct, strip=len(am.arrays[array]) == 1)
    if n <= 256:  # one readable label per program, at the centre of its elements' box
        pic.labels = [""] * size
        grid = flat.reshape(rows, cols)
        for p in np.unique(flat[flat >= 0]).tolist():
            rr, cc = np.nonzero(grid == p)
            pic.overlays.append(((rr.min() + rr.max() + 1) / 2, (cc.min() + cc.max() + 1) / 2,
                                 str(p)))
    return pic


def _program_pictures(am: AccessMap) -> tuple[list, dict]:
    pics, data = [], {}
    for name, shape in am.arrays.items():
        numel = int(np.prod(shape))
        if numel > MAX_SLIDER_CELLS or not any(a.array == name for a in am.accesses):
            continue
        rows, cols, rt, ct = _picture_geometry(shape)
        states = [cell_states(am.of_program(p), name, numel) for p in range(len(am.programs))]
        colour = np.full(rows * cols, -1, np.int64)
        colour[:numel] = np.where(states[0] > 0, states[0] - 1, -1)
        pics.append(GridPicture(rows=rows, cols=cols, colour=colour, palette=STATE_COLOURS,
                                labels=[""] * (rows * cols), fields={}, title=name,
                                row_ticks=rt, col_ticks=ct, per_cell=True,
                                strip=len(shape) == 1))
        data[name] = [s.tolist() for s in states]
    return pics, data


def render(am: AccessMap) -> str:
    """The HTML of an access map (see the module docstring)."""
    vid = f"wb-access-{next(_ids)}"
    parts = [f'<div class="wb-access" id="{vid}" data-wb-kind="access-map" '
             f'style="font-family:sans-serif">',
             f'<div style="font-size:13px;margin:2px 0">access map of a launch over grid '
             f'{list(am.grid)} ({len(am.programs)} programs), run on the interpreter</div>',
             _sites_table(am)]
    stored = [n for n in am.arrays if any(a.array == n and a.kind == "store"
                                          for a in am.accesses)]
    for name in stored:
        parts.append(render_html(order_picture(am, name), "program-map"))
    pics, data = _program_pictures(am)
    if pics:
        n = len(am.programs)
        parts.append(
            f'<div style="margin:8px 0 2px;font-size:13px">one program: '
            f'<input type="range" class="wb-pid" min="0" max="{n - 1}" value="0" '
            f'style="vertical-align:middle;width:40%"> <span class="wb-pid-text">program 0 '
            f"{am.programs[0]}</span></div>")
        legend = "".join(
            f'<span style="margin-right:12px"><span style="display:inline-block;width:12px;'
            f'height:12px;background:{c};border:1px solid #999;margin-right:4px"></span>'
            f"{t}</span>" for c, t in zip(STATE_COLOURS, STATE_NAMES, strict=True))
        parts.append(f'<div style="font-size:12px;display:flex;flex-wrap:wrap">{legend}</div>')
        parts.append('<div style="display:flex;flex-wrap:wrap;gap:10px">')
        for p in pics:
            parts.append(f'<div class="wb-access-array" data-wb-array="{html.escape(p.title)}"'
                         f' style="flex:1 1 360px;min-width:0">{render_html(p, "access")}'
                         f"</div>")
        parts.append("</div>")
        js = resources.files("workbench.viz").joinpath("static/access.js").read_text("utf-8")
        payload = {"programs": [list(p) for p in am.programs], "states": data,
                   "colours": STATE_COLOURS, "names": STATE_NAMES}
        blob = json.dumps(payload, separators=(",", ":")).replace("</", "<\\/")
        parts.append(f'<script type="application/json" class="wb-access-data">{blob}'
                     f"</script><script>{js}\nwbAccessInit(document.getElementById("
                     f"{json.dumps(vid)}));</script>")
    parts += [f'<div class="wb-note" style="font-size:12px;color:#444">{html.escape(t)}</div>'
              for t in am.notes]
    parts.append("</div>")
    return "".join(parts)
