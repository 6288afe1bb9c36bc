"""The side-by-side IR view: the kernel's source and any stages, linked by source line.

``render_stages`` works on plain texts and line maps (testable without a compiler);
``render_compiled`` takes a compiled kernel (``.asm``, ``.line_maps``, ``.src``, ``.metadata``,
``.timings``); ``render_snapshots`` shows one stage pass by pass with diffs.

The HTML is self-contained (no CDN, no external CSS), every text escaped. Each line is a
``<div class="wb-ln">`` with ``data-line`` (its 1-based line in that pane) and, when it came
from a line of the kernel, ``data-src`` (that absolute source line number); lines of one source
line share a background colour in every pane. Debug parts (``loc(...)``, ``#locN = ...``,
``!dbg``, ``.loc``) are hidden behind a checkbox that works without scripts.
"""
from __future__ import annotations

from .ir_html import NO_MATHS, esc, line_html, link_script, new_view_id, pane_html, style_sheet
from .ir_lines import colour_map, source_line_of, split_debug
from .lexers import highlight_lines
from .snapshot_view import render_snapshots  # noqa: F401  (public: re-exported)

__all__ = ["render_stages", "render_compiled", "render_snapshots", "compile_report"]


def _source_pane(text: str, first_line: int, colours: dict, counts: dict) -> str:
    lines = text.splitlines()
    bodies = highlight_lines(lines, "source")
    out = []
    for i, body in enumerate(bodies):
        n = first_line + i
        per_stage = counts.get(n, {})
        title = ", ".join(f"{k}: {v}" for k, v in per_stage.items())
        title = f"line {n} -> {title}" if title else f"line {n}: no IR"
        out.append(line_html(n, body, src=n, colour=colours.get(n), title=title))
    return ('<div class="wb-pane" data-stage="source">'
            '<div class="wb-pane-head"><span class="wb-stage">source</span>'
            f'<span class="wb-count">{len(lines)} lines</span></div>'
            f'<div class="wb-code">{"".join(out)}</div></div>')


def render_stages(stages, source_text: str, source_file: str | None = None,
                  first_line: int = 1, *, title: str | None = None, report=None,
                  notes=(), view_id: str | None = None, max_lines: int = 6000) -> str:
    """HTML of the source pane plus one pane per stage, side by side.

    ``stages``: sequence of ``(name, text, line_map)``; ``line_map[i]`` is the Location (with
    ``.file``, ``.line``, ``.col``, optional ``.caller``) of line ``i`` of ``text`` or None
    (a short map is padded with None). ``source_text``: the kernel's source, whose first line
    is line ``first_line`` of ``source_file``; IR lines whose location (its root call site for
    inlined helpers) lies in that file and range are coloured and linked to that line; with
    ``source_file=None`` any file matches. ``report``: ``(label, value)`` pairs shown in a strip
    above the panes. ``notes``: short messages shown above the panes. ``view_id``: the element
    id (default: a fresh unique one). ``max_lines``: at most this many lines per pane (the
    rest is cut with a note; the full text stays in ``compiled.asm``). Returns a
    self-contained HTML string.
    """
    uid = new_view_id(view_id)
    n_src = len(source_text.splitlines())
    last = first_line + max(n_src, 1) - 1
    prepared = []
    counts: dict[int, dict[str, int]] = {}
    notes = list(notes)
    for name, text, line_map in stages:
        lines = text.splitlines()
        if len(lines) > max_lines:
            notes.append(f"{name}: showing the first {max_lines} of {len(lines)} lines")
            lines = lines[:max_lines]
        locs = list(line_map or [])[:len(lines)]
        locs += [None] * (len(lines) - len(locs))
        split = split_debug(name.split(" ", 1)[0], lines)  # "ttgir (Triton)" -> ttgir
        src_of = [source_line_of(loc, source_file, first_line, last) for loc in locs]
        for s, sl in zip(src_of, split, strict=False):
            if s is not None and not sl.debug:
                per = counts.setdefault(s, {})
                per[name] = per.get(name, 0) + 1
        prepared.append((name, split, locs, src_of))
    colours = colour_map(counts)
    parts = [f'<div class="wb-view {NO_MATHS}" id="{uid}" data-wb-view="ir">',
             style_sheet(uid, counts)]
    if title:
        parts.append(f'<div class="wb-title">{esc(title)}</div>')
    if report:
        items = "".join(f'<span class="wb-kv" data-key="{esc(k)}"><b>{esc(k)}</b>{esc(v)}</span>'
                        for k, v in report)
        parts.append(f'<div class="wb-report">{items}</div>')
    for note in notes:
        parts.append(f'<div class="wb-note">{esc(note)}</div>')
    parts.append(f'<input type="checkbox" class="wb-dbg-box" id="{uid}-dbg">'
                 f'<label class="wb-toggle" for="{uid}-dbg">show locations and debug info '
                 '(<code>loc(...)</code>, <code>#loc</code> tables, <code>!dbg</code>, '
                 '<code>.loc</code>)</label>')
    parts.append('<div class="wb-panes">')
    parts.append(_source_pane(source_text, first_line, colours, counts))
    for name, split, locs, src_of in prepared:
        parts.append(pane_html(name, split, locs, src_of, colours))
    parts.append("</div>")
    parts.append(link_script(uid))
    parts.append("</div>")
    return "".join(parts)


def _fmt_seconds(t) -> str:
    try:
        t = float(t)
    except (TypeError, ValueError):
        return str(t)
    return f"{t * 1e3:.1f} ms" if t < 10 else f"{t:.1f} s"


def compile_report(compiled) -> list[tuple[str, str]]:
    """``(label, value)`` pairs of what the compiler decided and how long it took: kernel
    name, target, num_warps, num_stages, shared memory (bytes), registers and spills (when
    ptxas ran), the resource checks (``extra["limits"]``: per resource "N of M unit", marked
    when over the device's limit), layouts declared in ttgir, compile times
    (``compiled.timings``: step -> s; its ``total`` entry, when present, is the compile
    time, else the steps are summed)."""
    md = getattr(compiled, "metadata", None)
    out: list[tuple[str, str]] = []
    for label, attr, unit in (("kernel", "name", ""), ("target", "target", ""),
                              ("num_warps", "num_warps", ""), ("num_stages", "num_stages", ""),
                              ("shared", "shared", " B"), ("registers", "n_regs", ""),
                              ("spills", "n_spills", "")):
        v = getattr(md, attr, None) if md is not None else None
        if v is not None:
            out.append((label, f"{v}{unit}"))
    for check in (getattr(compiled, "extra", None) or {}).get("limits") or ():
        over = check["need"] > check["allow"]
        out.append((check["resource"], f"{check['need']} of {check['allow']} {check['unit']}"
                    + (" \u2014 over the limit" if over else "")))
    asm = getattr(compiled, "asm", {}) or {}
    ttgir = asm.get("ttgir")
    if isinstance(ttgir, str):
        for line in ttgir.splitlines():
            if line.startswith("#") and " = #ttg." in line:
                alias, _, enc = line.partition(" = ")
                out.append((alias, enc))
    timings = getattr(compiled, "timings", None) or {}
    if isinstance(timings, dict) and timings:
        steps = {k: v for k, v in timings.items() if k != "total"}
        try:
            total = float(timings["total"]) if "total" in timings else \
                sum(float(v) for v in steps.values())
            out.append(("compile", _fmt_seconds(total)))
        except (TypeError, ValueError):
            pass
        out.append(("steps", ", ".join(f"{k} {_fmt_seconds(v)}" for k, v in steps.items())))
    return out


def _stage_names(compiled) -> list[str]:
    st = getattr(compiled, "stages", None)
    if isinstance(st, dict):
        names = list(st)
    elif st:
        names = [s if isinstance(s, str) else getattr(s, "name", str(s)) for s in st]
    else:
        names = list(getattr(compiled, "asm", {}) or {})
    asm = compiled.asm
    names += [k for k in asm if k not in names]
    return [n for n in names if n != "source"]


def pending_stages(compiled, stages=None) -> list[str]:
    """Stages of ``compiled`` not made yet (the CUDA backend's SASS until something reads it)
    that ``stages`` does not ask for: views leave them out instead of running the tool that
    makes them, and offer them to be made on request."""
    pending = getattr(getattr(compiled, "asm", None), "pending", None)
    if pending is None:
        return []
    if isinstance(stages, str):
        stages = [s.strip() for s in stages.split(",") if s.strip()]
    return [n for n in pending() if n not in (stages or ())]


def render_compiled(compiled, stages=None, *, view_id: str | None = None) -> str:
    """The side-by-side view of a compiled kernel: a compile-report strip, the source pane and
    the ``stages`` (a list or comma-separated string of stage names; default every text stage
    of ``compiled.asm`` after ``source``, in compile order). Binary stages (``cubin``) and
    stages this target did not produce are listed as notes instead of panes."""
    available = _stage_names(compiled)
    asm = compiled.asm
    if isinstance(stages, str):
        stages = [s for s in (x.strip() for x in stages.split(",")) if s]
    explicit = stages is not None
    lazy = pending_stages(compiled, stages)
    wanted = [s for s in (stages if explicit else available) if s != "source" and s not in lazy]
    md = getattr(compiled, "metadata", None)
    target = getattr(md, "target", "?")
    notes, panes = [f"{n}: not made yet (ask for it: stages='{n}')" for n in lazy], []
    maps = getattr(compiled, "line_maps", None) or {}
    for name in wanted:
        text = asm.get(name)
        if text is None:
            notes.append(f"no stage {name!r} for target {target}; this target produced: "
                         f"{', '.join(available)}")
        elif not isinstance(text, str):
            if explicit:
                notes.append(f"{name}: {len(text)} bytes of binary (not shown; see sass)")
        else:
            panes.append((name, text, maps.get(name) or []))
    src = getattr(compiled, "src", None)
    source_text = getattr(src, "text", None) or asm.get("source", "")
    source_file = getattr(src, "file", None)
    first = getattr(src, "first_line", 1) or 1
    name = getattr(src, "name", None) or getattr(md, "name", "kernel")
    from .shared_report import backend_notes, shared_access_table
    notes += backend_notes(compiled)
    over = getattr(compiled, "over_limit", None)
    if over is not None:
        notes.insert(0, f"cannot launch: {over.resource} {over.need} {over.unit}, the limit is "
                        f"{over.allow} {over.unit}. {over.hint}")
    view = render_stages(panes, source_text, source_file, first,
                         title=f"{name} \u2014 {target}", report=compile_report(compiled),
                         notes=notes, view_id=view_id)
    return view + shared_access_table(compiled)
