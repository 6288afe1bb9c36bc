"""The ``--compare triton`` view: our stages and Triton 3.6's side by side (the IR panes of
:func:`workbench.viz.ir_view.render_stages`), under a table of the compared properties with
each difference marked."""
from __future__ import annotations

import re

from ..ir.core import Location
from .ir_html import NO_MATHS, esc, new_view_id
from .ir_view import render_stages

#: stages both compilers print, in compile order
SHARED_STAGES = ("ttir", "ttgir", "llir", "ptx")
DEFAULT_STAGES = ("ttgir", "ptx")

_LOC_DEF = re.compile(r'^(#loc\d*)\s*=\s*loc\((.*)\)\s*$')
_FILE_LOC = re.compile(r'^"([^"]*)":(\d+):(\d+)$')
_NAMED_LOC = re.compile(r'^"[^"]*"\((#loc\d*)\)$')
_LOC_USE = re.compile(r'loc\((#loc\d*)\)\s*$')


def triton_line_map(text: str, source_file: str) -> list:
    """Per line of Triton's printed MLIR, the source Location of its trailing ``loc(#locN)``
    (the ``#locN = loc(...)`` table at the end resolved through named locations), or None.
    Triton's locations name the copy of the kernel compiled by ``workbench.compare``; they
    are mapped to ``source_file`` (same line numbers)."""
    raw = {}
    for line in text.splitlines():
        m = _LOC_DEF.match(line.strip())
        if m:
            raw[m.group(1)] = m.group(2).strip()

    def resolve(name: str, depth: int = 0):
        body = raw.get(name)
        if body is None or depth > 8:
            return None
        m = _FILE_LOC.match(body)
        if m:
            return Location(source_file, int(m.group(2)), int(m.group(3)))
        m = _NAMED_LOC.match(body)
        return resolve(m.group(1), depth + 1) if m else None

    out = []
    for line in text.splitlines():
        m = _LOC_USE.search(line)
        out.append(resolve(m.group(1)) if m else None)
    return out


def _fmt(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items()) or "-"
    if isinstance(value, (list, tuple)):
        return "; ".join(map(str, value)) or "-"
    return str(value)


def differences_table(comparison) -> str:
    """HTML table: one row per compared property (agree / differ), then one row per
    difference with our value and Triton's."""
    of, tf = comparison.ours_facts, comparison.theirs_facts
    summary = [
        ("layout definitions", len(of.layouts), len(tf.layouts), "layouts"),
        ("layouts on ops", sum(map(len, of.op_layouts.values())),
         sum(map(len, tf.op_layouts.values())), "op_layouts"),
        ("convert_layout", of.converts, tf.converts, "converts"),
        ("shared bytes", comparison.ours_shared, comparison.theirs_shared, "shared"),
        ("bar.sync (ptx), no more than Triton's", of.ptx_barriers, tf.ptx_barriers,
         "barriers"),
        ("global ld/st widths", _fmt(dict(of.vectors)), _fmt(dict(tf.vectors)), "vectors"),
    ]
    shown = {prop: (str(ours), str(theirs)) for _, ours, theirs, prop in summary}
    rows = ['<tr><th>property</th><th>ours</th><th>Triton 3.6</th><th></th></tr>']
    for label, ours, theirs, prop in summary:
        ok = comparison.agree.get(prop, False)
        mark = ("<span style='color:#1a7f37'>agree</span>" if ok
                else "<b style='color:#cf222e'>differs</b>")
        rows.append(f"<tr data-prop='{prop}'><td>{esc(label)}</td><td>{esc(ours)}</td>"
                    f"<td>{esc(theirs)}</td><td>{mark}</td></tr>")
    for d in comparison.differences:
        if shown.get(d.prop) == (_fmt(d.ours), _fmt(d.theirs)):
            continue  # the property's own row already says it
        rows.append(f"<tr class='wb-diff' data-prop='{esc(d.prop)}'><td>\u2260 {esc(d.what)}"
                    f"</td><td><code>{esc(_fmt(d.ours))}</code></td><td><code>"
                    f"{esc(_fmt(d.theirs))}</code></td><td></td></tr>")
    return (f"<div class='{NO_MATHS}'><table class='wb-compare' style='border-collapse:"
            "collapse;font-size:12px;margin:4px 0'>" + "".join(rows) + "</table></div>")


def render_comparison(comparison, stages=None) -> str:
    """The whole ``--compare triton`` view: the differences table, then the source pane and
    for each of ``stages`` (default ttgir and ptx; any of ttir, ttgir, llir, ptx) our pane
    beside Triton's. Returns self-contained HTML."""
    wanted = [s for s in (stages or DEFAULT_STAGES) if s in SHARED_STAGES] or DEFAULT_STAGES
    ck = comparison.compiled
    src = getattr(ck, "src", None)
    source_file = getattr(src, "file", None) or ""
    maps = getattr(ck, "line_maps", None) or {}
    panes = []
    for s in wanted:
        if s in comparison.ours:
            panes.append((f"{s} (ours)", comparison.ours[s], maps.get(s) or []))
        if s in comparison.theirs:
            their_map = triton_line_map(comparison.theirs[s], source_file) if s != "ptx" else []
            panes.append((f"{s} (Triton)", comparison.theirs[s], their_map))
    n_diff = len(comparison.differences)
    title = (f"{comparison.kernel} \u2014 {comparison.target}, num_warps="
             f"{comparison.num_warps}: ours beside Triton 3.6 ("
             + (f"{n_diff} difference{'s' if n_diff != 1 else ''}" if n_diff else "all agree")
             + ")")
    uid = new_view_id()
    view = render_stages(panes, getattr(src, "text", ""), source_file or None,
                         getattr(src, "first_line", 1) or 1, title=title, view_id=uid)
    return differences_table(comparison) + _wide_panes(uid) + view


def _wide_panes(uid: str) -> str:
    """CSS for view ``uid``: the source pane takes a row of its own and each stage's two
    panes (ours, Triton's) share the next row, half the output width each, instead of five
    narrow panes side by side."""
    s = f"#{uid}"
    return (f"<style>{s} .wb-panes{{flex-wrap:wrap}} "
            f"{s} .wb-pane{{flex:1 1 calc(50% - 6px);max-width:none}} "
            f"{s} .wb-pane[data-stage=\"source\"]{{flex-basis:100%}}</style>")
