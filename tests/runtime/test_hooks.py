"""Triton's runtime hooks through workbench.knobs: the launch hooks wrap every launch (fast
path included) with Triton's lazy metadata, the compile hooks run around a compile (a true
jit_cache_hook skips it), and the specialization data they get compiles the same kernel
again through ``preload``."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench import config, knobs
from workbench.errors import LaunchError


@pytest.fixture(autouse=True)
def _clean():
    saved = config.settings.snapshot()
    yield
    config.settings.restore(saved)


def _flops(grid, metadata, args):
    return {"flops": 2 * args["n"], "grid0": grid[0], "warps": metadata.num_warps}


@wb.jit(launch_metadata=_flops)
def axpy(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
             mask=m)


def _inputs(n):
    rng = np.random.default_rng()
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    return x, y, np.zeros_like(x), float(rng.uniform(-2, 2))


def test_launch_hooks_see_every_launch_with_lazy_metadata(backend):
    events = []
    knobs.runtime.launch_enter_hook = lambda md: events.append(("enter", md.get()))
    knobs.runtime.launch_exit_hook = lambda md: events.append(("exit", md))
    n = int(np.random.default_rng().integers(300, 900))
    x, y, out, a = _inputs(n)
    grid = (triton_cdiv := -(-n // 128),)
    for _ in range(3):  # the later launches would take the fast path without hooks
        axpy[grid](x, y, out, a, n, BLOCK=128)
    np.testing.assert_allclose(out, np.float32(a) * x + y, rtol=1e-5, atol=1e-6)
    assert [e[0] for e in events] == ["enter", "exit"] * 3
    md = events[0][1]
    assert md["name"] == "axpy" and md["flops"] == 2 * n and md["grid0"] == triton_cdiv
    assert md["warps"] == 4 and md["stream"] == 0 and md["function"] is not None
    assert events[1][1].get() is md          # the exit hook gets the same metadata


def test_unused_lazy_metadata_never_calls_launch_metadata():
    calls = []

    def counted(grid, metadata, args):
        calls.append(1)
        return {}

    k = wb.jit(axpy.fn, launch_metadata=counted)
    knobs.runtime.launch_exit_hook = lambda md: None  # no enter hook: no metadata at all
    x, y, out, a = _inputs(64)
    k[(1,)](x, y, out, a, 64, BLOCK=64)
    assert calls == []


def test_compile_hooks_and_preload(backend):
    seen = []
    knobs.runtime.jit_cache_hook = lambda **kw: seen.append(("cache", kw)) and False
    knobs.runtime.jit_post_compile_hook = lambda **kw: seen.append(("post", kw))
    k = wb.jit(axpy.fn)
    x, y, out, a = _inputs(200)
    first = k[(2,)](x, y, out, a, 200, BLOCK=128)
    k[(2,)](x, y, out, a, 200, BLOCK=128)    # cached: no compile, no compile hook
    assert [s[0] for s in seen] == ["cache", "post"]
    kw = seen[0][1]
    assert kw["is_manual_warmup"] is False and kw["already_compiled"] is False
    assert kw["fn"].name == "axpy" and kw["fn"].jit_function is k
    c = kw["compile"]
    assert c["signature"] == {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32",
                              "a": "fp32", "n": "i32", "BLOCK": "constexpr"}
    assert c["constants"] == {(5,): 128} and c["num_warps"] == 4
    assert c["configs"][0][(0,)] == [["tt.divisibility", 16]]
    assert "axpy[num_warps=4" in kw["repr"]
    k.device_caches[0][0].clear()
    again = k.preload(c["specialization_data"])
    assert again is not first and again.hash == first.hash
    assert seen[-1][1]["is_manual_warmup"] is True


def test_a_true_cache_hook_skips_compile_and_launch():
    knobs.runtime.jit_cache_hook = lambda **kw: True
    k = wb.jit(axpy.fn)
    x, y, out, a = _inputs(64)
    assert k[(1,)](x, y, out, a, 64, BLOCK=64) is None
    assert not out.any() and len(k.cache) == 0


def test_preload_refuses_another_kernels_data():
    data = []
    knobs.runtime.jit_post_compile_hook = lambda **kw: data.append(
        kw["compile"]["specialization_data"])
    x, y, out, a = _inputs(64)
    wb.jit(axpy.fn)[(1,)](x, y, out, a, 64, BLOCK=64)

    @wb.jit
    def other(x_ptr):
        tl.store(x_ptr, 1.0)
    with pytest.raises(LaunchError, match="is for .*axpy"):
        other.preload(data[0])
    with pytest.raises(LaunchError, match="not the specialization data"):
        other.preload("{}")
