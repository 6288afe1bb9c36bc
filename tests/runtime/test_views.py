"""Views registered by the Face on the runtime's objects (workbench.runtime.views)."""
import subprocess
import sys

import pytest

import workbench as wb
from workbench.errors import ToolMissingError
from workbench.runtime import views
from workbench.testing.examples import add_kernel


def _compiled():
    return wb.compile(add_kernel, "*fp32", "*fp32", "*fp32", "i32", target="cpu",
                      BLOCK_SIZE=64)


def test_plain_import_then_display_gives_the_rich_view():
    code = ("import sys, workbench as wb\n"
            "from workbench.testing.examples import add_kernel\n"
            "k = wb.compile(add_kernel, '*fp32', '*fp32', '*fp32', 'i32', target='cpu',\n"
            "               BLOCK_SIZE=64)\n"
            "assert 'workbench.viz' not in sys.modules\n"  # compiling never loads the Face
            "html = k._repr_html_()\n"
            "assert 'workbench.viz.ir_view' in sys.modules\n"
            "assert html.startswith('<div class=\"wb-view') and 'data-wb-view=\"ir\"' in html\n"
            "assert 'class=\"wb-panes\"' in html and '<details>' not in html\n"
            "print('rich')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "rich"


def test_without_the_face_the_html_is_plain(monkeypatch):
    monkeypatch.setattr(views, "_VIEWS", {})
    monkeypatch.setattr(views, "FACE", "workbench_no_such_face_package")
    k = _compiled()
    html = k._repr_html_()
    assert html == k._plain_html()
    assert "<details><summary>ttir</summary>" in html and "tt.func" in html
    with pytest.raises(ToolMissingError, match="workbench.viz"):
        k.layouts()


def test_a_registered_view_is_used(monkeypatch):
    monkeypatch.setattr(views, "_VIEWS", dict(views._VIEWS))
    seen = []
    views.register("compiled_html", lambda kernel: seen.append(kernel) or "<b>mine</b>")
    k = _compiled()
    assert k._repr_html_() == "<b>mine</b>" and seen == [k]
    assert views.lookup("no_such_view") is None
