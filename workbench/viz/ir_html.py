"""HTML building blocks shared by the IR views: view ids, the scoped style sheet, one pane of
highlighted lines, the linking script.

Every view is one ``<div id="wb-...">`` whose CSS rules are all scoped under that id, so several
views in one notebook never interfere. Colours are inline styles (they survive nbviewer and
static HTML where neither scripts nor our style sheet may run). Hover linking works twice over:
CSS ``:has()`` rules (no script needed, e.g. in untrusted notebooks) and a small inline script
that also pins a line on click and scrolls every pane to it.
"""
from __future__ import annotations

import html
import re
import uuid

from .ir_lines import SplitLine, describe_loc
from .lexers import highlight_lines, style_css

_ID_OK = re.compile(r"^[A-Za-z][\w-]*$")

#: classes that keep a notebook's maths typesetter out of an element and all it holds: MathJax 3
#: (JupyterLab 4, Notebook 7) skips ``mathjax_ignore``, MathJax 2 (classic notebook, nbviewer)
#: ``tex2jax_ignore``. Every view's root carries them, so the ``$0``, ``$1`` of inline asm and
#: any ``$`` in IR are never read as LaTeX.
NO_MATHS = "mathjax_ignore tex2jax_ignore"


def new_view_id(view_id: str | None = None) -> str:
    """A fresh unique element id (``wb-`` + 10 hex digits), or ``view_id`` checked to be a
    valid HTML id (letters, digits, ``_``, ``-``; raises ValueError otherwise)."""
    if view_id is None:
        return "wb-" + uuid.uuid4().hex[:10]
    if not _ID_OK.match(view_id):
        raise ValueError(f"view_id must be letters, digits, '_' or '-', got {view_id!r}")
    return view_id


def esc(text) -> str:
    """HTML-escape any value (quotes too, so the result is safe inside attributes)."""
    return html.escape(str(text), quote=True)


def style_sheet(uid: str, linked_lines=()) -> str:
    """The ``<style>`` block of one view: layout, the debug-info toggle, highlight classes,
    pygments token colours and one ``:has()`` hover rule per linked source line."""
    s = f"#{uid}"
    rules = [
        f"{s}{{font-family:system-ui,-apple-system,Segoe UI,sans-serif;font-size:13px;"
        "color:#1a1a1a;background:#fff;border:1px solid #d0d0d0;border-radius:4px;"
        "padding:6px;margin:4px 0;max-width:100%;box-sizing:border-box}",
        f"{s} .wb-title{{font-weight:600;margin:0 0 4px 0}}",
        f"{s} .wb-report{{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;"
        "background:#f4f6f8;border:1px solid #e0e4e8;padding:3px 6px;margin-bottom:4px}",
        f"{s} .wb-report b{{color:#555;font-weight:600;margin-right:3px}}",
        f"{s} .wb-note{{font-size:12px;color:#7a4b00;background:#fff8e6;"
        "border-left:3px solid #e0a000;padding:2px 6px;margin:2px 0}",
        f"{s} .wb-toggle{{font-size:12px;color:#444;margin:2px 0 4px 0;display:inline-block}}",
        # panes flow into as many rows as the page needs (no sideways scrolling: every
        # stage is on screen at any width), each at least 30em wide
        f"{s} .wb-panes{{display:flex;flex-wrap:wrap;gap:6px;align-items:flex-start}}",
        f"{s} .wb-pane{{flex:1 1 30em;max-width:100%;min-width:0;border:1px solid #ccc;"
        "border-radius:3px;background:#fff}",
        f"{s} .wb-pane-head{{background:#eef1f4;border-bottom:1px solid #ccc;padding:2px 6px;"
        "font-size:12px;display:flex;justify-content:space-between;gap:8px}",
        f"{s} .wb-pane-head .wb-stage{{font-weight:700}}",
        f"{s} .wb-pane-head .wb-count{{color:#666}}",
        f"{s} .wb-code{{position:relative;margin:0;padding:2px 0;max-height:40em;overflow:auto;"
        "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;"
        "line-height:1.4;white-space:pre}",
        f"{s} .wb-ln{{display:block;width:max-content;min-width:100%;padding-right:8px;"
        "box-sizing:border-box;cursor:default}",
        f"{s} .wb-ln::before{{content:attr(data-line);display:inline-block;width:3.2em;"
        "padding-right:.7em;text-align:right;color:#999}",
        f"{s} .wb-ln[data-mark]::before{{content:attr(data-mark)}}",
        f"{s} .wb-loc{{display:none;color:#9a9a9a}}",
        f"{s} .wb-dbg{{display:none;color:#9a9a9a}}",
        f"{s} .wb-dbg-box{{margin-right:4px;vertical-align:middle}}",
        f"{s} .wb-dbg-box:checked ~ .wb-panes .wb-loc{{display:inline}}",
        f"{s} .wb-dbg-box:checked ~ .wb-panes .wb-dbg{{display:block}}",
        f"{s} .wb-ln.wb-hl{{outline:2px solid #333;outline-offset:-2px}}",
        f"{s} .wb-ln.wb-pin{{box-shadow:inset 5px 0 0 #c0392b;font-weight:600}}",
        f"{s} .wb-diff-add{{background:#e6ffec}}",
        f"{s} .wb-diff-del{{background:#ffebe9}}",
        f"{s} .wb-diff-hunk{{color:#6f42c1;background:#f3f0ff}}",
        f"{s} details{{margin:2px 0}} {s} summary{{cursor:pointer;font-size:12px}}",
    ]
    for line in linked_lines:
        sel = f'.wb-ln[data-src="{int(line)}"]'
        rules.append(f"{s}:has({sel}:hover) {sel}{{outline:2px solid #333;outline-offset:-2px}}")
    rules.append(style_css(f"{s} .wb-code"))
    return "<style>\n" + "\n".join(rules) + "\n</style>"


def link_script(uid: str) -> str:
    """The inline script that links lines by ``data-src`` inside the view ``uid``: hover
    lights every line of that source line in every pane; click pins it and scrolls each
    other pane to its first such line; a second click unpins."""
    return ("<script>(function(){var r=document.getElementById(" + f'"{uid}"' + ");"
            "if(!r||r.dataset.wbBound)return;r.dataset.wbBound='1';var pin=null;"
            "function ls(s){return r.querySelectorAll('.wb-ln[data-src=\"'+s+'\"]');}"
            "function mk(s,c,on){ls(s).forEach(function(e){e.classList.toggle(c,on);});}"
            "function ln(ev){return ev.target.closest?ev.target.closest('.wb-ln[data-src]'):null;}"
            "r.addEventListener('mouseover',function(ev){var e=ln(ev);if(e)mk(e.dataset.src,"
            "'wb-hl',true);});"
            "r.addEventListener('mouseout',function(ev){var e=ln(ev);if(e)mk(e.dataset.src,"
            "'wb-hl',false);});"
            "r.addEventListener('click',function(ev){var e=ln(ev);if(!e)return;"
            "var s=e.dataset.src;if(pin!==null)mk(pin,'wb-pin',false);"
            "if(pin===s){pin=null;return;}pin=s;mk(s,'wb-pin',true);"
            "r.querySelectorAll('.wb-pane').forEach(function(p){if(p.contains(e))return;"
            "var f=p.querySelector('.wb-ln[data-src=\"'+s+'\"]:not(.wb-dbg)');"
            "var c=p.querySelector('.wb-code');"
            "if(f&&c)c.scrollTop=Math.max(0,f.offsetTop-c.clientHeight/3);});});"
            "})();</script>")


def line_html(number: int, body: str, *, src: int | None = None, colour: str | None = None,
              title: str = "", suffix: str = "", debug: bool = False, extra_class: str = "",
              mark: str | None = None) -> str:
    """One ``<div class="wb-ln">`` line: highlighted ``body`` (already HTML) and the
    hidden-by-default debug ``suffix`` (plain text, escaped here). ``data-line`` is the 1-based
    line in its pane's text (the CSS gutter shows it, so copied code has no numbers);
    ``data-src`` the kernel source line it came from; ``mark`` replaces the gutter number
    (``+``/``-`` in diffs)."""
    cls = "wb-ln" + (" wb-dbg" if debug else "") + (f" {extra_class}" if extra_class else "")
    attrs = [f'class="{cls}"', f'data-line="{int(number)}"']
    if src is not None:
        attrs.append(f'data-src="{int(src)}"')
    if mark is not None:
        attrs.append(f'data-mark="{esc(mark)}"')
    if colour:
        attrs.append(f'style="background:{esc(colour)}"')
    if title:
        attrs.append(f'title="{esc(title)}"')
    tail = f'<span class="wb-loc">{esc(suffix)}</span>' if suffix else ""
    return f'<div {" ".join(attrs)}>{body}{tail}</div>'


def pane_html(stage: str, split: list[SplitLine], locs: list, src_of: list, colours: dict,
              header_extra: str = "") -> str:
    """One stage pane: header (stage name, line count) and its lines, highlighted with the
    stage's lexer. ``locs[i]`` is the Location of line i (or None); ``src_of[i]`` the kernel
    source line it is attributed to (or None); ``colours`` maps source line -> colour."""
    bodies = highlight_lines([s.code for s in split], stage)
    out = []
    for i, (s, body) in enumerate(zip(split, bodies, strict=False)):
        src = src_of[i]
        loc = locs[i]
        # a tooltip only where it tells more than the linked source line: inlined helpers
        title = describe_loc(loc) if getattr(loc, "caller", None) is not None else ""
        out.append(line_html(i + 1, body, src=src, colour=colours.get(src), title=title,
                             suffix=s.suffix, debug=s.debug))
    n_debug = sum(1 for s in split if s.debug)
    count = f"{len(split)} lines" + (f" ({n_debug} debug)" if n_debug else "")
    return (f'<div class="wb-pane" data-stage="{esc(stage)}">'
            f'<div class="wb-pane-head"><span class="wb-stage">{esc(stage)}</span>'
            f'<span class="wb-count">{esc(count)}{header_extra}</span></div>'
            f'<div class="wb-code">{"".join(out)}</div></div>')
