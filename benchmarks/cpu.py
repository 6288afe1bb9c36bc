"""The CPU backend against numpy, side by side in one process.

Run: ``PYTHONPATH=. python benchmarks/cpu.py [--quick]``. Prints one markdown table (and a
few lines about the machine and numpy's BLAS); writes no file. Each row times the
workbench kernel with bounds checks on (the default) and off, and numpy's best expression,
interleaved run by run (so load from other processes hits all of them alike), each run after
writing a 64 MiB buffer to flush the caches; the figures are medians, in milliseconds.
Targets (one run on the 2-core development machine):

- vector add, 16M fp32: >= 0.95x numpy's ``np.add(x, y, out=o)`` throughput at every
  ``BLOCK_SIZE`` from 1024 to 16384, and >= 85% of the triad bandwidth measured by
  :func:`workbench.testing.ceilings.measure_bandwidth`
  (STREAM counting, 12 bytes per element, best of its runs);
- fused softmax 4096 x 1000 fp32: >= 2x numpy's best expression;
- layer norm forward 4096 x 1024 fp32: >= 1.5x numpy's best expression;
- matmul 1024^3 fp32: >= 0.3x numpy (BLAS);
- cold compile of softmax (fresh ``@jit``, no disk cache): < 200 ms;
- warm launch overhead, one-program grid: < 20 us (the backend's launcher; the full
  ``kernel[grid](...)`` path, which adds the runtime's argument binding, is printed too);
- bounds checks cost < 10% on each kernel row.

``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` (set on some machines of this workplace for
old OpenBLAS builds) are removed together from this process's environment before numpy is
imported, so numpy runs the BLAS kernel it picks for this CPU; the header says which
(threadpoolctl when installed, else numpy's build configuration). When ``triton`` and
``torch`` are importable, the same kernels also run under ``TRITON_INTERPRET=1`` (one run).
"""
from __future__ import annotations

import os

_UNSET = {k: os.environ.pop(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
          if k in os.environ}

import importlib.util  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

HAVE_TRITON = importlib.util.find_spec("triton") is not None and \
    importlib.util.find_spec("torch") is not None

# run as ``python benchmarks/<name>.py``: make the repository root importable
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import workbench as wb  # noqa: E402
from benchmarks.common import torch_args, triton_twins  # noqa: E402
from workbench.testing.ceilings import cpu_model  # noqa: E402
from workbench.testing.examples import (  # noqa: E402
    add_kernel,
    layer_norm_fwd_kernel,
    matmul_kernel,
    softmax_kernel,
)


# ----------------------------------------------------------------------------- timing
class Flusher:
    """Writes a 64 MiB buffer (larger than this machine's caches' share per core)."""

    def __init__(self, nbytes=64 << 20):
        self.buf = np.empty(nbytes, np.uint8)
        self.k = 0

    def __call__(self):
        self.k = (self.k + 1) & 0xFF
        self.buf.fill(self.k)


def interleaved(fns: dict, reps: int, flush) -> dict:
    """Median seconds of each callable in ``fns``, timed in turn, ``reps`` rounds."""
    for fn in fns.values():
        fn()
    times = {k: [] for k in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            flush()
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    interleaved.best = {k: min(v) for k, v in times.items()}
    return {k: statistics.median(v) for k, v in times.items()}


def per_call(fn, n: int, rounds: int = 7) -> float:
    """Median over ``rounds`` of the mean seconds per call of ``n`` back-to-back calls."""
    fn()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t0) / n)
    return statistics.median(out)


def best_numpy(candidates: dict, reps: int, flush) -> tuple:
    """(name, median seconds) of the fastest numpy candidate."""
    t = interleaved(candidates, reps, flush)
    name = min(t, key=t.get)
    return name, t[name]


# ----------------------------------------------------------------------------- machine
def blas_info() -> str:
    """Which BLAS library and kernel (core type) numpy uses."""
    try:
        from threadpoolctl import threadpool_info
        libs = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if libs:
            i = libs[0]
            return (f"{i.get('internal_api')} {i.get('version')} "
                    f"(kernel {i.get('architecture')}, {i.get('num_threads')} threads)")
    except ImportError:
        pass
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        return (f"{blas.get('name')} {blas.get('version')} (threadpoolctl not installed: "
                f"kernel not reported)")
    except Exception as exc:  # noqa: BLE001 - informational only
        return f"unknown ({type(exc).__name__})"


# ----------------------------------------------------------------------------- rows
def compile_pair(fn, args, **meta):
    """The kernel compiled with bounds checks on and off."""
    jf = wb.jit(fn.fn)
    return (wb.compile(jf, *args, target="cpu", **meta),
            wb.compile(jf, *args, target="cpu", bounds_check=False, **meta))


def row_kernel(name, fn, args, meta, grid, out, ref, numpy_cands, reps, flush,
               check_tol=1e-4):
    on, off = compile_pair(fn, args, **meta)
    on[grid](*args)
    np.testing.assert_allclose(out(), ref(), rtol=check_tol, atol=check_tol)
    off[grid](*args)
    np.testing.assert_allclose(out(), ref(), rtol=check_tol, atol=check_tol)
    np_name, np_t = best_numpy(numpy_cands, reps, flush)
    t = interleaved({"on": lambda: on[grid](*args), "off": lambda: off[grid](*args),
                     "numpy": numpy_cands[np_name]}, reps, flush)
    return {"name": name, "on": t["on"], "off": t["off"], "numpy": t["numpy"],
            "numpy_expr": np_name, "best_on": interleaved.best["on"]}


def triton_time(fn, args, meta, grid) -> str:
    if not HAVE_TRITON:
        return "not installed"
    try:
        os.environ["TRITON_INTERPRET"] = "1"
        kernel = getattr(triton_twins(fn), fn.__name__)
        targs = torch_args(args)
        kernel[grid](*targs, **meta)
        t0 = time.perf_counter()
        kernel[grid](*targs, **meta)
        return f"{(time.perf_counter() - t0) * 1e3:.4g}"
    except Exception as exc:  # noqa: BLE001 - report, do not stop the table
        return f"failed: {type(exc).__name__}"


def main(argv) -> None:
    quick = "--quick" in argv
    reps = 3 if quick else 11
    flush = Flusher(4 << 20 if quick else 64 << 20)
    rng = np.random.default_rng(0)
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; numpy {np.__version__}, "
          f"BLAS: {blas_info()}")
    print(f"load average at start (other processes share the 2 cores): "
          f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    if _UNSET:
        print("unset for this process: " + ", ".join(f"{k}={v}" for k, v in _UNSET.items()))
    rows, checks = [], []

    # vector add
    n = 1 << (18 if quick else 24)
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    o = np.empty_like(x)
    grid = (wb.cdiv(n, 1024),)
    r = row_kernel(f"vector add {n:,} fp32, BLOCK_SIZE=1024", add_kernel, (x, y, o, n),
                   {"BLOCK_SIZE": 1024}, grid, lambda: o, lambda: x + y, {"np.add(x, y, out=o)":
                                               lambda: np.add(x, y, out=o)}, reps, flush)
    r["target"] = 1 / 0.95
    rows.append(r)
    for block in ((4096,) if quick else (2048, 4096, 8192, 16384)):  # the same at other tiles
        rb = row_kernel(f"vector add {n:,} fp32, BLOCK_SIZE={block}", add_kernel, (x, y, o, n),
                        {"BLOCK_SIZE": block}, (wb.cdiv(n, block),), lambda: o, lambda: x + y,
                        {"np.add(x, y, out=o)": lambda: np.add(x, y, out=o)}, reps, flush)
        rb["target"] = 1 / 0.95
        rb["triton"] = "(the 1024 row)"
        rows.append(rb)
    from workbench.testing.ceilings import measure_bandwidth
    triad = measure_bandwidth("cpu", (4 << 20) if quick else (256 << 20),
                              rep_ms=100 if quick else 300)["bandwidth"]
    add_bw, add_best = 3 * n * 4 / r["on"], 3 * n * 4 / r["best_on"]
    checks.append(("vector add bandwidth (STREAM bytes, best run; median run) vs triad "
                   "(ceilings.measure_bandwidth, best run)",
                   f"{add_best / 1e9:.2f} GB/s ({add_bw / 1e9:.2f} GB/s) of {triad / 1e9:.2f} "
                   f"GB/s = {add_best / triad:.0%} ({add_bw / triad:.0%})", ">= 85%",
                   add_best / triad >= 0.85))

    # softmax
    m, c = (256, 1000) if quick else (4096, 1000)
    s = rng.standard_normal((m, c)).astype(np.float32)
    so = np.empty_like(s)
    tmp = np.empty_like(s)

    def np_softmax_inplace():
        np.subtract(s, s.max(axis=1, keepdims=True), out=tmp)
        np.exp(tmp, out=tmp)
        np.divide(tmp, tmp.sum(axis=1, keepdims=True), out=tmp)

    def np_softmax_expr():
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    r = row_kernel(f"softmax {m}x{c} fp32", softmax_kernel, (so, s, c, c, c), {"BLOCK_SIZE": 1024},
                   (m,), lambda: so, np_softmax_expr,
                   {"in-place ufuncs": np_softmax_inplace, "expression": np_softmax_expr},
                   reps, flush)
    r["target"] = 0.5
    rows.append(r)

    # layer norm
    m, nn = (256, 1024) if quick else (4096, 1024)
    xl = rng.standard_normal((m, nn)).astype(np.float32)
    wl, bl = rng.standard_normal(nn).astype(np.float32), rng.standard_normal(nn).astype(np.float32)
    yl, mean, rstd = np.empty_like(xl), np.empty(m, np.float32), np.empty(m, np.float32)
    eps = 1e-5
    t2 = np.empty_like(xl)

    def np_ln_expr():
        mu = xl.mean(axis=1, keepdims=True)
        xc = xl - mu
        return xc / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + eps) * wl + bl

    def np_ln_inplace():
        mu = xl.mean(axis=1, keepdims=True)
        np.subtract(xl, mu, out=t2)
        var = np.einsum("ij,ij->i", t2, t2)[:, None] / nn
        np.multiply(t2, 1.0 / np.sqrt(var + eps), out=t2)
        np.multiply(t2, wl, out=t2)
        np.add(t2, bl, out=t2)
    r = row_kernel(f"layer norm fwd {m}x{nn} fp32", layer_norm_fwd_kernel,
                   (xl, yl, wl, bl, mean, rstd, nn, nn, eps), {"BLOCK_SIZE": 1024}, (m,),
                   lambda: yl, np_ln_expr,
                   {"expression": np_ln_expr, "in-place + einsum": np_ln_inplace}, reps, flush,
                   check_tol=1e-3)
    r["target"] = 1 / 1.5
    rows.append(r)

    # matmul
    d = 256 if quick else 1024
    a = rng.standard_normal((d, d)).astype(np.float32)
    bm = rng.standard_normal((d, d)).astype(np.float32)
    cm = np.empty((d, d), np.float32)
    meta = {"BM": 64, "BN": 64, "BK": 32, "GROUP_M": 8}
    r = row_kernel(f"matmul {d}^3 fp32", matmul_kernel, (a, bm, cm, d, d, d), meta,
                   ((d // 64) ** 2,), lambda: cm, lambda: a @ bm,
                   {"a @ b": lambda: np.matmul(a, bm)}, max(3, reps // 2), flush,
                   check_tol=2e-3)
    r["target"] = 1 / 0.3
    rows.append(r)

    print()
    print("| kernel | workbench, bounds on (ms) | bounds off (ms) | bounds-check cost | numpy "
          "(ms) | numpy / workbench | target | met | triton interpreter (ms) |")
    print("|---|---|---|---|---|---|---|---|---|")
    specs = {"vector add": (add_kernel, (x, y, o, n), {"BLOCK_SIZE": 1024}, (wb.cdiv(n, 1024),)),
             "softmax": (softmax_kernel, (so, s, c, c, c), {"BLOCK_SIZE": 1024}, (s.shape[0],)),
             "layer norm": (layer_norm_fwd_kernel, (xl, yl, wl, bl, mean, rstd, nn, nn, eps),
                            {"BLOCK_SIZE": 1024}, (xl.shape[0],)),
             "matmul": (matmul_kernel, (a, bm, cm, d, d, d), meta, ((d // 64) ** 2,))}
    for r in rows:
        ratio = r["numpy"] / r["on"]
        want = 1 / r["target"]
        cost = r["on"] / r["off"] - 1
        key = next(k for k in specs if r["name"].startswith(k))
        trit = r.get("triton") or triton_time(*specs[key])
        print(f"| {r['name']} | {r['on'] * 1e3:.3f} | {r['off'] * 1e3:.3f} | {cost:+.1%} | "
              f"{r['numpy'] * 1e3:.3f} ({r['numpy_expr']}) | {ratio:.2f}x | >= {want:.2f}x, "
              f"checks < 10% | {'yes' if ratio >= want and cost < 0.10 else 'NO'} | "
              f"{trit} |")

    # cold compile
    os.environ["WORKBENCH_DISK_CACHE"] = "0"
    cold = []
    for _ in range(3 if quick else 5):
        jf = wb.jit(softmax_kernel.fn)
        t0 = time.perf_counter()
        wb.compile(jf, so, s, c, c, c, target="cpu", BLOCK_SIZE=1024)
        cold.append(time.perf_counter() - t0)
    os.environ.pop("WORKBENCH_DISK_CACHE")
    cold_ms = statistics.median(cold) * 1e3
    checks.append(("cold compile of softmax (median of fresh @jit, no disk cache)",
                   f"{cold_ms:.1f} ms", "< 200 ms", cold_ms < 200))

    # launch overhead
    z = np.zeros(16, np.float32)
    jf = wb.jit(add_kernel.fn)
    k1 = wb.compile(jf, z, z, z, 16, target="cpu", BLOCK_SIZE=16)
    from workbench.backends.base import PointerArg
    pa = PointerArg(z.ctypes.data, z.ctypes.data, z.ctypes.data + z.nbytes, 4, z)
    launcher = k1._launcher
    n_calls = 200 if quick else 3000
    t_launcher = per_call(lambda: launcher((1, 1, 1), [pa, pa, pa, 16]), n_calls) * 1e6
    t_compiled = per_call(lambda: k1[(1,)](z, z, z, 16), n_calls) * 1e6
    t_jit = per_call(lambda: jf[(1,)](z, z, z, 16, BLOCK_SIZE=16), n_calls) * 1e6
    checks.append(("warm launch overhead, 1 program (backend launcher)", f"{t_launcher:.1f} us",
                   "< 20 us", t_launcher < 20))
    checks.append(("  same through compiled[grid](...) / jit[grid](...)",
                   f"{t_compiled:.1f} us / {t_jit:.1f} us", "(runtime binding)", None))

    print()
    print("| check | measured | target | met |")
    print("|---|---|---|---|")
    for name, val, target, ok in checks:
        print(f"| {name} | {val} | {target} | {'' if ok is None else ('yes' if ok else 'NO')} |")


if __name__ == "__main__":
    main(sys.argv[1:])
