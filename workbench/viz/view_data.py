"""Read a rendered IR view back as data: which panes it has and, per line, its number, the
source line it is attributed to, its colour, its visible text and its hidden debug suffix.

Used by the tests (which check the HTML by data, not by pixels) and by anyone post-processing
views. Standard library only (:mod:`html.parser`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class ViewLine:
    """One ``wb-ln`` line of a pane."""

    line: int
    src: int | None
    colour: str | None
    title: str
    classes: tuple
    text: str = ""       # the code as shown (gutter and debug suffix excluded)
    suffix: str = ""     # the hidden-by-default debug suffix (``loc(...)``)

    @property
    def debug(self) -> bool:
        return "wb-dbg" in self.classes


@dataclass
class ViewData:
    """Everything :func:`parse_view` finds: view ids, pane stage names in order, lines per
    pane, report strip items, notes, and whether a linking script is present."""

    view_ids: list = field(default_factory=list)
    panes: list = field(default_factory=list)
    lines: dict = field(default_factory=dict)
    report: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    scripts: int = 0


class _Parser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.data = ViewData()
        self.stack: list[tuple[str, set]] = []
        self.pane = None
        self.cur: ViewLine | None = None
        self.key = None
        self.note = None

    def _in(self, cls: str) -> bool:
        return any(cls in c for _, c in self.stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        self.stack.append((tag, classes))
        if tag == "script":
            self.data.scripts += 1
        if "wb-view" in classes:
            self.data.view_ids.append(a.get("id"))
        if "wb-pane" in classes:
            self.pane = a.get("data-stage")
            self.data.panes.append(self.pane)
            self.data.lines[self.pane] = []
        if "wb-ln" in classes:
            style = a.get("style") or ""
            colour = style.split("background:", 1)[1].strip() if "background:" in style else None
            src = a.get("data-src")
            self.cur = ViewLine(int(a.get("data-line", 0)), int(src) if src else None, colour,
                                a.get("title") or "", tuple(sorted(classes)))
            self.data.lines.setdefault(self.pane, []).append(self.cur)
        if "wb-kv" in classes:
            self.key = a.get("data-key")
            self.data.report[self.key] = ""
        if "wb-note" in classes:
            self.note = ""

    def handle_endtag(self, tag):
        while self.stack:
            t, classes = self.stack.pop()
            if "wb-ln" in classes:
                self.cur = None
            if "wb-kv" in classes:
                self.key = None
            if "wb-note" in classes and self.note is not None:
                self.data.notes.append(self.note)
                self.note = None
            if t == tag:
                break

    def handle_data(self, data):
        if self.note is not None:
            self.note += data
        if self.key is not None and self.stack and self.stack[-1][0] != "b":
            self.data.report[self.key] += data
        if self.cur is None:
            return
        if self._in("wb-loc"):
            self.cur.suffix += data
        else:
            self.cur.text += data


def parse_view(html_text: str) -> ViewData:
    """Parse the HTML of :func:`workbench.viz.ir_view.render_stages` (or a page holding
    several views: lines of same-named panes are concatenated)."""
    p = _Parser()
    p.feed(html_text)
    p.close()
    return p.data
