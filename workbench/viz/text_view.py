"""Stages side by side in a terminal: one column per stage, lines coloured by source line.

Used by ``python -m workbench quickstart`` and anywhere without a notebook. Pure text (ANSI
colours optional); imports nothing but the standard library.
"""
from __future__ import annotations

import re
import shutil

_LOC_SUFFIX = re.compile(r"\s+loc\((#loc\d*|unknown|\"[^)]*\)?)\)\s*$")
# 256-colour palette entries that read well on dark and light terminals
_PALETTE = [33, 166, 70, 170, 37, 130, 99, 160, 29, 136, 62, 125, 31, 172, 65, 132]


def strip_locations(text: str, line_locs: list):
    """Drop ``loc(...)`` suffixes and ``#locN = ...`` lines (Triton's location table).

    Returns ``(lines, locs)`` with the table lines removed from both lists."""
    lines, locs = [], []
    padded_locs = list(line_locs) + [None] * len(text.splitlines())
    for line, loc in zip(text.splitlines(), padded_locs, strict=False):
        if line.startswith("#loc"):
            continue
        lines.append(_LOC_SUFFIX.sub("", line))
        locs.append(loc)
    return lines, locs


def _colour(code: int | None, s: str, enabled: bool) -> str:
    if not enabled or code is None:
        return s
    return f"\x1b[38;5;{code}m{s}\x1b[0m"


def side_by_side(compiled, stages=("source", "ttir", "llir"), width: int | None = None,
                 colour: bool = True, max_lines: int | None = None) -> str:
    """Render ``stages`` of a compiled kernel as columns of text.

    ``compiled`` needs ``.asm`` (stage -> text) and ``.line_maps`` (stage -> one Location or
    None per line). Lines that come from the same kernel source line share a colour in every
    column. ``width``: total characters (default: the terminal's); a row is never wider
    unless each column would get fewer than 8 characters. Stages missing from
    ``compiled.asm`` are skipped. ``max_lines`` cuts the columns; a last line then says how
    many lines of which stages were left out.
    """
    stages = [s for s in stages if s in compiled.asm]
    total = width or shutil.get_terminal_size((160, 40)).columns
    # the columns share the width left by the " | " separators: four stages fit in 80 columns
    col = max(8, (total - 3 * (len(stages) - 1)) // max(1, len(stages)))
    src_lines: dict[int, int] = {}
    columns = []
    for stage in stages:
        lines, locs = strip_locations(compiled.asm[stage], compiled.line_maps.get(stage, []))
        columns.append((stage, lines, locs))
        for loc in locs:
            if loc is not None:
                src_lines.setdefault(loc.root().line, len(src_lines))
    height = max(len(c[1]) for c in columns) if columns else 0
    if max_lines:
        height = min(height, max_lines)
    out = [" | ".join(s.center(col) for s, _, _ in columns),
           "-+-".join("-" * col for _ in columns)]
    for i in range(height):
        cells = []
        for _, lines, locs in columns:
            text = lines[i] if i < len(lines) else ""
            text = text.replace("\t", "    ")
            text = (text[: col - 1] + "…") if len(text) > col else text.ljust(col)
            loc = locs[i] if i < len(locs) else None
            code = _PALETTE[src_lines[loc.root().line] % len(_PALETTE)] if loc else None
            cells.append(_colour(code, text, colour))
        out.append(" | ".join(cells))
    cut = [f"{stage} {len(lines) - height} more" for stage, lines, _ in columns
           if len(lines) > height]
    if cut:
        out.append(f"... cut at {height} lines ({', '.join(cut)})")
    return "\n".join(out)
