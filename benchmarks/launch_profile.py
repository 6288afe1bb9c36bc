"""Where the host launch time of a cached CUDA kernel goes, piece by piece (needs a GPU + torch).

Each row is the mean time of one piece in microseconds over a loop of ``--n`` calls (garbage
collection on, as in user code), and the median of calls timed one by one. The pieces are the
ones :func:`workbench.runtime.jit.JITFunction.run` executes on its fast path for
``add_kernel[(1,)](x, y, out, n, BLOCK_SIZE=...)`` with torch tensors, plus the raw driver
call made three ways (cuda-bindings, ctypes on libcuda, ours) and Triton's whole launch.

Run: ``PYTHONPATH=. python benchmarks/launch_profile.py [--n 20000]``.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time

# run as ``python benchmarks/<name>.py``: make the repository root importable
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import require_gpu, triton_twins  # noqa: E402
from benchmarks.launch_overhead import median_us  # noqa: E402
from workbench.testing.examples import add_kernel as add  # noqa: E402


def loop_us(fn, n: int) -> float:
    """Mean wall time per call of ``fn()`` over a loop of ``n`` calls (gc on)."""
    for _ in range(max(10, n // 10)):
        fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    opts = ap.parse_args(argv)
    torch = require_gpu("benchmarks/launch_profile.py", __doc__)
    n = opts.n
    x, y = torch.rand(1024, device="cuda"), torch.rand(1024, device="cuda")
    out = torch.empty_like(x)
    launch = lambda: add[(1,)](x, y, out, 1024, BLOCK_SIZE=1024)  # noqa: E731
    launch()
    torch.cuda.synchronize()
    assert torch.allclose(out, x + y)
    kernel = list(add.cache.values())[-1]
    real = kernel._launcher
    rows = []

    def row(name, fn):
        # queue drains: sync before each row so a full launch queue does not block the loop
        torch.cuda.synchronize()
        rows.append((name, loop_us(fn, n), median_us(fn, n)))
        torch.cuda.synchronize()

    row("torch t.data_ptr()", x.data_ptr)
    row("torch t.dtype", lambda: x.dtype)
    row("torch t.get_device()", x.get_device)
    row("torch current raw stream", lambda: torch._C._cuda_getCurrentRawStream(0))
    from workbench.runtime.argkeys import HANDLERS, ParamInfo, handler_for
    h = HANDLERS.get(type(x)) or handler_for(type(x))
    pi = ParamInfo("x", True, None)
    row("argkeys torch handler", lambda: h(x, pi))
    fast = add._fast
    row("fast.key(args, kwargs)", lambda: fast.key((x, y, out, 1024), {"BLOCK_SIZE": 1024}))
    row("full add[(1,)](...)", launch)
    kernel._launcher = lambda g, a: None
    try:
        row("runtime part (no-op launcher)", launch)
    finally:
        kernel._launcher = real
    hit = fast.key((x, y, out, 1024), {"BLOCK_SIZE": 1024})
    entry = add.cache.fast[hit[0]]
    runtime = [hit[1][i] for i in entry.passed]
    row("backend launcher alone", lambda: real((1, 1, 1), runtime))
    raw = [getattr(a, "address", a) for a in runtime]
    row("backend launcher, int args", lambda: real((1, 1, 1), raw))
    # the bare driver call, three ways
    if hasattr(real, "_func"):
        real._load()
        drv = real._dev.driver
        func = real._func
        holders = [ctypes.c_uint64(p) for p in raw[:3]] + [ctypes.c_uint32(raw[3])]
        ptrs = (ctypes.c_void_p * 4)(*[ctypes.addressof(h) for h in holders])
        addr = ctypes.addressof(ptrs)
        packed = real._packed
        if packed is not None:
            row("trampoline PackedLaunch.launch", lambda: packed.launch(1, 1, 1, 0, raw))
        from workbench.backends.cuda_launch import current_stream
        row("cuda_launch.current_stream()", current_stream)
        row("cuda-bindings cuLaunchKernel", lambda: drv.cuLaunchKernel(
            func, 1, 1, 1, 128, 1, 1, 0, 0, addr, 0))
        row("cuda-bindings cuCtxSetCurrent", lambda: drv.cuCtxSetCurrent(real._dev.context))
        lib = ctypes.CDLL("libcuda.so.1")
        f = lib.cuLaunchKernel
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
        fptr = int(func)
        row("ctypes libcuda cuLaunchKernel", lambda: f(fptr, 1, 1, 1, 128, 1, 1, 0, None, addr,
                                                         None))
        g = lib.cuCtxGetCurrent
        cur = ctypes.c_void_p()
        pcur = ctypes.byref(cur)
        row("ctypes libcuda cuCtxGetCurrent", lambda: g(pcur))
    try:
        tadd = triton_twins(add).add_kernel
        tadd[(1,)](x, y, out, 1024, BLOCK_SIZE=1024)
        row("triton add[(1,)](...)", lambda: tadd[(1,)](x, y, out, 1024, BLOCK_SIZE=1024))
    except ImportError:
        pass
    torch.cuda.synchronize()
    print(f"launch pieces, us per call ({n} calls): loop mean (gc on) | median alone (gc off)")
    for name, a, b in rows:
        print(f"  {name:36s} {a:8.2f} {b:8.2f}")


if __name__ == "__main__":
    main()
