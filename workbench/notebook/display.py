"""What the magic shows besides IR views: error boxes, notes, usage. Each is published with
IPython's ``display`` as both ``text/html`` and ``text/plain`` (terminals, logs)."""
from __future__ import annotations

import html
import linecache
import traceback

from ..errors import WorkbenchError, format_at, place
from ..ir.core import Location

_BOX = ("border:1px solid {b};border-left:5px solid {b};background:{bg};color:#1a1a1a;"
        "padding:6px 10px;margin:4px 0;border-radius:3px;font-family:system-ui,sans-serif;"
        "font-size:13px")
_PRE = ("margin:4px 0 0 0;white-space:pre-wrap;font-family:ui-monospace,Menlo,Consolas,"
        "monospace;font-size:12px;background:transparent;color:#1a1a1a")


def show(html_text: str, plain: str) -> None:
    """Display one output with HTML and plain-text representations. The HTML is wrapped in an
    element no maths typesetter enters (see :data:`workbench.viz.ir_html.NO_MATHS`)."""
    from IPython.display import display

    from ..viz.ir_html import NO_MATHS
    display({"text/html": f'<div class="{NO_MATHS}">{html_text}</div>', "text/plain": plain},
            raw=True)


def box_html(kind: str, title: str, body: str = "", details: str = "") -> str:
    """A coloured box: ``kind`` is ``"error"``, ``"note"`` or ``"usage"``; ``body`` is shown
    as preformatted text (escaped); ``details`` (escaped) folds under a summary line."""
    colours = {"error": ("#d73a49", "#fff5f5"), "note": ("#0366d6", "#f1f8ff"),
               "usage": ("#6a737d", "#fafbfc")}
    b, bg = colours.get(kind, colours["note"])
    out = [f'<div class="wb-{kind}" data-wb-{kind}="1" style="{_BOX.format(b=b, bg=bg)}">',
           f"<b>{html.escape(title)}</b>"]
    if body:
        out.append(f'<pre style="{_PRE}">{html.escape(body)}</pre>')
    if details:
        out.append(f'<details><summary style="cursor:pointer;font-size:12px">details</summary>'
                   f'<pre style="{_PRE}">{html.escape(details)}</pre></details>')
    out.append("</div>")
    return "".join(out)


def show_box(kind: str, title: str, body: str = "", details: str = "") -> None:
    """Display :func:`box_html` (with a plain-text twin)."""
    plain = title + ("\n" + body if body else "")
    show(box_html(kind, title, body, details), plain)


def syntax_error_text(err: SyntaxError) -> str:
    """``file:line:col: message``, the line and a caret, for a SyntaxError in a cell."""
    loc = Location(err.filename or "<cell>", err.lineno or 0, err.offset or 1)
    end = getattr(err, "end_offset", None)
    if getattr(err, "end_lineno", None) not in (None, err.lineno):
        end = None
    return format_at(loc, f"SyntaxError: {err.msg}",
                     "Fix the Python syntax of the cell; kernels are parsed as Python.", end)


def _user_frame(exc: BaseException, files: tuple) -> traceback.FrameSummary | None:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in files]
    return frames[-1] if frames else None


def error_text(exc: BaseException, files: tuple = ()) -> tuple[str, str]:
    """(title, body) describing ``exc`` for the user: workbench errors and SyntaxErrors carry
    their own ``file:line:col`` and caret; other exceptions are pointed at the innermost line
    of ``files`` (the cell's file, the launch expression) they passed through."""
    if isinstance(exc, SyntaxError):
        return "SyntaxError", syntax_error_text(exc)
    name = type(exc).__name__
    if isinstance(exc, WorkbenchError):
        return name, exc.shown_text()
    frame = _user_frame(exc, files)
    if frame is None or not frame.lineno:
        return name, f"{name}: {exc}"
    col = (frame.colno or 0) + 1
    end = (frame.end_colno or 0) + 1 if frame.end_lineno == frame.lineno else None
    if linecache.getline(frame.filename, frame.lineno):
        return name, format_at(Location(frame.filename, frame.lineno, col), f"{name}: {exc}",
                               None, end)
    return name, f"{place(frame.filename, frame.lineno)}: {name}: {exc}"


def show_error(exc: BaseException, context: str, files: tuple = ()) -> None:
    """Display ``exc`` as an error box titled ``context`` (e.g. "compiling 'add' for
    cuda:90"). Errors that are not the workbench's own also get their traceback folded
    under "details", for bug reports."""
    title, body = error_text(exc, files)
    details = ""
    if not isinstance(exc, (WorkbenchError, SyntaxError)):
        details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    show_box("error", f"{title} while {context}", body, details)
