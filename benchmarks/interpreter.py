"""Interpreter speed vs numpy: vector add (1M, 16M fp32) and row softmax (4096 x 1000 fp32).

Run: ``PYTHONPATH=. python benchmarks/interpreter.py [--quick]`` (``--quick``: 64K-element
vector add and a 256 x 1000 softmax, a smoke test). Prints one table row per case: the
interpreter's time with programs batched (the default), one program at a time, and numpy's
time for the same computation (median of a few runs, seconds). Results are checked against
numpy before timing.
"""
from __future__ import annotations

import os
import sys

import numpy as np

# run as ``python benchmarks/<name>.py``: make the repository root importable
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import workbench as wb  # noqa: E402
from benchmarks.common import median_seconds as median_time  # noqa: E402
from workbench.testing.examples import add_kernel, softmax_kernel  # noqa: E402


def with_batching(compiled, elems: int):
    """The launcher of a CompiledKernel with its batch size bound set to ``elems``."""
    launcher = compiled._launcher  # the interpreter's Launcher object
    old = launcher.batch_elems
    launcher.batch_elems = elems
    return old


def batched_and_sequential(compiled, launch, reps: int):
    """Median seconds of ``launch()`` with programs batched (``reps`` runs), then one program
    at a time (half as many runs, at least one)."""
    t_batch = median_time(launch, reps)
    old = with_batching(compiled, 0)
    t_seq = median_time(launch, max(1, reps // 2))
    with_batching(compiled, old)
    return t_batch, t_seq


def case_add(n: int, reps: int):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    out = np.full(n, np.nan, np.float32)
    k = wb.compile(add_kernel, x, y, out, n, BLOCK_SIZE=1024, target="interpreter")
    grid = ((n + 1023) // 1024,)
    k[grid](x, y, out, n)
    assert np.array_equal(out, x + y)
    t_batch, t_seq = batched_and_sequential(k, lambda: k[grid](x, y, out, n), reps)
    t_np = median_time(lambda: np.add(x, y, out=out), reps)
    size = f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"
    return f"vector add {size} fp32 (BLOCK 1024)", t_batch, t_seq, t_np


def case_softmax(rows: int, cols: int, reps: int):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.full_like(x, np.nan)
    k = wb.compile(softmax_kernel, out, x, cols, cols, cols, BLOCK_SIZE=1024,
                   target="interpreter")
    k[(rows,)](out, x, cols, cols, cols)
    e = np.exp(x - x.max(1, keepdims=True))
    assert np.allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    t_batch, t_seq = batched_and_sequential(k, lambda: k[(rows,)](out, x, cols, cols, cols),
                                            reps)

    def np_softmax():
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)
    t_np = median_time(np_softmax, reps)
    return f"softmax {rows}x{cols} fp32 (BLOCK 1024)", t_batch, t_seq, t_np


def main(argv) -> None:
    if "--quick" in argv:
        rows = [case_add(1 << 16, 3), case_softmax(256, 1000, 2)]
    else:
        rows = [case_add(1 << 20, 5), case_add(1 << 24, 3), case_softmax(4096, 1000, 3)]
    head = f"{'case':36s} {'interp (s)':>11s} {'1-by-1 (s)':>11s} {'numpy (s)':>10s} {'ratio':>7s}"
    print(head)
    print("-" * len(head))
    for name, tb, ts, tn in rows:
        print(f"{name:36s} {tb:11.4f} {ts:11.4f} {tn:10.4f} {tb / tn:7.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
