"""The compile report's shared-memory table: every shared memory access of a compiled kernel
with its bank-conflict degree (from ``compiled.extra["shared_accesses"]``, which the CUDA
backend fills from :func:`workbench.layouts.bank_conflicts`), and the backend's notes."""
from __future__ import annotations

import html


def shared_accesses(compiled) -> list[dict]:
    """The access records of ``compiled`` (empty for targets without shared memory)."""
    extra = getattr(compiled, "extra", None) or {}
    return list(extra.get("shared_accesses") or [])


def backend_notes(compiled) -> list[str]:
    """Sentences the backend left for the user (a missing tool, a loop not pipelined...)."""
    extra = getattr(compiled, "extra", None) or {}
    return [str(n) for n in extra.get("notes") or []]


def _short_loc(loc: str) -> str:
    """``file:line:col`` as :func:`workbench.viz.ir_lines.short_place` shows it (``In [12],
    line 5, col 9`` for a notebook cell, else the base name)."""
    from .ir_lines import short_place
    file, line, col = (str(loc).rsplit(":", 2) + ["", ""])[:3]
    if line.isdigit() and col.isdigit():
        return short_place(file, int(line), int(col))
    path, _, rest = str(loc).rpartition("/")
    return rest if path else str(loc)


def _degree_text(deg) -> str:
    """``none`` for a conflict degree of 1, ``<n>-way`` above, the value as text when it is
    not a number."""
    try:
        value = float(deg)
    except (TypeError, ValueError):
        return str(deg)
    return "none" if value == 1.0 else f"{value:g}-way"


def shared_access_table(compiled) -> str:
    """HTML table, one row per shared memory access: op, source line, shared layout, the
    register layout that reads or writes it, bytes per lane, wavefronts and conflict degree
    (1 = conflict-free). Empty string when the kernel has none. Each row carries
    ``data-conflict`` for tests and tools."""
    rows = shared_accesses(compiled)
    if not rows:
        return ""
    from .ir_html import NO_MATHS
    out = [f'<table class="wb-shared {NO_MATHS}" data-wb-view="shared-accesses" '
           'style="border-collapse:'
           'collapse;font:12px ui-monospace,Menlo,Consolas,monospace;margin:4px 0">',
           "<caption style='text-align:left;font-weight:bold'>shared memory accesses "
           "(32 banks of 4 bytes)</caption>",
           "<tr><th>op</th><th>line</th><th>shared layout</th><th>access layout</th>"
           "<th>B/lane</th><th>wavefronts</th><th>conflict</th></tr>"]
    for r in rows:
        deg = r.get("conflict_degree")
        deg_text = _degree_text(deg)
        colour = "#1a7f37" if deg_text == "none" else "#cf222e"
        cells = [r.get("op", ""), _short_loc(r.get("loc", "")), r.get("layout", ""),
                 r.get("access_layout", ""), r.get("vector_bytes", ""), r.get("wavefronts", "")]
        tds = "".join(f"<td style='padding:1px 6px'>{html.escape(str(c))}</td>" for c in cells)
        out.append(f"<tr data-conflict='{html.escape(str(deg))}'>{tds}"
                   f"<td style='padding:1px 6px;color:{colour}'>{html.escape(deg_text)}</td></tr>")
    out.append("</table>")
    return "".join(out)
