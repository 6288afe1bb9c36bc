"""A check's verdict in HTML keeps a source line and its caret in one monospace block, so the
caret stays under the column it points at (in a proportional font it drifted)."""
from __future__ import annotations

from workbench.course.checking import Failure
from workbench.course.report import CheckReport


def test_the_caret_keeps_its_column_in_html():
    message = ("In [3], line 5, col 14: out-of-bounds load\n"
               "    y = tl.load(x_ptr + offs)\n"
               "        ^^^^^^^^^^^^^^^^^^^^^^^^^")
    report = CheckReport("vector_add", False, [Failure("interpreter", "n=1000", message,
                                                       "the mask of the load")])
    page = report._repr_html_()
    assert "monospace" in page and "white-space:pre-wrap" in page
    lines = page.split("\n")
    src = next(i for i, ln in enumerate(lines) if "tl.load(x_ptr" in ln)
    assert lines[src + 1].index("^") == lines[src].index("tl.load")
    assert "<br>" not in page
