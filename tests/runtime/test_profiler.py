"""workbench.profiler (Triton's proton, minimal): scopes timed on the host clock with their
metrics, nested frames, activate/deactivate, the .hatchet file and the viewer's derived
metrics."""
import json

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench import profiler as proton
from workbench.profiler import viewer


@wb.jit
def _scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


def test_scopes_time_launches_and_the_viewer_derives_rates(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    n = 4096
    x = np.random.default_rng().standard_normal(n).astype(np.float32)
    out = np.empty_like(x)
    proton.start("prof", hook="triton")
    with proton.scope("outer"):
        for _ in range(3):
            with proton.scope("scale", {"bytes": 8 * n, "flops32": n}):
                _scale[(n // 256,)](x, out, n, BLOCK=256)
    proton.deactivate()
    with proton.scope("scale", {"bytes": 1}):  # not recorded
        pass
    proton.activate()
    path = proton.finalize()
    np.testing.assert_array_equal(out, x * 2)
    root = json.load(open(path))[0]
    (outer,) = root["children"]
    (scale,) = outer["children"]
    assert scale["metrics"]["count"] == 3 and scale["metrics"]["bytes"] == 3 * 8 * n
    assert 0 < scale["metrics"]["time (ns)"] <= outer["metrics"]["time (ns)"]
    tree, names = viewer.parse(["time/ms", "gbyte/s", "tflop32/s"], path)
    d = tree["children"][0]["children"][0]["derived"]
    ns = scale["metrics"]["time (ns)"]
    assert d["time/ms"] == pytest.approx(ns / 3 * 1e-6)
    assert d["gbyte/s"] == pytest.approx(3 * 8 * n / ns)
    assert d["tflop32/s"] == pytest.approx(3 * n / ns * 1e-3)
    viewer.print_tree(tree, names)
    assert "scale: time/ms=" in capsys.readouterr().out


def test_one_session_at_a_time_and_nothing_outside_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with proton.scope("ignored"):
        pass
    assert proton.finalize() is None
    proton.start("a")
    with pytest.raises(RuntimeError, match="already running"):
        proton.start("b")
    with pytest.raises(ValueError, match="hatchet"):
        proton.finalize(output_format="chrome_trace")
    assert proton.finalize().endswith("a.hatchet")
