"""The live stage view's data and mimebundle (the browser side is tests/browser)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import workbench as wb
from workbench.testing.examples import softmax_kernel
from workbench.viz.ir_lines import split_debug
from workbench.viz.stage_data import compiled_stage_data
from workbench.viz.stage_widget import StageView, default_visible, stage_view
from workbench.viz.view_data import parse_view


@pytest.fixture(scope="module")
def compiled():
    return wb.compile(softmax_kernel, "*fp32:16", "*fp32:16", "i32", "i32", "i32",
                      target="cuda:80", BLOCK_SIZE=1024)


def test_costs_count_the_lines_of_each_stage(compiled):
    data = compiled_stage_data(compiled)
    json.dumps(data)  # all of it travels to the browser as JSON
    src = compiled.src
    for pane in data["panes"]:
        stage = pane["stage"]
        lines = compiled.asm[stage].splitlines()
        split = split_debug(stage, lines)
        per: dict = {}
        for row, s in zip(pane["lines"], split, strict=True):
            assert bool(row[2]) == s.debug
            if row[1] is not None and not s.debug and s.code.strip():
                per[row[1]] = per.get(row[1], 0) + 1
        got = {int(k): v[stage] for k, v in data["cost"].items() if stage in v}
        assert got == per, stage
        assert all(src.first_line <= n < src.first_line + len(src.text.splitlines())
                   for n in per)
    # the reduction lines go through shared memory and barriers in PTX; the loads do not
    text = src.text.splitlines()
    def cost_of(needle):
        n = next(i for i, t in enumerate(text) if needle in t) + src.first_line
        return data["cost"][str(n)]
    assert cost_of("tl.max")["barriers"] >= 1 and cost_of("tl.max")["shared"] >= 4
    assert cost_of("tl.load").get("shared", 0) == 0


def test_ptx_lines_carry_their_help_key(compiled):
    data = compiled_stage_data(compiled)
    ptx = next(p for p in data["panes"] if p["stage"] == "ptx")
    keys = {row[3] for row in ptx["lines"] if row[3]}
    assert any(k.startswith("shfl.sync") for k in keys), keys
    assert set(ptx["help"]) == keys
    assert "lanes of a warp" in ptx["help"][next(k for k in keys if k.startswith("shfl"))][
        "summary"]


def test_sass_is_made_only_when_asked_for():
    # a specialisation no other test compiles, so no earlier reader has made its SASS
    k = wb.compile(softmax_kernel, "*fp32:16", "*fp32:16", "i32", "i32", "i32",
                   target="cuda:90", num_warps=2, BLOCK_SIZE=2048)
    if "sass" not in k.asm:
        pytest.skip("nvdisasm is not installed: no SASS stage (pip install 'tile-workbench[sass]')")
    w = stage_view(k)
    assert k.asm.pending() == ["sass"]          # building the view ran no nvdisasm
    assert w.data["lazy"] == ["sass"] and "sass" not in [p["stage"] for p in w.data["panes"]]
    assert w.data["visible"] == ["ttgir", "llir", "ptx"]
    assert "sass: not made yet" in w._static_html
    w._on_front_end_msg(w, {"make_stage": "sass", "visible": ["ttir", "ptx"]}, [])
    assert k.asm.pending() == [] and w.data["lazy"] == []
    assert w.data["visible"] == ["ttir", "ptx", "sass"]
    sass = next(p for p in w.data["panes"] if p["stage"] == "sass")
    assert any(row[3] for row in sass["lines"])  # SASS lines carry their help key
    asked = stage_view(wb.compile(softmax_kernel, "*fp32:16", "*fp32:16", "i32", "i32", "i32",
                                  target="cuda:90", num_warps=2, BLOCK_SIZE=512), "ptx,sass")
    assert asked.data["visible"] == ["ptx", "sass"] and asked.data["lazy"] == []


def test_widget_mimebundle_has_the_static_view(compiled):
    w = stage_view(compiled, "ttgir,ptx")
    assert isinstance(w, StageView) and w.data["visible"] == ["ttgir", "ptx"]
    bundle, _ = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    view = parse_view(bundle["text/html"])
    assert view.panes == ["source", "ttgir", "ptx"]
    assert "mathjax_ignore" in bundle["text/html"].split(">", 1)[0]
    assert "softmax_kernel" in bundle["text/plain"] or "CompiledKernel" in bundle["text/plain"]
    # seen only where the widget did not load, and its first line says so
    head, rest = bundle["text/html"].split("</div>", 1)
    assert 'data-wb-fallback="1"' in head and "the live widget did not load" in head
    assert "Static stage view" in head and rest.startswith('<div class="wb-view')
    # the static view alone (the compiled kernel's own HTML) has no such line
    assert "data-wb-fallback" not in compiled._repr_html_()


def test_explorer_mimebundle_has_its_facts_under_the_notice():
    from workbench.layouts import BlockedLayout
    from workbench.viz.explorer import layout_explorer
    warps = int(np.random.default_rng().choice([1, 2, 4]))
    ex = layout_explorer(BlockedLayout((1, 4), (4, 8), (warps, 1), (1, 0)), (32, 32))
    bundle, _ = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    text = bundle["text/html"]
    assert "Static layout explorer: the live widget did not load" in text
    assert text.index('data-wb-fallback="1"') < text.index("warpsPerCTA = [" + str(warps))
    assert f"{32 * 32 // (32 * warps)} register(s) per thread over [32, 32], {warps} warp(s)" \
        in text
    assert len(text) < 5000        # facts only: no picture saved into the notebook


def test_default_visible_stages():
    assert default_visible(["ttir", "ttgir", "llir", "ptx", "sass"]) == ["ttgir", "ptx", "sass"]
    assert default_visible(["ttir", "llir", "asm"]) == ["ttir", "llir", "asm"]
    assert default_visible(["ttir", "ttgir", "llir", "ptx"]) == ["ttgir", "llir", "ptx"]


def test_diff_of_two_configurations_aligned_by_source_line(compiled):
    from workbench.testing.examples import add_kernel
    from workbench.viz.stage_widget import stage_diff
    other = wb.compile(softmax_kernel, "*fp32:16", "*fp32:16", "i32", "i32", "i32",
                       target="cuda:80", BLOCK_SIZE=1024, num_warps=8)
    w = stage_diff(compiled, other, "ttgir,ptx")
    assert w.data["visible"] == ["ttgir A", "ttgir B", "ptx A", "ptx B"]
    assert "num_warps=4" in w.data["notes"][0] and "num_warps=8" in w.data["notes"][1]
    for pane, c in (("ptx A", compiled), ("ptx B", other)):
        split = split_debug("ptx", c.asm["ptx"].splitlines())
        rows = next(p for p in w.data["panes"] if p["stage"] == pane)["lines"]
        assert [r[0] for r in rows][:3] and len(rows) == len(split)
        per: dict = {}
        for r, s in zip(rows, split, strict=True):
            if r[1] is not None and s.code.strip():
                per[r[1]] = per.get(r[1], 0) + 1
        assert {int(k): v[pane] for k, v in w.data["cost"].items() if pane in v} == per
    # eight warps split the 1024-wide row over twice the threads: fewer PTX lines per thread
    total = {p: sum(v.get(p, 0) for v in w.data["cost"].values()) for p in ("ptx A", "ptx B")}
    assert total["ptx B"] < total["ptx A"], total
    bundle, _ = w._repr_mimebundle_()
    assert parse_view(bundle["text/html"]).panes == ["source", "ttgir A", "ttgir B", "ptx A",
                                                     "ptx B"]
    add = wb.compile(add_kernel, "*fp32:16", "*fp32:16", "*fp32:16", "i32", target="cuda:80",
                     BLOCK_SIZE=256)
    with pytest.raises(ValueError, match="sources differ"):
        stage_diff(compiled, add)
    cpu = wb.compile(softmax_kernel, "*fp32:16", "*fp32:16", "i32", "i32", "i32",
                     target="cpu", BLOCK_SIZE=1024)
    with pytest.raises(ValueError, match="none of ptx is a text stage of both"):
        stage_diff(compiled, cpu, "ptx")
