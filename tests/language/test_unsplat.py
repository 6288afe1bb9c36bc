"""A one-element tile made a scalar (Triton's ``tt.unsplat``): an ``if`` on a one-element
comparison, ``tensor.item()`` and ``tl.reshape(x, ())``, against numpy on both host backends
and on the GPU; the ttir holds ``tt.unsplat`` in Triton's printed form."""
import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl


@wb.jit
def clamp_if_large(x_ptr, out_ptr, limit, explicit: tl.constexpr):
    pid = tl.program_id(0)
    big = tl.load(x_ptr + pid + tl.arange(0, 1)) > limit  # a tile of one element
    if explicit:
        big = big.item()
    v = tl.load(x_ptr + pid)
    if big:
        v = limit
    tl.store(out_ptr + pid, v)


@wb.jit
def first_times_two(x_ptr, out_ptr):
    pid = tl.program_id(0)
    one = tl.load(x_ptr + 2 * pid + tl.arange(0, 1))
    a = one.item()
    b = tl.reshape(one, ())
    tl.store(out_ptr + pid, a + b)


def _check(backend_launch, rng):
    n = 16
    x = rng.integers(-100, 100, n).astype(np.int32)
    limit = int(rng.integers(-20, 20))
    for explicit in (False, True):
        out = np.full(n, -999, np.int32)
        backend_launch(clamp_if_large, (n,), x, out, limit, explicit)
        np.testing.assert_array_equal(out, np.minimum(x, limit))
    y = rng.standard_normal(2 * n).astype(np.float32)
    out = np.zeros(n, np.float32)
    backend_launch(first_times_two, (n,), y, out)
    np.testing.assert_array_equal(out, 2 * y[::2])


def test_unsplat_on_host(backend, rng):
    _check(lambda k, grid, *a: launch(backend, k, grid, *a), rng)


def test_unsplat_ttir_form(monkeypatch):
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    x, out = np.zeros(1, np.int32), np.zeros(1, np.int32)
    ttir = clamp_if_large.warmup(x, out, 0, False, grid=(1,)).asm["ttir"]
    lines = [ln.strip() for ln in ttir.splitlines() if "tt.unsplat" in ln]
    assert len(lines) == 1 and lines[0].split("=", 1)[1].startswith(" tt.unsplat %")
    assert lines[0].split(" : ")[1].startswith("tensor<1xi1>"), lines
    assert "tt.reshape" not in ttir


@pytest.mark.gpu
def test_unsplat_on_gpu(rng):
    torch = pytest.importorskip("torch")

    def on_gpu(kernel, grid, *args):
        dev = [torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) else a for a in args]
        kernel[grid](*dev)
        for a, d in zip(args, dev, strict=True):
            if isinstance(a, np.ndarray):
                a[...] = d.cpu().numpy()
    _check(on_gpu, rng)
