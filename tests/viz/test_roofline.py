"""Roofline points and figure by data: intensity, bound, fraction, limiter, the flag of points
above their roof (counting errors), roofs drawn, datasheet roofs kept separate."""
from __future__ import annotations

import pytest

from workbench.testing.ceilings import Ceilings
from workbench.testing.work import Run
from workbench.viz.roofline import roofline, roofline_points

CEIL = Ceilings(target="cpu", machine="test", bandwidth=10e9,
                compute={"fp32": 100e9, "fp64": 40e9}, llc_bytes=32 << 20)


def runs():
    return [
        # memory bound: AI 0.25, 2 GB/s of 10 -> 20% of its bound
        Run("triad", seconds=1.0, flops=0.5e9, bytes=2e9),
        # compute bound: AI 100, 50 GFLOP/s of 100 -> 50%
        Run("fma", seconds=1.0, flops=50e9, bytes=0.5e9),
        # fp64 roof: AI 100, 20 GFLOP/s of 40
        Run("fma64", seconds=1.0, flops=20e9, bytes=0.2e9, dtype="fp64"),
        # 100 GB/s at AI 1 against a 10 GB/s roof, 1 GB working set: a counting error
        Run("wrong", seconds=0.01, flops=1e9, bytes=1e9),
        # copy kernel: no FLOPs, not drawn, fraction of bandwidth
        Run("copy", seconds=1.0, flops=0.0, bytes=5e9),
    ]


def test_points():
    pts = {p["name"]: p for p in roofline_points(runs(), CEIL)}
    t = pts["triad"]
    assert t["intensity"] == 0.25 and t["limiter"] == "memory"
    assert t["bound"] == pytest.approx(2.5e9) and t["fraction"] == pytest.approx(0.2)
    assert not t["above_roof"] and "AI 0.25 FLOP/B, 20% of bound" in t["label"]
    f = pts["fma"]
    assert f["limiter"] == "compute" and f["fraction"] == pytest.approx(0.5)
    assert pts["fma64"]["roof"] == 40e9 and pts["fma64"]["fraction"] == pytest.approx(0.5)
    w = pts["wrong"]
    assert w["above_roof"] and w["fraction"] == pytest.approx(10.0)
    assert "counted wrong" in w["reason"] and "last-level cache" not in w["reason"]
    c = pts["copy"]
    assert not c["drawn"] and c["fraction"] == pytest.approx(0.5)


def test_small_working_set_above_roof_mentions_cache():
    small = Run("cached", seconds=1e-3, flops=4e6, bytes=1e6)   # 4 GFLOP/s, bound 40: below
    fast = Run("cached", seconds=1e-5, flops=4e6, bytes=1e6)    # 100 GB/s > 10 GB/s roof
    (p,) = roofline_points([fast], CEIL)
    assert p["above_roof"] and "last-level cache" in p["reason"]
    (q,) = roofline_points([small], CEIL)
    assert not q["above_roof"]


def test_tolerance():
    r = Run("edge", seconds=1.0, flops=1.05e9, bytes=0.4e9)   # 1.05 GFLOP/s vs bound 4 -> ok
    edge = Run("edge", seconds=0.1, flops=0.26e9, bytes=1.04e9)  # 2.6 vs bound 2.5: 4% above
    assert not roofline_points([edge], CEIL)[0]["above_roof"]
    assert roofline_points([edge], CEIL, tolerance=0.01)[0]["above_roof"]
    assert not roofline_points([r], CEIL)[0]["above_roof"]


def test_figure_data():
    fig = roofline(runs(), CEIL)
    d = fig.workbench_data
    assert d["flagged"] == ["wrong"] and d["not_drawn"] == ["copy"]
    assert d["roofs"] == {"fp32": 100e9, "fp64": 40e9} and d["bandwidth"] == 10e9
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    lo, hi = d["xlim"]
    assert lo <= 0.25 and hi >= 100
    # each drawn point is labelled by its number only (the table says the rest)
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == ["1", "2", "3", "4"]
    assert "triad" in d["text"] and "ABOVE ROOF" in d["text"]


def test_datasheet_roofs_are_separate():
    c = Ceilings(target="cuda", machine="gpu", bandwidth=3e12, compute={"fp32": 50e12},
                 datasheet={"source": "NVIDIA H200 Tensor Core GPU datasheet",
                            "bandwidth": 4.8e12, "compute": {"fp32": 67e12}})
    fig = roofline([Run("k", 1e-3, 1e9, 1e8, target="cuda")], c)
    d = fig.workbench_data
    assert d["roofs"] == {"fp32": 50e12} and d["datasheet"]["bandwidth"] == 4.8e12
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("datasheet" in t for t in legend) and any("measured" in t for t in legend)


def test_accepts_a_sweep_result_and_single_run():
    fig = roofline(Run("one", 1.0, 1e9, 1e9), CEIL)
    assert [p["name"] for p in fig.workbench_data["points"]] == ["one"]


def test_tl_dot_runs_use_the_dot_roof():
    """A correct tl.dot matmul faster than the FMA-chain roof is not a counting error: its
    Run's dtype is the dot unit (even with an elementwise epilogue counting more FLOPs), and
    the CPU's ceilings have a measured ``fp32:dot`` roof for it."""
    import numpy as np

    from workbench.testing import count_work
    from workbench.testing.examples import matmul_kernel
    from workbench.testing.work import Work

    assert Work(flops=4e9, bytes=1.0, flops_by_dtype={"fp32": 3e9, "fp32:dot": 1e9}).dtype \
        == "fp32:dot"
    assert Work(flops=3e9, bytes=1.0, flops_by_dtype={"fp32": 3e9}).dtype == "fp32"
    m = 64
    a, b, c = (np.ones((m, m), np.float32) for _ in range(3))
    work = count_work(matmul_kernel, (1,), a, b, c, m, m, m, BM=64, BN=64, BK=32, GROUP_M=8)
    assert work.flops_by_dtype["fp32:dot"] == 2 * m ** 3 and work.dtype == "fp32:dot"
    ceil = Ceilings(target="cpu", machine="test", bandwidth=10e9,
                    compute={"fp32": 20e9, "fp64": 10e9, "fp32:dot": 100e9})
    run = Run("matmul", seconds=work.flops / 60e9, flops=work.flops, bytes=work.bytes,
              dtype=work.dtype)                                    # 60 GFLOP/s
    (p,) = roofline_points([run], ceil)
    assert p["roof"] == 100e9 and not p["above_roof"] and p["fraction"] == pytest.approx(0.6)


def test_view_table_and_tooltips():
    """The HTML view: an SVG whose every drawn point carries a <title> tooltip with its
    figures, and a table row per point (numbered as on the plot), flagged rows in red."""
    import re

    view = roofline([Run("triad", 1.0, 0.5e9, 2e9, config={"BLOCK": 1024, "num_warps": 4}),
                     Run("wrong", 0.01, 1e9, 1e9)], CEIL)
    page = view._repr_html_()
    assert "<svg" in page and "tex2jax_ignore" in page
    tips = dict(re.findall(r'<g id="wb-roofline-point-(\d+)"[^>]*><title>([^<]*)</title>', page))
    assert set(tips) == {"1", "2"}
    assert "BLOCK=1024, num_warps=4" in tips["1"] and "time 1000 ms" in tips["1"]
    assert "intensity 0.25 FLOP/B" in tips["1"] and "20% of the memory roof" in tips["1"]
    assert "1000% of the memory roof" in tips["2"] and "above its roof" in tips["2"]
    rows = re.findall(r'<tr data-point="(\d+)"[^>]*?(style="color:#c00")?>', page)
    assert rows == [("1", ""), ("2", 'style="color:#c00"')]
    assert view.workbench_data["flagged"] == ["wrong"]          # the figure's data, through


def test_point_above_its_roof_remeasures_the_roof():
    """A roof measured on a busy machine is low; a point above it makes the view measure the
    roof again (here a stand-in re-measurement that finds 4x the bandwidth), keep the higher
    figure, judge the point against it, and say so in its notes."""
    seen = []

    def again(ceilings, points):
        seen.append([p["name"] for p in points if p["above_roof"]])
        better = Ceilings(target="cpu", machine="test", bandwidth=4 * ceilings.bandwidth,
                          compute=dict(ceilings.compute))
        return better, ["memory roof re-measured: 10 -> 40 GB/s (best of both)"]

    fast = Run("vector add", seconds=0.01, flops=0.25e9, bytes=0.3e9)     # 30 GB/s vs 10
    view = roofline([fast], CEIL, remeasure=again)
    assert seen == [["vector add"]]
    d = view.workbench_data
    assert d["bandwidth"] == 40e9 and d["flagged"] == []
    assert "vector add landed above its roof, so the roofs were measured again" in d["notes"][0]
    assert "now under its roof" in d["notes"][1] and "re-measured" in view._repr_html_()
    still = roofline([Run("wrong", 0.001, 1e9, 1e9)], CEIL, remeasure=again)
    assert still.workbench_data["flagged"] == ["wrong"]
    assert "still above the re-measured roof" in still.workbench_data["notes"][1]
    assert roofline([fast], CEIL, remeasure=False).workbench_data["flagged"] == ["vector add"]


def test_ceilings_of_another_machine_are_not_remeasured():
    from workbench.viz.roofline import default_remeasure
    pts = roofline_points([Run("wrong", 0.01, 1e9, 1e9)], CEIL)
    assert default_remeasure(CEIL, pts) == (CEIL, [])


def test_point_numbers_never_overlap():
    """Configurations of one kernel share an intensity, and two with the same code take about
    the same time: their numbers must still be readable, one clear of another."""
    import numpy as np
    rng = np.random.default_rng()
    base = float(rng.uniform(0.05, 0.2))
    same = [Run(f"cfg{k}", seconds=base * (1 + 0.01 * rng.random()), flops=1e8, bytes=4e8,
                config={"BLOCK": 1024, "num_warps": 2 ** k}) for k in range(4)]
    spread = [Run(f"other{k}", seconds=base * 3 ** k, flops=1e8, bytes=4e8) for k in range(1, 9)]
    fig = roofline(same + spread + [Run("x", seconds=base, flops=1e8, bytes=4e8)] * 3, CEIL,
                   remeasure=False)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_gid() and t.get_gid().startswith(
        "wb-roofline-label-")]
    assert sorted(int(t.get_text()) for t in labels) == list(range(1, 16))
    boxes = [t.get_window_extent(renderer) for t in labels]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), (a, b)
