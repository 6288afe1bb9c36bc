"""Host launch overhead of a cached one-program kernel (vector add, BLOCK 16), medians.

Rows (microseconds per launch, median over many launches, each timed alone):
- ``full kernel[grid](...)``: the whole launch of an already compiled kernel;
- ``runtime part``: the same call with a no-op launcher patched into the compiled kernel
  (binding, the fast-path key and cache lookup, grid, argument list);
- ``runtime slow path``: the same with the fast path bypassed (bind, specialise, options,
  target, cache lookup), for comparison;
- ``backend launcher alone``: the compiled kernel's launcher called with prepared arguments.

On the CPU with numpy arrays always; on a machine with a CUDA GPU also with torch CUDA tensors
and, when ``triton`` imports, Triton's launch of the same kernel (the yardstick to meet).
Run: ``PYTHONPATH=. python benchmarks/launch_overhead.py [--n 20000] [--json out.json]``.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

import numpy as np

# run as ``python benchmarks/<name>.py``: make the repository root importable
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import triton_twins  # noqa: E402
from workbench.testing.examples import add_kernel as add  # noqa: E402


def median_us(fn, n: int, sync=None) -> float:
    """Median wall time of ``fn()`` in microseconds over ``n`` calls (after n // 10 warm-up
    calls; garbage collection off while timing; ``sync()`` after each call if given)."""
    for _ in range(max(10, n // 10)):
        fn()
    times = []
    clock = time.perf_counter
    gc.disable()
    try:
        for _ in range(n):
            t0 = clock()
            fn()
            if sync is not None:
                sync()
            times.append(clock() - t0)
    finally:
        gc.enable()
    return statistics.median(times) * 1e6


def _noop(grid3, args):
    return None


def measure(x, y, out, n_iter: int, sync=None) -> dict:
    """The rows for one kind of array (numpy, torch CUDA) as name -> microseconds."""
    n = x.shape[0]
    kernel = add[(1,)](x, y, out, n, BLOCK_SIZE=16)
    launch = lambda: add[(1,)](x, y, out, n, BLOCK_SIZE=16)  # noqa: E731
    rows = {"full kernel[grid](...)": median_us(launch, n_iter, sync)}

    real = kernel._launcher
    kernel._launcher = _noop
    try:
        rows["runtime part (no-op launcher)"] = median_us(launch, n_iter)
        slow = lambda: add._run_slow((x, y, out, n), {"BLOCK_SIZE": 16}, (1,), False, None)  # noqa
        rows["runtime slow path (no-op launcher)"] = median_us(slow, max(200, n_iter // 10))
    finally:
        kernel._launcher = real

    from workbench.runtime.binding import specialize
    bound = specialize(add.fn, add.params, dict(x_ptr=x, y_ptr=y, out_ptr=out, n_elements=n,
                                                BLOCK_SIZE=16))
    runtime = list(bound.runtime_args)
    rows["backend launcher alone"] = median_us(lambda: real((1, 1, 1), runtime), n_iter, sync)
    return rows


def triton_row(x, y, out, n_iter: int, sync) -> float | None:
    """Triton's launch of the same kernel (microseconds), or None when triton is missing."""
    try:
        tadd = triton_twins(add).add_kernel
    except ImportError:
        return None
    n = x.shape[0]
    tadd[(1,)](x, y, out, n, BLOCK_SIZE=16)
    return median_us(lambda: tadd[(1,)](x, y, out, n, BLOCK_SIZE=16), n_iter, sync)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="launches per row")
    ap.add_argument("--json", help="also write the table as JSON here")
    opts = ap.parse_args(argv)
    x, y = np.random.rand(16).astype(np.float32), np.random.rand(16).astype(np.float32)
    out = np.empty_like(x)
    table = {"cpu / numpy": measure(x, y, out, opts.n)}
    assert np.allclose(out, x + y)
    try:
        import torch
        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    if cuda:
        tx, ty = torch.rand(16, device="cuda"), torch.rand(16, device="cuda")
        tout = torch.empty_like(tx)
        rows = measure(tx, ty, tout, opts.n)
        rows["full kernel[grid](...) + synchronize"] = measure_sync(tx, ty, tout, opts.n)
        t = triton_row(tx, ty, tout, opts.n, None)
        if t is not None:
            rows["triton kernel[grid](...)"] = t
        table["cuda / torch"] = rows
    print(f"launch overhead, median us per launch ({opts.n} launches per row), "
          f"python {sys.version.split()[0]}")
    for where, rows in table.items():
        print(f"\n{where}")
        for name, us in rows.items():
            print(f"  {name:42s} {us:8.2f}")
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump(table, fh, indent=1)
    return table


def measure_sync(x, y, out, n_iter: int) -> float:
    """The full launch followed by ``torch.cuda.synchronize()`` (launch + kernel + sync)."""
    import torch
    n = x.shape[0]
    return median_us(lambda: add[(1,)](x, y, out, n, BLOCK_SIZE=16), n_iter,
                     torch.cuda.synchronize)


if __name__ == "__main__":
    main()
