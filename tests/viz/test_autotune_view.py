"""The autotune explorer by data: rows per key and config with the autotuner's timings, the
winner marked, failed configs, the bar plot's data, each config's compiled kernel and compile
report one call away. Timing is a stub do_bench (deterministic per BLOCK)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.viz.autotune_view import autotune_view

FAKE_MS = {64: 3.0, 128: 1.0, 256: 2.0}


def make_kernel(configs):
    timings = iter([])

    def bench(fn, quantiles=None):
        fn()
        ms = next(timings)
        return [ms, ms * 0.9, ms * 1.1]

    @wb.autotune(configs=configs, key=["n"], do_bench=bench)
    @wb.jit
    def scale(x, o, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(o + offs, tl.load(x + offs, mask=m) * 2.0, mask=m)

    def set_times(ms):
        nonlocal timings
        timings = iter(ms)
    return scale, set_times


CONFIGS = [wb.Config({"BLOCK": b}, num_warps=w) for b, w in ((64, 2), (128, 4), (256, 4))]


def launch(kernel, n):
    x, o = np.ones(n, np.float32), np.empty(n, np.float32)
    kernel[lambda meta: (-(-n // meta["BLOCK"]),)](x, o, n)
    return o


def test_table_winner_plot_and_report():
    k, set_times = make_kernel(CONFIGS)
    view = autotune_view(k)
    with pytest.raises(ValueError, match="not been tuned"):
        view.table()
    set_times([3.0, 1.0, 2.0])
    assert (launch(k, 300) == 2).all()
    view = autotune_view(k)
    rows = view.table()
    assert [r.ms for r in rows] == [3.0, 1.0, 2.0]
    assert [r.best for r in rows] == [False, True, False]
    assert rows[1].p20 == pytest.approx(0.9) and rows[1].p80 == pytest.approx(1.1)
    assert view.winner().label == "BLOCK=128, warps=4, stages=3"
    fig = view.figure()
    d = fig.workbench_data
    assert d["ms"] == [3.0, 1.0, 2.0] and d["best"] == [1] and d["failed"] == []
    assert fig.axes[0].get_yscale() == "log"      # a slow config must not flatten the rest
    assert d["labels"][0] == "BLOCK=64, warps=2, stages=3"
    compiled = view.report(2)
    consts = {a.name: a.value for a in compiled.spec.args if a.kind == "constexpr"}
    assert consts == {"BLOCK": 256} and compiled.options.num_warps == 4
    pairs = dict(view.report_pairs(0))
    assert pairs["num_warps"] == "2" and pairs["kernel"] == "scale"
    assert "<- best" in view.to_text() and "best" in view._repr_html_()


def test_several_keys_and_failed_config():
    k, set_times = make_kernel(CONFIGS)
    set_times([3.0, 1.0, 2.0])
    launch(k, 300)
    set_times([1.0, math.inf, 5.0])
    launch(k, 1000)
    view = autotune_view(k)
    assert len(view.keys) == 2
    first, second = view.keys
    assert view.winner(first).index == 1 and view.winner(second).index == 0
    d = view.figure(second).workbench_data
    assert d["failed"] == [1] and d["best"] == [0]
    with pytest.raises(KeyError):
        view.table(("nope",))
