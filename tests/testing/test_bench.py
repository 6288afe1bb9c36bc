"""workbench.testing.do_bench: Triton's run counts, milliseconds, quantiles and return modes."""
from __future__ import annotations

import time

import numpy as np
import pytest

from workbench.runtime.bench import summarize
from workbench.testing import do_bench


class Sleeper:
    """A callable that sleeps ``ms`` milliseconds and counts its calls."""

    def __init__(self, ms):
        self.ms, self.calls = ms, 0

    def __call__(self):
        self.calls += 1
        time.sleep(self.ms / 1e3)


def test_returns_milliseconds():
    t = do_bench(Sleeper(2.0), warmup=2, rep=10, flush_bytes=0)
    assert isinstance(t, float)
    assert 1.9 <= t < 40  # 2 ms of sleep, in ms (not seconds, not microseconds)


def test_run_counts_follow_the_estimate():
    f = Sleeper(1.0)
    times = do_bench(f, warmup=3, rep=10, return_mode="all", flush_bytes=0)
    n_rep = len(times)
    n_warm = f.calls - 1 - 5 - n_rep  # one first call, five estimate runs
    assert 1 <= n_rep <= 10 and 1 <= n_warm <= 3
    assert all(t >= 0.95 for t in times)
    # a run longer than rep is still timed once, with one warm-up
    g = Sleeper(6.0)
    assert len(do_bench(g, warmup=1, rep=2, return_mode="all", flush_bytes=0)) == 1
    assert g.calls == 1 + 5 + 1 + 1


def test_quantiles_and_return_modes():
    f = Sleeper(0.5)
    q = do_bench(f, warmup=1, rep=8, quantiles=(0.5, 0.2, 0.8), flush_bytes=0)
    assert isinstance(q, list) and len(q) == 3
    assert q[1] <= q[0] <= q[2] and q[1] >= 0.45
    one = do_bench(f, warmup=1, rep=3, quantiles=[0.5], flush_bytes=0)
    assert isinstance(one, float)
    for mode in ("min", "max", "mean", "median"):
        assert isinstance(do_bench(f, warmup=1, rep=3, return_mode=mode, flush_bytes=0), float)
    with pytest.raises(ValueError, match="return_mode"):
        do_bench(f, return_mode="avg")
    with pytest.raises(ValueError, match="device"):
        do_bench(f, device="tpu")


def test_summarize_matches_torch_statistics():
    t = [4.0, 1.0, 3.0, 2.0]
    assert summarize(t) == 2.5
    assert summarize(t, return_mode="median") == 2.5
    assert (summarize(t, return_mode="min"), summarize(t, return_mode="max")) == (1.0, 4.0)
    assert summarize(t, return_mode="all") == t
    # linear interpolation, as torch.quantile: position q * (n - 1) in the sorted list
    assert summarize(t, quantiles=[0.5, 0.2, 0.8]) == pytest.approx([2.5, 1.6, 3.4])
    with pytest.raises(ValueError):
        summarize(t, quantiles=[1.5])


def test_cache_flush_writes_a_large_buffer_between_runs(monkeypatch):
    import workbench.runtime.bench as bench
    fills = []
    real = bench._HostClock.flush

    def spy(self):
        fills.append(self.buf.nbytes)
        real(self)
    monkeypatch.setattr(bench._HostClock, "flush", spy)
    f = Sleeper(0.2)
    times = do_bench(f, warmup=1, rep=1, return_mode="all", flush_bytes=1 << 20)
    assert fills and set(fills) == {1 << 20}
    assert len(fills) == 5 + len(times)  # estimate runs and timed runs, not warm-ups
    fills.clear()
    do_bench(f, warmup=1, rep=1)
    assert set(fills) == {64 << 20}


def test_flush_makes_a_memory_bound_function_slower():
    a = np.ones(1 << 19, np.float32)  # 2 MB: fits the last-level cache
    out = np.empty_like(a)
    hot = do_bench(lambda: np.add(a, a, out=out), warmup=2, rep=20, return_mode="min",
                   flush_bytes=0)
    assert hot > 0
    cold = do_bench(lambda: np.add(a, a, out=out), warmup=2, rep=20, return_mode="min")
    assert cold > hot * 1.05
