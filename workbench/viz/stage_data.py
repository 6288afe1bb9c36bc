"""The stage view's data: a compiled kernel's source and stages as JSON-able lists, with each
line's source line, colour, highlighted HTML and instruction help key, and the per-source-line
cost table. The live widget (:mod:`workbench.viz.stage_widget`) draws it in the browser.

Per-source-line cost (``cost[src]``): the number of non-debug lines of each stage attributed to
the source line (instructions in ``ptx``/``sass``/``asm``, operations in ``ttir``/``ttgir``/
``llir``); ``shared``: bytes per thread that the PTX of that line moves through shared memory
(``ld.shared``/``st.shared``/``atom.shared`` by type and vector width, ``cp.async`` by its
size operand; each instruction counted once as written, not per loop iteration); ``barriers``:
``bar.sync``/``barrier.sync`` instructions in that line's PTX.

The SASS pane shows each instruction one space after its address (nvdisasm pads it to a fixed
column, which pushes the instruction out of a narrow pane); nothing else is rewritten.
"""
from __future__ import annotations

import re

from .ir_lines import colour_map, source_line_of, split_debug
from .isa_help import help_table, ptx_opcode
from .lexers import highlight_lines

_WIDTH = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
_SASS_PAD = re.compile(r"^\s+(/\*[0-9a-fA-F]+\*/)\s+")
_CP_SIZE = re.compile(r",\s*(0x[0-9a-fA-F]+|\d+)\s*(?:,|;)")


def shared_bytes(op: str, line: str) -> int:
    """Bytes per thread that one PTX instruction ``op`` (its opcode as written) moves through
    shared memory: element width x vector length for ``ld``/``st``/``atom``/``red`` in
    ``.shared``, the copy size for ``cp.async``; 0 for anything else. Raises nothing."""
    parts = op.split(".")
    if not any(p.startswith("shared") for p in parts[1:]):
        return 0
    if parts[0] == "cp" and "async" in parts:
        m = _CP_SIZE.search(line)
        return int(m.group(1), 0) if m else 0
    if parts[0] not in ("ld", "st", "atom", "red"):
        return 0
    vec = 4 if "v4" in parts else 2 if "v2" in parts else 1
    for p in reversed(parts):
        bits = p[1:]
        if p[:1] in "bsuf" and bits in _WIDTH:
            return _WIDTH[bits] * vec
    return 0


def _is_barrier(op: str) -> bool:
    return op.startswith(("bar.sync", "barrier.sync", "bar.arrive", "barrier.arrive")) or \
        op in ("bar", "barrier")


def _pane(name: str, text: str, line_map, source_file, first: int, last: int,
          max_lines: int, notes: list, kind: str | None = None) -> dict:
    """One pane's rows; ``kind`` (default ``name``) is the stage whose rules split, highlight
    and explain its lines (two panes of one kind, e.g. ``ptx A`` and ``ptx B``, in a diff)."""
    kind = kind or name
    lines = text.splitlines()
    if len(lines) > max_lines:
        notes.append(f"{name}: showing the first {max_lines} of {len(lines)} lines")
        lines = lines[:max_lines]
    locs = list(line_map or [])[:len(lines)]
    locs += [None] * (len(lines) - len(locs))
    split = split_debug(kind, lines)
    src_of = [None if s.debug else source_line_of(loc, source_file, first, last)
              for s, loc in zip(split, locs, strict=False)]
    keys, helps = help_table(kind, [s.code for s in split])
    shown = [s.code for s in split]
    if kind == "sass":   # nvdisasm pads each line to column 35: keep one space after the address
        shown = [_SASS_PAD.sub(r"\1 ", c) for c in shown]
    bodies = highlight_lines(shown, kind)
    rows = []
    for s, src, body, key in zip(split, src_of, bodies, keys, strict=False):
        rows.append([body, src, 1 if s.debug else 0, key if not s.debug else None, s.suffix])
    return {"stage": name, "kind": kind, "lines": rows, "help": helps,
            "_codes": [s.code for s in split], "_src": src_of, "_debug": [s.debug for s in split]}


def _costs(panes: list) -> dict:
    cost: dict[int, dict] = {}
    for p in panes:
        for code, src, dbg in zip(p["_codes"], p["_src"], p["_debug"], strict=False):
            if src is None or dbg or not code.strip():
                continue
            c = cost.setdefault(src, {})
            c[p["stage"]] = c.get(p["stage"], 0) + 1
            if p["stage"] == "ptx":     # shared bytes and barriers: the one pane named ptx
                op = ptx_opcode(code)
                if op:
                    c["shared"] = c.get("shared", 0) + shared_bytes(op, code)
                    c["barriers"] = c.get("barriers", 0) + int(_is_barrier(op))
    return cost


def stage_data(stages, source_text: str, source_file: str | None = None, first_line: int = 1,
               *, title: str = "", report=(), notes=(), max_lines: int = 6000) -> dict:
    """The view's data from plain texts: ``stages`` is a sequence of ``(name, text,
    line_map)`` as for :func:`workbench.viz.ir_view.render_stages`, or ``(name, text, line_map,
    kind)`` for a pane whose name is not its stage (``kind``). Returns a JSON-able dict:
    ``title``, ``report`` (label, value pairs), ``notes``, ``source`` (``first_line`` and
    ``lines``: highlighted HTML per line), ``panes`` (``stage``, ``lines``: ``[html, src,
    debug, help key, debug suffix]``, ``help``: opcode -> help), ``colours`` (source line ->
    ``#rrggbb``) and ``cost`` (source line -> {stage: lines, "shared": bytes, "barriers":
    n})."""
    n_src = len(source_text.splitlines())
    last = first_line + max(n_src, 1) - 1
    notes = list(notes)
    panes = [_pane(st[0], st[1], st[2], source_file, first_line, last, max_lines, notes,
                   st[3] if len(st) > 3 else None) for st in stages]
    cost = _costs(panes)
    colours = colour_map(cost)
    for p in panes:
        for k in ("_codes", "_src", "_debug"):
            del p[k]
    return {
        "title": title, "report": [list(r) for r in report], "notes": notes,
        "source": {"first_line": first_line,
                   "lines": highlight_lines(source_text.splitlines(), "source")},
        "panes": panes,
        "colours": {str(k): v for k, v in colours.items()},
        "cost": {str(k): v for k, v in cost.items()},
    }


def compiled_stage_data(compiled, stages=None) -> dict:
    """:func:`stage_data` of a compiled kernel (every text stage of ``compiled.asm`` after
    ``source``; binary stages are left out). ``stages`` (a list or a comma-separated string)
    chooses which panes start visible; every text stage is sent, so the viewer can show any
    of them, except a stage not made yet that ``stages`` does not name (the SASS, made by
    nvdisasm): it is listed under ``lazy`` instead, for the viewer to request. Adds
    ``visible`` (stage names) and ``lazy`` to the dict."""
    from .ir_view import _stage_names, compile_report, pending_stages
    from .shared_report import backend_notes
    asm = compiled.asm
    maps = getattr(compiled, "line_maps", None) or {}
    lazy = pending_stages(compiled, stages)
    names = [n for n in _stage_names(compiled) if n not in lazy and isinstance(asm.get(n), str)]
    if isinstance(stages, str):
        stages = [s.strip() for s in stages.split(",") if s.strip()]
    notes = list(backend_notes(compiled))
    md = getattr(compiled, "metadata", None)
    target = getattr(md, "target", "?")
    visible = [s for s in (stages or names) if s in names]
    for s in stages or ():
        if s not in names and s != "source":
            notes.append(f"no text stage {s!r} for target {target}; this target produced: "
                         f"{', '.join(names)}")
    src = getattr(compiled, "src", None)
    text = getattr(src, "text", None) or asm.get("source", "")
    name = getattr(src, "name", None) or getattr(md, "name", "kernel")
    data = stage_data([(n, asm[n], maps.get(n) or []) for n in names], text,
                      getattr(src, "file", None), getattr(src, "first_line", 1) or 1,
                      title=f"{name} \u2014 {target}", report=compile_report(compiled),
                      notes=notes)
    data["visible"] = visible
    data["lazy"] = lazy
    return data
