"""Tutorial kernels at realistic sizes: interpreter, CPU backend, numpy (and Triton's
interpreter when ``triton`` is importable, run with ``TRITON_INTERPRET=1`` on the same
kernel source).

Run: ``PYTHONPATH=. python benchmarks/language.py [--quick]``. Prints a markdown table: the
median wall time in seconds of each launch (compilation excluded: one warm-up launch first),
checked against numpy before timing. ``--quick`` uses small sizes (a smoke test).
"""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np

HAVE_TRITON = importlib.util.find_spec("triton") is not None and \
    importlib.util.find_spec("torch") is not None
if HAVE_TRITON:
    os.environ.setdefault("TRITON_INTERPRET", "1")

# run as ``python benchmarks/<name>.py``: make the repository root importable
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import workbench as wb  # noqa: E402
from benchmarks.common import median_seconds as median  # noqa: E402
from benchmarks.common import torch_args, triton_twins  # noqa: E402
from workbench.testing.examples import add_kernel, matmul_kernel, softmax_kernel  # noqa: E402


def cases(quick):
    rng = np.random.default_rng(0)
    n = 1 << (16 if quick else 24)
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    yield (f"vector add {n:,}", add_kernel, lambda: (x, y, np.empty_like(x), n),
           {"BLOCK_SIZE": 1024}, (wb.cdiv(n, 1024),), lambda a: a[2], lambda: x + y, 2)
    m, c = (256, 1000) if quick else (4096, 1000)
    s = rng.standard_normal((m, c)).astype(np.float32)

    def sm():
        e = np.exp(s - s.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)
    yield (f"softmax {m}x{c}", softmax_kernel, lambda: (np.empty_like(s), s, c, c, c),
           {"BLOCK_SIZE": 1024}, (m,), lambda a: a[0], sm, 2)
    for d in ((128,) if quick else (512, 1024)):
        a = rng.standard_normal((d, d)).astype(np.float32)
        b = rng.standard_normal((d, d)).astype(np.float32)
        yield (f"matmul {d}^3 fp32", matmul_kernel,
               lambda a=a, b=b, d=d: (a, b, np.empty((d, d), np.float32), d, d, d),
               {"BM": 64, "BN": 64, "BK": 32, "GROUP_M": 8},
               ((d // 64) ** 2,), lambda args: args[2], lambda a=a, b=b: a @ b, 1)


def time_workbench(fn, target, make, meta, grid, out, ref, reps):
    args = make()
    k = wb.compile(wb.jit(fn.fn), *args, target=target, **meta)
    k[grid](*args)
    np.testing.assert_allclose(out(args), ref(), rtol=1e-3, atol=1e-3)
    return median(lambda: k[grid](*args), reps)


def time_triton(fn, make, meta, grid, out, ref, reps):
    kernel = getattr(triton_twins(fn), fn.__name__)
    args = torch_args(make())
    kernel[grid](*args, **meta)
    np.testing.assert_allclose(out(args).numpy(), ref(), rtol=1e-3, atol=1e-3)
    return median(lambda: kernel[grid](*args, **meta), 1)


def main(argv):
    quick = "--quick" in argv
    print("| kernel | interpreter (s) | CPU backend (s) | numpy (s) | triton interpreter (s) |")
    print("|---|---|---|---|---|")
    for name, fn, make, meta, grid, out, ref, reps in cases(quick):
        row = [time_workbench(fn, t, make, meta, grid, out, ref, reps)
               for t in ("interpreter", "cpu")]
        row.append(median(ref, 3))
        trit = "not installed"
        if HAVE_TRITON:
            try:
                trit = f"{time_triton(fn, make, meta, grid, out, ref, reps):.4g}"
            except Exception as e:  # noqa: BLE001 - report, do not stop the table
                trit = f"failed: {type(e).__name__}"
        print(f"| {name} | {row[0]:.4g} | {row[1]:.4g} | {row[2]:.4g} | {trit} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
