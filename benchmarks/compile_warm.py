"""Compile time per stage (cold), warm (cached) compile time and host launch overhead.

Usage: ``python benchmarks/compile_warm.py [--repeat 5] [--launches 2000]``

For vector add and a row softmax, on targets ``cpu`` and ``cuda:90`` (compile only unless a
GPU launch is possible): the median over ``--repeat`` cold compiles (a fresh ``@jit`` object
each time and the on-disk cache off (``WORKBENCH_DISK_CACHE=0`` for the run), so nothing is
cached; imports and llvmlite start-up are paid once before timing)
of every step recorded in ``CompiledKernel.timings``; the median warm compile (the same
``workbench.compile`` call answered from the in-memory cache); and for ``cpu`` the median
host overhead of launching a one-program grid through ``kernel[grid](...)`` (binding,
specialisation, cache lookup and the native call). Times in milliseconds (``time.perf_counter``).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout

import workbench as wb  # noqa: E402
from workbench.testing.examples import add_kernel, softmax_kernel  # noqa: E402

CASES = {
    "vector_add": (add_kernel, ("*fp32:16", "*fp32:16", "*fp32:16", "i32:16"),
                   dict(BLOCK_SIZE=1024)),
    "softmax": (softmax_kernel, ("*fp32:16", "*fp32:16", "i32", "i32", "i32"),
                dict(BLOCK_SIZE=1024)),
}
AGGREGATES = ("frontend", "ttir_passes", "backend", "total")


def launch_args(name):
    """Arguments of a one-program launch of case ``name`` (fresh random inputs)."""
    rng = np.random.default_rng()
    if name == "vector_add":
        n = 1024
        x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        return (x, y, np.empty_like(x), n), dict(BLOCK_SIZE=1024)
    x = rng.standard_normal((1, 781)).astype(np.float32)
    return (np.empty_like(x), x, 781, 781, 781), dict(BLOCK_SIZE=1024)


def cold_compiles(fn, sig, consts, target, repeat):
    """Median ms per timing key over ``repeat`` compiles with a fresh jit object each."""
    runs = []
    for _ in range(repeat):
        ck = wb.compile(wb.jit(fn.fn), *sig, target=target, **consts)
        runs.append(dict(ck.timings))
    keys = list(runs[0])
    return {k: 1e3 * statistics.median(r.get(k, 0.0) for r in runs) for k in keys}, ck


def warm_compile(fn, sig, consts, target, repeat=200):
    jf = wb.jit(fn.fn)
    wb.compile(jf, *sig, target=target, **consts)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        wb.compile(jf, *sig, target=target, **consts)
        ts.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(ts)


def launch_overhead(fn, name, launches):
    args, consts = launch_args(name)
    fn[(1,)](*args, **consts)  # compile once
    ts = []
    for _ in range(launches):
        t0 = time.perf_counter()
        fn[(1,)](*args, **consts)
        ts.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(ts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="cold compiles per case (median)")
    ap.add_argument("--launches", type=int, default=2000, help="launches timed (median)")
    ap.add_argument("--targets", default="cpu,cuda:90")
    a = ap.parse_args(argv)
    # cold means compiled: a kernel found in the on-disk cache would replay its old timings
    os.environ["WORKBENCH_DISK_CACHE"] = "0"
    rows = []
    for target in a.targets.split(","):
        for name, (fn, sig, consts) in CASES.items():
            try:
                wb.compile(wb.jit(fn.fn), *sig, target=target, **consts)  # pay imports once
                cold, ck = cold_compiles(fn, sig, consts, target, a.repeat)
            except wb.WorkbenchError as e:
                rows.append((name, target, "n/a: " + str(e).splitlines()[0], ""))
                continue
            for key, ms in cold.items():
                if key not in AGGREGATES:
                    rows.append((name, target, f"cold: {key}", f"{ms:8.3f}"))
            for key in AGGREGATES:
                rows.append((name, target, f"cold: {key}", f"{cold.get(key, 0.0):8.3f}"))
            rows.append((name, target, "warm (cached) compile",
                         f"{warm_compile(fn, sig, consts, target):8.4f}"))
            if target == "cpu":
                rows.append((name, target, "launch overhead, 1-program grid",
                             f"{launch_overhead(fn, name, a.launches):8.4f}"))
    width = max(len(r[2]) for r in rows)
    print(f"{'kernel':<11} {'target':<8} {'step':<{width}} {'ms':>9}")
    print("-" * (32 + width))
    for r in rows:
        print(f"{r[0]:<11} {r[1]:<8} {r[2]:<{width}} {r[3]:>9}")


if __name__ == "__main__":
    main()
