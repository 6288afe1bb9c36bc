"""autotune / Config / heuristics with Triton's semantics (triton/runtime/autotuner.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import LaunchError
from workbench.testing import do_bench


class Bench:
    """A quick do_bench for tests that counts how many configs it timed."""

    def __init__(self):
        self.calls = 0

    def __call__(self, fn, quantiles):
        self.calls += 1
        return do_bench(fn, warmup=1, rep=3, quantiles=quantiles, flush_bytes=0)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("WORKBENCH_INTERPRET", raising=False)


def double_src(x_ptr, out_ptr, n, BLOCK: tl.constexpr, REPS: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    for _ in range(REPS):  # REPS times the same work: a clearly slower config
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def add_one_src(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


def accumulate_src(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(acc_ptr + offs, mask=mask)
    tl.store(acc_ptr + offs, acc + tl.load(x_ptr + offs, mask=mask), mask=mask)


GRID = lambda META: (wb.cdiv(META["n"], META["BLOCK"]),)  # noqa: E731
SLOW, FAST = wb.Config({"BLOCK": 1024, "REPS": 64}), wb.Config({"BLOCK": 1024, "REPS": 1})


def tuned_double(configs=(SLOW, FAST), bench=None, **kw):
    return wb.autotune(list(configs), key=["n"], do_bench=bench or Bench(), **kw)(
        wb.jit(double_src))


def run_double(k, n=1 << 16, dtype=np.float32):
    x = np.random.default_rng(n).random(n).astype(dtype)
    out = np.zeros_like(x)
    k[GRID](x, out, n)
    np.testing.assert_array_equal(out, 2 * x)
    return x


def test_picks_the_clearly_faster_config_and_keeps_every_timing():
    bench = Bench()
    k = tuned_double(bench=bench)
    run_double(k)
    assert k.best_config is FAST and bench.calls == 2
    (c0, slow_ms), (c1, fast_ms) = k.autotune_results
    assert (c0, c1) == (SLOW, FAST) and slow_ms > 3 * fast_ms > 0
    assert k.configs_timings[FAST][0] == fast_ms and len(k.configs_timings[SLOW]) == 3
    assert k.cache == {(1 << 16, "float32", "float32"): FAST}


def test_reuses_the_choice_per_key_value_and_dtype():
    bench = Bench()
    k = tuned_double(bench=bench)
    run_double(k)
    run_double(k)
    assert bench.calls == 2  # same n and dtypes: no new tuning
    run_double(k, n=40000)
    assert bench.calls == 4
    run_double(k, n=40000, dtype=np.float64)
    assert bench.calls == 6
    assert set(k.results) == {(1 << 16, "float32", "float32"), (40000, "float32", "float32"),
                              (40000, "float64", "float64")}
    assert all(c is FAST for c in k.cache.values())


def _add_one(**kw):
    configs = [wb.Config({"BLOCK": 64}), wb.Config({"BLOCK": 256})]
    return wb.autotune(configs, key=["n"], do_bench=Bench(), **kw)(wb.jit(add_one_src))


def test_restore_value_leaves_an_in_place_kernel_launched_once():
    x0 = np.arange(1000, dtype=np.float32)
    x = x0.copy()
    _add_one(restore_value=["x_ptr"])[GRID](x, 1000)
    np.testing.assert_array_equal(x, x0 + 1)
    # without it every trial run adds one more
    y = x0.copy()
    _add_one()[GRID](y, 1000)
    assert (y - x0).min() > 2


def test_reset_to_zero_zeroes_before_each_trial_and_the_launch():
    configs = [wb.Config({"BLOCK": 64}), wb.Config({"BLOCK": 256})]
    k = wb.autotune(configs, key=["n"], reset_to_zero=["acc_ptr"], do_bench=Bench())(
        wb.jit(accumulate_src))
    x = np.random.default_rng(0).random(700).astype(np.float32)
    acc = np.full(700, 5.0, np.float32)
    k[GRID](x, acc, 700)
    np.testing.assert_array_equal(acc, x)


def test_configs_that_fail_to_compile_get_infinite_time():
    bad = wb.Config({"BLOCK": 100, "REPS": 1})  # arange needs a power of two
    k = tuned_double(configs=(bad, FAST))
    run_double(k)
    assert k.best_config is FAST
    assert k.autotune_results[0] == (bad, math.inf) and math.isfinite(k.autotune_results[1][1])


def test_pruning_early_prune_and_perf_model_top_k():
    seen = {}

    def early(configs, named_args, **kwargs):
        seen["args"] = sorted(named_args)
        return [c for c in configs if c.kwargs["REPS"] < 10]
    mid = wb.Config({"BLOCK": 1024, "REPS": 2})
    bench = Bench()
    k = tuned_double(configs=(SLOW, mid, FAST), bench=bench,
                     prune_configs_by={"early_config_prune": early})
    run_double(k)
    assert seen["args"] == ["n", "out_ptr", "x_ptr"]
    assert bench.calls == 2 and [c for c, _ in k.autotune_results] == [mid, FAST]
    # perf model: the estimate picks the top 1, used untimed (a single config)
    bench2 = Bench()
    k2 = tuned_double(configs=(SLOW, mid, FAST), bench=bench2,
                      prune_configs_by={"perf_model": lambda **a: -a["REPS"], "top_k": 1})
    run_double(k2)
    assert bench2.calls == 0 and k2.best_config is SLOW
    with pytest.raises(LaunchError, match="no configuration"):
        run_double(tuned_double(prune_configs_by={"early_config_prune": lambda c, a, **k: []}))


def test_heuristics_compute_meta_parameters_from_the_arguments():
    k = wb.heuristics({"BLOCK": lambda a: wb.next_power_of_2(a["n"]),
                       "REPS": lambda a: 1 if a["x_ptr"].dtype == np.float32 else 2})(
        wb.jit(double_src))
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    ck = k[(1,)](x, out, 100)
    np.testing.assert_array_equal(out, 2 * x)
    consts = {a.name: a.value for a in ck.spec.args if a.kind == "constexpr"}
    assert consts == {"BLOCK": 128, "REPS": 1}
    x = np.arange(300, dtype=np.float64)
    out = np.zeros_like(x)
    ck = k[(1,)](x, out, 300)
    np.testing.assert_array_equal(out, 2 * x)
    assert {a.name: a.value for a in ck.spec.args if a.kind == "constexpr"} == \
        {"BLOCK": 512, "REPS": 2}


@pytest.mark.parametrize("order", ["autotune_over_heuristics", "heuristics_over_autotune"])
def test_decorators_stack(order):
    configs = [wb.Config({"REPS": 64}), wb.Config({"REPS": 1})]
    heur = wb.heuristics({"BLOCK": lambda a: 1024})
    tune = wb.autotune(configs, key=["n"], do_bench=Bench())
    k = tune(heur(wb.jit(double_src))) if order == "autotune_over_heuristics" else \
        heur(tune(wb.jit(double_src)))
    run_double(k)
    tuner = k if order == "autotune_over_heuristics" else k.fn
    assert tuner.best_config is configs[1] and k.base_fn.fn is double_src
    assert k.arg_names == ["x_ptr", "out_ptr", "n", "BLOCK", "REPS"]


def test_errors_for_redefined_meta_parameters_and_unknown_names():
    k = tuned_double()
    with pytest.raises(ValueError, match="Conflicting meta-parameters: REPS"):
        k[GRID](np.zeros(4, np.float32), np.zeros(4, np.float32), 4, REPS=3)
    with pytest.warns(UserWarning, match="key names"):  # Triton leaves such keys out
        wb.autotune([FAST], key=["m"])(wb.jit(double_src))
    with pytest.raises(LaunchError, match="restore_value"):
        wb.autotune([FAST], key=["n"], restore_value=["y"])(wb.jit(double_src))


def test_cache_results_keeps_timings_on_disk():
    b1, b2 = Bench(), Bench()
    run_double(tuned_double(bench=b1, cache_results=True))
    k2 = tuned_double(bench=b2, cache_results=True)
    run_double(k2)
    assert b1.calls == 2 and b2.calls == 0 and k2.best_config is FAST
    assert k2.autotune_results[0][1] > k2.autotune_results[1][1]
