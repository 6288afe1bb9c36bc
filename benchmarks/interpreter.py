"""Interpreter speed vs numpy: vector add (1M, 16M fp32) and row softmax (4096 x 1000 fp32).

Run: ``PYTHONPATH=. python benchmarks/interpreter.py``. Prints one table row per case: the
interpreter's time with programs batched (the default), one program at a time, and numpy's
time for the same computation (median of a few runs, seconds). Results are checked against
numpy before timing.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import workbench as wb
import workbench.language as tl


@wb.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


@wb.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    tl.store(out_ptr + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


def median_time(fn, reps: int) -> float:
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def with_batching(compiled, elems: int):
    """The launcher of a CompiledKernel with its batch size bound set to ``elems``."""
    launcher = compiled._launcher  # the interpreter's Launcher object
    old = launcher.batch_elems
    launcher.batch_elems = elems
    return old


def case_add(n: int, reps: int):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    out = np.full(n, np.nan, np.float32)
    k = wb.compile(add_kernel, x, y, out, n, BLOCK=1024, target="interpreter")
    grid = ((n + 1023) // 1024,)
    k[grid](x, y, out, n)
    assert np.array_equal(out, x + y)
    t_batch = median_time(lambda: k[grid](x, y, out, n), reps)
    old = with_batching(k, 0)
    t_seq = median_time(lambda: k[grid](x, y, out, n), max(1, reps // 2))
    with_batching(k, old)
    t_np = median_time(lambda: np.add(x, y, out=out), reps)
    return f"vector add {n >> 20}M fp32 (BLOCK 1024)", t_batch, t_seq, t_np


def case_softmax(rows: int, cols: int, reps: int):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.full_like(x, np.nan)
    k = wb.compile(softmax_kernel, out, x, cols, cols, cols, BLOCK=1024, target="interpreter")
    k[(rows,)](out, x, cols, cols, cols)
    e = np.exp(x - x.max(1, keepdims=True))
    assert np.allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    t_batch = median_time(lambda: k[(rows,)](out, x, cols, cols, cols), reps)
    old = with_batching(k, 0)
    t_seq = median_time(lambda: k[(rows,)](out, x, cols, cols, cols), max(1, reps // 2))
    with_batching(k, old)

    def np_softmax():
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)
    t_np = median_time(np_softmax, reps)
    return f"softmax {rows}x{cols} fp32 (BLOCK 1024)", t_batch, t_seq, t_np


def main() -> None:
    rows = [case_add(1 << 20, 5), case_add(1 << 24, 3), case_softmax(4096, 1000, 3)]
    head = f"{'case':36s} {'interp (s)':>11s} {'1-by-1 (s)':>11s} {'numpy (s)':>10s} {'ratio':>7s}"
    print(head)
    print("-" * len(head))
    for name, tb, ts, tn in rows:
        print(f"{name:36s} {tb:11.4f} {ts:11.4f} {tn:10.4f} {tb / tn:7.1f}x")


if __name__ == "__main__":
    main()
