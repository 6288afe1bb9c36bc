"""workbench.knobs: Triton's knob names over the one config object (workbench/config.py).

A knob set from Python changes what the next launch does (fast path included), scopes put
values back, the environment is never written, and Triton's knobs without a meaning here
say so."""
import os

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench import config, knobs


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for name in config.SETTINGS:
        monkeypatch.delenv(name, raising=False)
    saved = config.settings.snapshot()
    yield
    config.settings.restore(saved)


@wb.jit
def _fma_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    b = tl.load(b_ptr + offs, mask=m)
    c = tl.load(c_ptr + offs, mask=m)
    tl.store(out_ptr + offs, a * b + c, mask=m)


def _launch(n=100):
    rng = np.random.default_rng()
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    out = np.full(n, np.nan, np.float32)
    _fma_kernel[(wb.cdiv(n, 32),)](a, b, c, out, n, BLOCK=32)
    np.testing.assert_allclose(out, a * b + c, rtol=1e-6, atol=1e-6)
    return {(str(key[2]), key[1].enable_fp_fusion) for key in _fma_kernel.cache}


def test_interpret_knob_moves_the_next_launch_to_the_interpreter():
    _fma_kernel.cache.clear()
    assert knobs.runtime.interpret is False
    assert _launch() == {("cpu", True)}
    knobs.runtime.interpret = True  # the fast path's key must see the change
    assert config.env_flag("WORKBENCH_INTERPRET") is True
    assert "WORKBENCH_INTERPRET" not in os.environ
    assert ("interpreter", True) in _launch()
    knobs.runtime.interpret = knobs.env
    assert knobs.runtime.interpret is False


def test_default_fp_fusion_knob_reaches_the_options():
    _fma_kernel.cache.clear()
    knobs.language.default_fp_fusion = False
    assert _launch() == {("cpu", False)}
    del knobs.language.default_fp_fusion
    assert ("cpu", True) in _launch()


def test_scope_puts_back_the_values_of_its_own_set(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "from_env"))
    knobs.autotuning.print = True
    with knobs.cache.scope():
        knobs.cache.dir = tmp_path / "inside"
        assert config.cache_dir() == tmp_path / "inside"
        assert knobs.cache.dir == str(tmp_path / "inside")
        knobs.autotuning.print = False  # another set: not put back by cache.scope()
    assert knobs.cache.dir == str(tmp_path / "from_env")
    assert knobs.autotuning.print is False


def test_reset_copy_and_descriptors_as_triton_fixtures_use_them():
    knobs.runtime.debug = True
    fresh = knobs.runtime.copy().reset()
    assert fresh.debug is False and knobs.runtime.debug is False
    keys = {k.key for k in knobs.runtime.knob_descriptors.values()}
    assert keys == {"WORKBENCH_INTERPRET", "WORKBENCH_DEBUG", "WORKBENCH_OVERRIDE_ARCH",
                    "launch_enter_hook", "launch_exit_hook", "jit_cache_hook",
                    "jit_post_compile_hook"}


def test_child_processes_see_what_was_set():
    knobs.workbench.bounds_check = False
    knobs.workbench.cuda_mma = "v2"
    env = config.child_env("/nowhere")
    assert env["WORKBENCH_BOUNDS_CHECK"] == "0" and env["WORKBENCH_CUDA_MMA"] == "v2"
    assert "WORKBENCH_BOUNDS_CHECK" not in os.environ


def test_wrong_values_and_triton_only_knobs_are_refused():
    with pytest.raises(TypeError, match="on/off"):
        knobs.runtime.interpret = "yes"
    with pytest.raises(AttributeError, match="no AMD backend"):
        _ = knobs.amd
    with pytest.raises(AttributeError, match="stage hooks"):
        knobs.runtime.kernel_load_start_hook = print
    with pytest.raises(TypeError, match="callable or None"):
        knobs.runtime.launch_enter_hook = 3
    with pytest.raises(AttributeError, match="not a knob.*interpret, debug"):
        knobs.runtime.interpet = True
