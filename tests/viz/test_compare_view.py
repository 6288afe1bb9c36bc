"""The ``--compare triton`` view (``workbench.viz.compare_view``): Triton's location tables are
hidden like ours, no difference is listed twice, the panes share the output width."""
from __future__ import annotations

import re

import pytest

import workbench as wb
import workbench.language as tl
from workbench.viz.compare_view import differences_table, render_comparison


@wb.jit
def _transpose_k(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(out_ptr + rn[:, None] * N + rm[None, :], x)


@pytest.fixture(scope="module")
def comparison():
    pytest.importorskip("triton", reason="needs Triton 3.6 (the triton extra)")
    return wb.compare(_transpose_k, "*fp32:16", "*fp32:16", "i32:16", target="cuda:80",
                      num_warps=4, BM=64, BN=64)


def _lines(html: str, stage: str) -> list:
    """(classes, text) of each line of pane ``stage``."""
    start = html.index(f'data-stage="{stage}"')
    end = html.find('<div class="wb-pane"', start + 1)
    pane = html[start:end if end > 0 else len(html)]
    return re.findall(r'<div class="(wb-ln[^"]*)"[^>]*>(.*?)</div>', pane)


def test_triton_location_tables_are_debug_lines(comparison):
    html = render_comparison(comparison, stages=("ttgir",))
    lines = _lines(html, "ttgir (Triton)")
    tables = [cls for cls, text in lines if text.startswith("#loc")]
    assert tables, "Triton's ttgir has a #loc table"
    assert all("wb-dbg" in cls for cls in tables)  # hidden until the toggle is ticked


def test_no_difference_row_repeats_a_property_row():
    class _Facts:
        layouts = {"#blocked": "x"}
        op_layouts: dict = {}
        converts = 2
        ptx_barriers = 3
        vectors: dict = {}

    class _Diff:
        def __init__(self, prop, what, ours, theirs):
            self.prop, self.what, self.ours, self.theirs = prop, what, ours, theirs

    class _Cmp:
        ours_facts = theirs_facts = _Facts()
        ours_shared, theirs_shared = 4096, 0
        differences = [_Diff("barriers", "bar.sync in ptx", 3, 1),
                       _Diff("shared", "shared bytes (kernel metadata)", 4096, 0),
                       _Diff("op_layouts", "tt.load #0", ["#blocked"], ["#mma"])]
        agree = {"barriers": False, "shared": False, "op_layouts": False}

    theirs = type("_T", (), {"layouts": {}, "op_layouts": {}, "converts": 2,
                              "ptx_barriers": 1, "vectors": {}})()
    cmp = _Cmp()
    cmp.theirs_facts = theirs
    html = differences_table(cmp)
    assert html.count("bar.sync") == 1  # the property row only
    assert html.count("shared bytes") == 1
    assert "tt.load #0" in html  # a detail the property rows do not show stays


def test_panes_share_the_output_width(comparison):
    html = render_comparison(comparison)
    uid = re.search(r'<div class="wb-view[^"]*" id="([^"]+)"', html).group(1)
    assert f"#{uid} .wb-panes{{flex-wrap:wrap}}" in html
    assert "calc(50% - 6px)" in html and "max-width:none" in html
    stages = re.findall(r'class="wb-pane" data-stage="([^"]+)"', html)
    assert stages == ["source", "ttgir (ours)", "ttgir (Triton)", "ptx (ours)", "ptx (Triton)"]
