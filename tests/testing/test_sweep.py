"""Sweeps over sizes and configs with baselines (skipped when not installed), metrics from the
kernel's counted work, the table (text, HTML, pivot), runs for the roofline, the line plot data;
measure() of one launch. Timing is made instant with a stub do_bench."""
from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from workbench.testing.examples import add_kernel

sw = importlib.import_module("workbench.testing.sweep")  # the module, not the function


@pytest.fixture
def fake_time(monkeypatch):
    """time_ms calls fn once (it must work) and returns 1 ms per 1000 elements of work."""
    def time_ms(fn, device="cpu", warmup=25, rep=100):
        fn()
        return 2.0
    monkeypatch.setattr(sw, "time_ms", time_ms)


def bench(n):
    x, y, o = np.ones(n, np.float32), np.ones(n, np.float32), np.empty(n, np.float32)
    return sw.launch(add_kernel, (-(-n // 256),), x, y, o, n, BLOCK_SIZE=256)


def numpy_add(n):
    x, y, o = np.ones(n, np.float32), np.ones(n, np.float32), np.empty(n, np.float32)
    return lambda: np.add(x, y, out=o)


def torch_add(n):
    import torch_is_not_here  # noqa: F401 - stands for an uninstalled baseline


def test_sweep_sizes_with_baselines(fake_time):
    res = sw.sweep(bench, [256, 1024], {"numpy": numpy_add, "torch": torch_add},
                   metric="GB/s")
    assert res.providers == ["add_kernel", "numpy"] and res.xs == [256, 1024]
    assert any("torch skipped" in n for n in res.notes)
    row = res.rows[2]
    assert row["provider"] == "add_kernel" and row["bytes"] == 3 * 1024 * 4
    assert row["value"] == pytest.approx(3 * 1024 * 4 / 2e-3 / 1e9)
    table = res.table()
    assert table["1024"]["numpy"] == table["1024"]["add_kernel"]   # same work, same time
    text = res.to_text()
    assert "add_kernel (GB/s)" in text and "numpy (GB/s)" in text and "1024" in text
    assert "<table" in res._repr_html_()
    runs = res.runs()
    assert [r.bytes for r in runs] == [3 * 256 * 4, 3 * 1024 * 4]
    assert runs[0].seconds == pytest.approx(2e-3) and runs[0].config == {"size": 256}
    fig = res.plot()
    series = fig.workbench_data["series"]
    assert series["add_kernel"][0] == [256, 1024] and fig.workbench_data["metric"] == "GB/s"


def test_sweep_configs_and_flops_metric(fake_time):
    n = 512
    x, y, o = np.ones(n, np.float32), np.ones(n, np.float32), np.empty(n, np.float32)

    def cfg_bench(cfg):
        return sw.launch(add_kernel, (n // cfg["BLOCK_SIZE"],), x, y, o, n, **cfg)

    res = sw.sweep(cfg_bench, [{"BLOCK_SIZE": 128}, {"BLOCK_SIZE": 256}], metric="GFLOP/s")
    assert res.x_name == "config" and list(res.table()) == ["BLOCK_SIZE=128", "BLOCK_SIZE=256"]
    assert res.rows[0]["value"] == pytest.approx(512 / 2e-3 / 1e9)
    assert res.best()["x"] in ({"BLOCK_SIZE": 128}, {"BLOCK_SIZE": 256})
    fig = res.plot()
    assert fig.workbench_data["labels"] == ["BLOCK_SIZE=128", "BLOCK_SIZE=256"]


def test_plain_callable_with_user_work_and_failures(fake_time):
    calls = []

    def make(n):
        if n == 3:
            return lambda: 1 / 0
        return lambda: calls.append(n)

    res = sw.sweep(make, [1, 3], metric="TFLOP/s", flops=lambda n: n * 1e9, name="mine")
    assert res.rows[0]["value"] == pytest.approx(1e9 / 2e-3 / 1e12)
    assert math.isnan(res.rows[1]["value"]) and any("ZeroDivisionError" in n for n in res.notes)
    with pytest.raises(ValueError, match="metric"):
        sw.sweep(make, [1], metric="furlongs")


def test_measure_one_launch_really_timed():
    n = 1024
    lnch = bench(n)
    run = sw.measure(lnch, warmup=1, rep=3)
    assert run.name == "add_kernel" and run.target == "cpu" and run.seconds > 0
    assert run.flops == n and run.bytes == 3 * n * 4 and run.work.mode == "static"
