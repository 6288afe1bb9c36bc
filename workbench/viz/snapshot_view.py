"""The pass-by-pass view: a stage's IR after each pass, as unified diffs against the previous
pass (like Compiler Explorer's opt-pipeline viewer), with passes that changed nothing folded.
"""
from __future__ import annotations

import difflib

from .ir_html import NO_MATHS, esc, line_html, new_view_id, style_sheet
from .ir_lines import split_debug
from .lexers import highlight_lines


def _clean(stage: str, text: str, strip_locs: bool) -> list[str]:
    lines = text.splitlines()
    if not strip_locs:
        return lines
    return [s.code for s in split_debug(stage, lines) if not s.debug]


def _full_pane(stage: str, lines: list[str]) -> str:
    bodies = highlight_lines(lines, stage)
    rows = "".join(line_html(i + 1, b) for i, b in enumerate(bodies))
    return f'<div class="wb-code">{rows}</div>'


def _diff_pane(stage: str, before: list[str], after: list[str], context: int):
    """(html, added, removed) of the unified diff ``before`` -> ``after``."""
    diff = list(difflib.unified_diff(before, after, lineterm="", n=context))[2:]
    kinds, texts = [], []
    for d in diff:
        if d.startswith("@@"):
            kinds.append("hunk")
            texts.append(d)
        else:
            kinds.append({"+": "add", "-": "del"}.get(d[:1], "ctx"))
            texts.append(d[1:])
    code = [t if k != "hunk" else "" for k, t in zip(kinds, texts, strict=False)]
    bodies = highlight_lines(code, stage)
    rows = []
    for i, (k, t, b) in enumerate(zip(kinds, texts, bodies, strict=False)):
        if k == "hunk":
            rows.append(line_html(i + 1, esc(t), extra_class="wb-diff-hunk", mark=""))
        else:
            mark = {"add": "+", "del": "-", "ctx": " "}[k]
            cls = {"add": "wb-diff-add", "del": "wb-diff-del", "ctx": ""}[k]
            rows.append(line_html(i + 1, b, extra_class=cls, mark=mark))
    added = kinds.count("add")
    removed = kinds.count("del")
    return f'<div class="wb-code">{"".join(rows)}</div>', added, removed


def render_snapshots(compiled, stage: str = "ttir", *, strip_locs: bool = True,
                     context: int = 3, view_id: str | None = None) -> str:
    """HTML of ``compiled.snapshots[stage]`` (a list of ``(pass_name, text)``, the IR after
    each pass in order): the first snapshot in full, then each pass as a unified diff
    (``context`` lines around each change, ``+``/``-`` in the gutter) against the one before.
    Passes that changed nothing are listed, folded, as "no change". With ``strip_locs`` the
    diffs ignore ``loc(...)`` suffixes and location tables (renumbering noise)."""
    uid = new_view_id(view_id)
    snaps = list((getattr(compiled, "snapshots", None) or {}).get(stage) or [])
    parts = [f'<div class="wb-view {NO_MATHS}" id="{uid}" data-wb-view="passes">', style_sheet(uid)]
    name = getattr(getattr(compiled, "src", None), "name", None) or "kernel"
    parts.append(f'<div class="wb-title">{esc(name)}: {esc(stage)} pass by pass '
                 f'({len(snaps)} snapshots)</div>')
    if not snaps:
        have = ", ".join(sorted((getattr(compiled, "snapshots", None) or {}))) or "none"
        parts.append(f'<div class="wb-note">no pass snapshots for stage {esc(stage)!s} '
                     f'(stages with snapshots: {esc(have)})</div></div>')
        return "".join(parts)
    prev = None
    for i, (pass_name, text) in enumerate(snaps):
        lines = _clean(stage, text, strip_locs)
        if prev is None:
            body, summary, is_open = _full_pane(stage, lines), f"{len(lines)} lines", True
            change = "full"
        else:
            body, added, removed = _diff_pane(stage, prev, lines, context)
            changed = bool(added or removed)
            summary = f"+{added} \u2212{removed}" if changed else "no change"
            is_open, change = changed, ("changed" if changed else "same")
        parts.append(f'<details class="wb-pass" data-pass="{esc(pass_name)}" '
                     f'data-index="{i}" data-change="{change}"{" open" if is_open else ""}>'
                     f'<summary><b>{i}. {esc(pass_name)}</b> \u2014 {esc(summary)}</summary>'
                     f"{body if change != 'same' else ''}</details>")
        prev = lines
    parts.append("</div>")
    return "".join(parts)
