"""Ceilings: measured by the workbench's own micro-kernels (tiny sizes here), cached per machine
and target as JSON, re-measured on refresh or after a compiler change; roofs, ridge, bound;
datasheet figures kept beside the measured ones."""
from __future__ import annotations

import importlib
import json

import pytest

# the module (the package exports the function of the same name)
cm = importlib.import_module("workbench.testing.ceilings")
mk = importlib.import_module("workbench.testing.microkernels")

TINY = {"working_set_bytes": 3 << 16, "compute_ms": 0.5, "rounds": 2, "rep_ms": 4}


@pytest.fixture
def fast(monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path))
    orig = cm._best_ms
    monkeypatch.setattr(cm, "_best_ms", lambda fn, device, rep_ms: orig(fn, device, 2))
    monkeypatch.setattr(mk, "best_ms", lambda fn, device, rep_ms: orig(fn, device, 1))
    return tmp_path


def test_measure_tiny_and_cache_round_trip(fast):
    c = cm.ceilings("cpu", **TINY)
    assert not c.from_cache and c.target == "cpu"
    assert c.bandwidth > 1e6 and set(c.compute) == {"fp32", "fp64", "fp32:dot"}
    assert all(v > 1e6 for v in c.compute.values())
    assert c.details["triad"]["bytes"] == 3 * c.details["triad"]["elements"] * 4
    assert c.details["triad"]["elements"] % 8192 == 0     # whole blocks: 16-byte vectors
    # 4 chains x CHAIN steps x 2 FLOP per iteration, plus 3 adds to start the chains and 3
    # to sum them
    d = c.details["fp32"]
    assert d["flops"] == (8 * mk.CHAIN * d["iters"] + 6) * 256 * d["programs"]
    dot = c.details["fp32:dot"]                          # 128^3 tiles, 2 MNK per dot
    assert dot["flops"] == 2 * 128 ** 3 * dot["iters"] * dot["programs"]
    assert c.method == cm.METHOD
    assert any("under 4x the last-level cache" in n for n in c.notes)
    path = cm.cache_path("cpu", cm.machine_id("cpu"))
    assert path.exists() and path.parent.parent == fast
    stored = json.loads(path.read_text())
    assert stored["bandwidth"] == c.bandwidth and stored["machine"] == c.machine
    again = cm.ceilings("cpu")
    assert again.from_cache and again.bandwidth == c.bandwidth
    assert cm.ceilings("interpreter").from_cache        # the interpreter uses the cpu's roofs


def test_refresh_and_compiler_change_remeasure(fast, monkeypatch):
    c = cm.ceilings("cpu", **TINY)
    calls = []
    real = cm.measure
    monkeypatch.setattr(cm, "measure", lambda *a, **k: calls.append(1) or real(*a, **k))
    cm.ceilings("cpu", refresh=True, **TINY)
    assert calls == [1]
    path = cm.cache_path("cpu", cm.machine_id("cpu"))
    data = json.loads(path.read_text())
    data["compiler"] = "another"
    path.write_text(json.dumps(data))
    cm.ceilings("cpu", **TINY)
    assert calls == [1, 1]
    path.write_text("{not json")
    cm.ceilings("cpu", **TINY)                          # a corrupt file is re-measured
    assert len(calls) == 3 and c.machine
    data = json.loads(path.read_text())
    data["method"] = cm.METHOD - 1                      # measured by the older method (no
    data["compute"].pop("fp32:dot")                     # dot roof, L1-bound FMA kernel)
    path.write_text(json.dumps(data))
    assert "fp32:dot" in cm.ceilings("cpu", **TINY).compute and len(calls) == 4


def test_roof_ridge_bound():
    c = cm.Ceilings(target="cpu", machine="m", bandwidth=10e9,
                    compute={"fp32": 100e9, "fp64": 50e9})
    assert c.roof("fp32") == 100e9 and c.roof("fp32:dot") == 100e9
    assert c.roof("fp16") == 100e9                      # unknown dtype: the fp32 roof
    assert c.ridge("fp32") == 10.0 and c.ridge("fp64") == 5.0
    assert c.bound(1.0) == 10e9 and c.bound(100.0) == 100e9
    assert "10.00 GB/s" in c.to_text()


def test_datasheets_known_gpus():
    h200 = cm.datasheet_for("NVIDIA H200")
    assert h200["bandwidth"] == 4.8e12 and "H200" in h200["source"]
    assert cm.datasheet_for("NVIDIA H100 80GB HBM3")["bandwidth"] == 3.35e12
    assert cm.datasheet_for("NVIDIA H100 PCIe")["bandwidth"] == 2.0e12
    assert cm.datasheet_for("NVIDIA A100-SXM4-80GB")["compute"]["fp16:dot"] == 312e12
    assert cm.datasheet_for("GeForce GTX 1080") == {}


def test_llc_and_sizes(tmp_path):
    assert cm.llc_bytes() >= 1 << 20
    assert cm._parse_size("49152K") == 48 << 20 and cm._parse_size(" 48 MiB") == 48 << 20
    assert cm.default_working_set(48 << 20) >= min(256 << 20, 4 * (48 << 20))


def test_remeasure_keeps_the_higher_roof_and_caches_it(fast):
    """A roof measured while the machine was busy (here: set absurdly low) is measured again
    with the same working set, the higher figure kept, the note says old -> new, and the
    cache holds the new ceilings; a roof already above anything measurable stays."""
    c = cm.ceilings("cpu", **TINY)
    low = cm.Ceilings(**{**cm.asdict(c), "bandwidth": 1.0,
                         "compute": {**c.compute, "fp32": 1.0}})
    again, notes = cm.remeasure(low, memory=True, dtypes=["fp32"])
    assert again.bandwidth > 1e6 and again.compute["fp32"] > 1e6
    assert again.compute["fp64"] == c.compute["fp64"]              # not asked: unchanged
    assert again.details["triad"]["bytes"] == c.details["triad"]["bytes"]
    assert again.details["triad"]["threads"] >= 1
    assert notes[0].startswith("memory roof re-measured: 1e-09 -> ")
    assert notes[1].startswith("fp32 roof re-measured: ")
    assert cm.ceilings("cpu").bandwidth == again.bandwidth          # cached
    high = cm.Ceilings(**{**cm.asdict(c), "bandwidth": 1e18})
    assert cm.remeasure(high)[0].bandwidth == 1e18


def test_gpu_working_set_is_large_enough_to_hide_the_launch(monkeypatch):
    """On the GPU the triad moves 2 GiB (a 256 MiB one lasts ~60 us on an H200, where launch
    latency and the tail cost ~10%), bounded by a quarter of the free device memory."""
    monkeypatch.setattr(cm, "_gpu_free_bytes", lambda: 100 << 30)
    assert cm.default_working_set(60 << 20, "cuda") == 2048 << 20
    monkeypatch.setattr(cm, "_gpu_free_bytes", lambda: 4 << 30)
    assert cm.default_working_set(60 << 20, "cuda") == 1 << 30
