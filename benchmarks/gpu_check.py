"""GPU check: compile with the CUDA backend, run on the GPU, compare with numpy, time with CUDA
events against Triton (when importable). Prints a table.

    PYTHONPATH=. python benchmarks/gpu_check.py

Kernels: vector add of 2**24 fp32 (frontend kernel through the ttgir passes: default layout;
and the hand-laid-out sample with sizePerThread = 4, what Triton's coalesce pass picks) and
row softmax of 4096 x 1000 fp32 (BLOCK 1024, 4 warps). Bandwidth counts bytes read + written
once (GB/s = 1e9 bytes/s). Each time is the median of 50 launches after 5 warm-ups.
"""
from __future__ import annotations

import os
import shutil
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import workbench as wb  # noqa: E402
from workbench.backends import cuda_driver as cd  # noqa: E402
from workbench.backends import nvidia_tools  # noqa: E402
from workbench.backends.cuda import CudaBackend  # noqa: E402
from workbench.codegen.nvptx import samples  # noqa: E402
from workbench.config import CompileContext, Options, Target  # noqa: E402
from workbench.testing.examples import add_kernel, softmax_kernel  # noqa: E402

WARMUP, ITERS = 5, 50


def median_ms(fn) -> float:
    for _ in range(WARMUP):
        fn()
    cd.synchronize()
    times = []
    for _ in range(ITERS):
        with cd.EventTimer() as t:
            fn()
        times.append(t.ms)
    return statistics.median(times)


def compile_sample(module, num_warps=4):
    t0 = time.perf_counter()
    res = CudaBackend(Target.parse("cuda:90")).compile(module, None, Options(num_warps=num_warps),
                                                       CompileContext())
    return res, time.perf_counter() - t0


def triton_times(n, rows, cols):
    try:
        import torch
        import triton

        from benchmarks.common import triton_twins
        twins = triton_twins(add_kernel, softmax_kernel)
    except ImportError as e:
        return None, f"triton not importable ({e})"
    t_add, t_softmax = twins.add_kernel, twins.softmax_kernel

    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    o = torch.empty_like(x)
    a = torch.randn(rows, cols, device="cuda")
    b = torch.empty_like(a)
    g = (triton.cdiv(n, 1024),)
    t_add[g](x, y, o, n, BLOCK_SIZE=1024, num_warps=4)
    t_softmax[(rows,)](b, a, cols, cols, cols, BLOCK_SIZE=1024, num_warps=4)
    torch.cuda.synchronize()
    ok = torch.allclose(o, x + y) and torch.allclose(b, torch.softmax(a, 1), atol=1e-6)

    def bench(f):
        for _ in range(WARMUP):
            f()
        torch.cuda.synchronize()
        ts = []
        for _ in range(ITERS):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            f()
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e))
        return statistics.median(ts)

    return {"add": bench(lambda: t_add[g](x, y, o, n, BLOCK_SIZE=1024, num_warps=4)),
            "softmax": bench(lambda: t_softmax[(rows,)](b, a, cols, cols, cols,
                                                        BLOCK_SIZE=1024, num_warps=4)),
            "ok": ok}, None


def main() -> int:
    ptxas, nvdisasm = nvidia_tools.find_tool("ptxas"), nvidia_tools.find_tool("nvdisasm")
    print(f"ptxas: {ptxas}  nvdisasm: {nvdisasm}  (PATH ptxas: {shutil.which('ptxas')})")
    status = cd.driver_status()
    if status is not None:
        print(f"no GPU run: {status}")
        return 1
    dev = cd.open_device()
    print(f"device: {dev.name}")
    rng = np.random.default_rng(0)
    n, rows, cols = 1 << 24, 4096, 1000
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    dx, dy, do = (cd.DeviceArray.from_numpy(v) for v in (x, y, np.full(n, np.nan, np.float32)))
    da, db = cd.DeviceArray.from_numpy(a), cd.DeviceArray.from_numpy(np.full_like(a, np.nan))
    e = np.exp(a - a.max(axis=1, keepdims=True))
    sm_ref = e / e.sum(axis=1, keepdims=True)
    rows_out = []

    def record(name, res, grid, args, check, nbytes, ctime):
        pa = [v.pointer_arg() if isinstance(v, cd.DeviceArray) else v for v in args]
        res.launcher(grid, pa)
        cd.synchronize()
        ok = check()
        ms = median_ms(lambda: res.launcher(grid, pa))
        rows_out.append((name, ok, ms, nbytes / ms / 1e6, res.metadata.n_regs, ctime))

    res, ct = compile_sample(samples.vector_add(vec=4, n_div16=True))
    record("add 2^24 (sample, spt=4)", res, (n // 1024, 1, 1), [dx, dy, do, n],
           lambda: bool(np.array_equal(do.to_numpy(), x + y)), 12 * n, ct)
    res, ct = compile_sample(samples.softmax(1024))
    record("softmax 4096x1000 (sample)", res, (rows, 1, 1), [db, da, cols, cols, cols],
           lambda: bool(np.allclose(db.to_numpy(), sm_ref, rtol=2e-5, atol=1e-7)),
           8 * rows * cols, ct)
    try:
        t0 = time.perf_counter()
        ck = wb.compile(add_kernel, "*fp32:16", "*fp32:16", "*fp32:16", "i32:16",
                        target="cuda:90", BLOCK_SIZE=1024)
        ct = time.perf_counter() - t0
        do2 = cd.DeviceArray.from_numpy(np.full(n, np.nan, np.float32))

        class R:  # adapt CompiledKernel to record()
            launcher = staticmethod(lambda g, args: ck.launch(g, args))
            metadata = ck.metadata
        record("add 2^24 (frontend)", R, (n // 1024, 1, 1), [dx, dy, do2, n],
               lambda: bool(np.array_equal(do2.to_numpy(), x + y)), 12 * n, ct)
        t0 = time.perf_counter()
        cs = wb.compile(softmax_kernel, "*fp32:16", "*fp32:16", "i32", "i32", "i32",
                        target="cuda:90", BLOCK_SIZE=1024)
        ct = time.perf_counter() - t0
        db2 = cd.DeviceArray.from_numpy(np.full_like(a, np.nan))

        class S:
            launcher = staticmethod(lambda g, args: cs.launch(g, args))
            metadata = cs.metadata
        record("softmax 4096x1000 (frontend)", S, (rows, 1, 1), [db2, da, cols, cols, cols],
               lambda: bool(np.allclose(db2.to_numpy(), sm_ref, rtol=2e-5, atol=1e-7)),
               8 * rows * cols, ct)
    except Exception as ex:  # noqa: BLE001 - report and continue
        print(f"frontend path failed: {type(ex).__name__}: {ex}")
    tri, why = triton_times(n, rows, cols)
    print(f"\n{'kernel':32} {'ok':>5} {'ms':>9} {'GB/s':>8} {'regs':>5} {'compile s':>10}")
    for name, ok, ms, gbs, regs, ctime in rows_out:
        print(f"{name:32} {str(ok):>5} {ms:9.4f} {gbs:8.1f} {str(regs):>5} {ctime:10.3f}")
    if tri is None:
        print(f"triton: {why}")
    else:
        print(f"{'triton add 2^24':32} {str(tri['ok']):>5} {tri['add']:9.4f} "
              f"{12 * n / tri['add'] / 1e6:8.1f}")
        print(f"{'triton softmax 4096x1000':32} {str(tri['ok']):>5} {tri['softmax']:9.4f} "
              f"{8 * rows * cols / tri['softmax'] / 1e6:8.1f}")
    return 0 if all(r[1] for r in rows_out) else 2


if __name__ == "__main__":
    sys.exit(main())
