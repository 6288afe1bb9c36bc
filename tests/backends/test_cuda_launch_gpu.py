"""The CUDA launch path on a GPU: the trampoline is used, launches follow torch's current
stream, a thread without a current context can launch, driver errors become LaunchErrors.
Marked ``gpu``: skipped cleanly without a GPU and cuda-bindings (tests/conftest.py)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from workbench.errors import LaunchError, OutOfResources
from workbench.testing.examples import add_kernel

pytestmark = pytest.mark.gpu


def _tensors(torch, n):
    g = torch.Generator(device="cuda").manual_seed(int(np.random.default_rng().integers(2**31)))
    x = torch.randn(n, device="cuda", generator=g)
    y = torch.randn(n, device="cuda", generator=g)
    return x, y, torch.full_like(x, float("nan"))


def _compiled(jit_fn):
    return list(jit_fn.cache.values())[-1]


def test_fast_path_launches_through_the_trampoline():
    torch = pytest.importorskip("torch")
    n = 5000
    x, y, out = _tensors(torch, n)
    for _ in range(3):  # slow path, then fast-path hits
        out.fill_(float("nan"))
        add_kernel[((n + 1023) // 1024,)](x, y, out, n, BLOCK_SIZE=1024)
        torch.cuda.synchronize()
        assert torch.equal(out, x + y)
    launcher = _compiled(add_kernel)._launcher
    assert launcher._packed is not None, "the trampoline could not be built on this machine"


def test_launch_follows_torchs_current_stream():
    torch = pytest.importorskip("torch")
    from workbench.backends.cuda_launch import current_stream
    n = 1 << 20
    x, y, out = _tensors(torch, n)
    add_kernel[(n // 1024,)](x, y, out, n, BLOCK_SIZE=1024)  # compile outside the stream
    torch.cuda.synchronize()
    out.fill_(float("nan"))
    torch.cuda.synchronize()
    s = torch.cuda.Stream()  # a non-blocking stream: it does not wait for the default stream
    with torch.cuda.stream(s):
        assert current_stream() == s.cuda_stream
        torch.cuda._sleep(200_000_000)  # keep stream s busy for a good while
        add_kernel[(n // 1024,)](x, y, out, n, BLOCK_SIZE=1024)
    assert current_stream() == torch.cuda.current_stream().cuda_stream
    # on the default stream right away: the kernel waits behind the sleep on s, so out is
    # still NaN (were it launched on the default stream it would have run already)
    early = out[:1024].cpu()
    assert not s.query()
    assert torch.isnan(early).all()
    s.synchronize()
    assert torch.equal(out, x + y)


def test_a_new_thread_without_a_current_context_can_launch():
    torch = pytest.importorskip("torch")
    n = 3000
    x, y, out = _tensors(torch, n)
    add_kernel[(3,)](x, y, out, n, BLOCK_SIZE=1024)
    torch.cuda.synchronize()
    out.fill_(float("nan"))
    torch.cuda.synchronize()
    errors = []

    def work():
        try:
            add_kernel[(3,)](x, y, out, n, BLOCK_SIZE=1024)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors, errors
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_a_failing_launch_raises_launch_error_with_the_driver_error():
    torch = pytest.importorskip("torch")
    x, y, out = _tensors(torch, 1024)
    ck = add_kernel[(1,)](x, y, out, 1024, BLOCK_SIZE=1024)
    with pytest.raises(OutOfResources, match="grid size along y"):  # checked before the driver
        add_kernel[(1, 70_000)](x, y, out, 1024, BLOCK_SIZE=1024)
    with pytest.raises(LaunchError, match="CUDA_ERROR_INVALID_VALUE"):  # gridDim.y > 65535
        ck.launcher((1, 70_000, 1), [x.data_ptr(), y.data_ptr(), out.data_ptr(), 1024])
    out.fill_(float("nan"))
    add_kernel[(1,)](x, y, out, 1024, BLOCK_SIZE=1024)  # the context is still usable
    torch.cuda.synchronize()
    assert torch.equal(out, x + y)


def test_compiled_kernel_launches_on_the_gpu_through_its_fast_path():
    torch = pytest.importorskip("torch")
    n = 4096 + 17
    x, y, out = _tensors(torch, n)
    ck = add_kernel.warmup(x, y, out, n, BLOCK_SIZE=1024, grid=None)
    for scale in (1.0, 2.0):  # the second launch takes the checked-once fast path
        xs = x * scale
        out.fill_(float("nan"))
        ck[((n + 1023) // 1024,)](xs, y, out, n)
        torch.cuda.synchronize()
        assert torch.equal(out, xs + y)
    assert len(ck._fits) == 1
    with pytest.raises(LaunchError, match="compiled for"):
        ck[(1,)](x.cpu(), y.cpu(), out.cpu(), n)  # host tensors for a cuda kernel
