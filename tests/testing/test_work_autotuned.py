"""count_work / launch / measure on @autotune and @heuristics kernels: counted with the config
tuned for the launch's key; before tuning, a clear NotTunedError (or the caller's own
meta-parameters)."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.testing import count_work, launch, measure
from workbench.testing.tuned import NotTunedError, resolve_launch


def _add_body():
    @wb.jit
    def add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
                 mask=m)
    return add


def _tuned_add():
    calls = []

    def bench(fn, quantiles=None):
        calls.append(1)
        fn()
        return [float(len(calls) == 1) * 9 + 1.0] * 3     # the first config is slower

    kern = wb.autotune([wb.Config({"BLOCK": 64}, num_warps=2), wb.Config({"BLOCK": 256})],
                       key=["n"], do_bench=bench)(_add_body())
    return kern


def _arrays(n):
    return (np.ones(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32))


def _grid(n):
    return lambda meta: (-(-n // meta["BLOCK"]),)


def test_count_work_before_tuning_says_what_to_do():
    kern = _tuned_add()
    n = 1000
    with pytest.raises(NotTunedError, match=r"launch it once.*or pass BLOCK"):
        count_work(kern, _grid(n), *_arrays(n), n)
    # passing the tuned meta-parameters yourself needs no tuning
    w = count_work(kern, _grid(n), *_arrays(n), n, BLOCK=128)
    assert w.programs == 8 and w.flops == 8 * 128


def test_count_work_uses_the_tuned_config_per_key():
    kern = _tuned_add()
    x, y, o = _arrays(4096)
    kern[_grid(4096)](x, y, o, 4096)                     # tunes key 4096: BLOCK=256 wins
    assert kern.best_config.kwargs == {"BLOCK": 256}
    w = count_work(kern, _grid(4096), x, y, o, 4096)
    assert w.programs == 16 and w.flops == 4096 and w.bytes == 3 * 4096 * 4
    with pytest.raises(NotTunedError, match="has not been tuned"):
        count_work(kern, _grid(100), x[:100], y[:100], o[:100], 100)   # another key
    jit_fn, kw = resolve_launch(kern, (x, y, o, 4096), {})
    assert jit_fn is kern.base_fn and kw == {"BLOCK": 256, "num_warps": 4, "num_stages": 3}


def test_heuristics_under_autotune_resolved():
    inner = wb.heuristics({"BLOCK": lambda a: 512 if a["n"] > 1000 else 32})(_add_body())
    _, kw = resolve_launch(inner, (None, None, None, 5000), {})
    assert kw == {"BLOCK": 512}
    n = 5000
    w = count_work(inner, _grid(n), *_arrays(n), n)
    assert w.programs == 10


def test_launch_and_measure_an_autotuned_kernel():
    kern = _tuned_add()
    n = 1 << 14
    run = measure(launch(kern, _grid(n), *_arrays(n), n), rep=5, warmup=1)
    assert run.config["BLOCK"] == 256
    assert run.work.programs == n // 256 and run.flops == n
