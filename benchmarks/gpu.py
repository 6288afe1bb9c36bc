"""The workbench's CUDA backend next to Triton 3.6 on one GPU, same inputs.

Each kernel is written once, in Triton's language, in :mod:`workbench.testing.examples`
(``KERNELS`` below names them) and run twice: as the workbench's ``@jit`` kernel and as its
``triton.jit`` twin (the same source, :func:`benchmarks.common.triton_twins`). Times
are ``triton.testing.do_bench`` (ms, L2 flushed between runs, CUDA events) on the same torch
tensors; outputs are checked against torch. Our kernel is launched once through
``kernel[grid](...)`` (compiling it) and then timed through its compiled launcher with the
arguments already bound, so the time is the GPU's, not our Python binding's (which the
"host launch overhead" lines measure separately: wall time per call of an already-compiled
tiny kernel, 2000 calls, then one synchronize). For matmul both sides take the best of the
same tile configurations (``MATMUL_CONFIGS``, each printed; BM, BN, BK, warps, stages; on
sm_90 our dot is wgmma, ``WORKBENCH_CUDA_MMA=v2`` forces mma.sync for comparison). Matmul has
two rows: ``matmul_fp16_kernel`` (addresses recomputed from the loop index) and
:func:`~workbench.testing.examples.matmul_tutorial_kernel`, the Triton tutorial's own form, which advances its pointers in
the loop (``a_ptrs += BLOCK_SIZE_K * stride_ak``) and masks the K tail.

Run on a GPU machine: ``python benchmarks/gpu.py [--only SUBSTRING]`` (needs torch, triton,
cuda-bindings). Prints one table.
"""  # noqa: E501
from __future__ import annotations

import os
import sys
import time
import traceback
import types

# run as ``python benchmarks/<name>.py``: make the repository root importable
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.common import require_gpu, triton_twins  # noqa: E402

#: The example kernels this benchmark runs (:mod:`workbench.testing.examples`).
KERNELS = ("add_kernel", "softmax_fp32_acc_kernel", "layer_norm_row_kernel",
           "matmul_fp16_kernel", "matmul_tutorial_kernel", "attention_fwd_kernel")


def _bench(fn):
    from triton.testing import do_bench
    fn()
    return do_bench(fn, warmup=25, rep=200)


def bound_launcher(jit_fn, grid, args):
    """After one ``jit_fn[grid](*args, ...)`` launch: the compiled launcher with the passed
    arguments pre-converted (tensors -> device addresses); constexprs dropped."""
    kern = list(jit_fn.cache.values())[-1]
    # ``args`` are the non-constexpr parameters in order; ints specialised to 1 are not passed
    params = [a for a in kern.spec.args if a.kind != "constexpr"]
    raw = [a.data_ptr() if hasattr(a, "data_ptr") else a
           for a, p in zip(args, params, strict=False) if p.passed]
    grid3 = tuple(grid) + (1,) * (3 - len(grid))
    return lambda: kern._launcher(grid3, raw)


def timed(mod, ours, name, grid, args, **kw):
    """A zero-argument launcher of kernel ``name`` of ``mod`` (ours: pre-bound)."""
    k = getattr(mod, name)
    if mod is not ours:
        return lambda: k[grid](*args, **kw)
    k[grid](*args, **kw)
    return bound_launcher(k, grid, args)


def _overhead(fn, n=2000):
    import torch
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def cases(torch, ours, theirs):
    """(name, unit, work, make_launcher(mod), check(), [tuned(mod, cfg)]) per benchmark; work
    in bytes or FLOPs."""
    dev = "cuda"
    out = []
    n = 1 << 28
    x, y = (torch.rand(n, device=dev) for _ in range(2))
    o = torch.empty_like(x)
    out.append(("vector add 2^28 fp32", "GB/s", 3 * n * 4,
                lambda m: timed(m, ours, "add_kernel", (n // 1024,), (x, y, o, n),
                                BLOCK_SIZE=1024),
                lambda: (o - (x + y)).abs().max().item()))
    for dt in (torch.float32, torch.float16):
        M, N = 8192, 4096
        a = torch.randn(M, N, device=dev, dtype=dt)
        so = torch.empty_like(a)
        out.append((f"softmax 8192x4096 {str(dt)[6:]}", "GB/s", 2 * M * N * a.element_size(),
                    lambda m, a=a, so=so, M=M, N=N: timed(
                        m, ours, "softmax_fp32_acc_kernel", (M,), (so, a, N, N, N),
                        BLOCK_SIZE=4096, num_warps=8),
                    lambda a=a, so=so: (so.float() - torch.softmax(a.float(), 1)).abs().max()
                    .item()))
    M, N = 8192, 4096
    xl = torch.randn(M, N, device=dev, dtype=torch.float16)
    w, b = torch.randn(N, device=dev, dtype=torch.float16), torch.randn(N, device=dev,
                                                                         dtype=torch.float16)
    yl = torch.empty_like(xl)
    out.append(("layer norm fwd 8192x4096 fp16", "GB/s", 2 * M * N * 2,
                lambda m: timed(m, ours, "layer_norm_row_kernel", (M,),
                                (xl, yl, w, b, N, N, 1e-5), BLOCK_SIZE=4096, num_warps=8),
                lambda: (yl.float() - torch.nn.functional.layer_norm(
                    xl.float(), (N,), w.float(), b.float(), 1e-5)).abs().max().item()))
    S = 4096
    A = torch.randn(S, S, device=dev, dtype=torch.float16)
    B = torch.randn(S, S, device=dev, dtype=torch.float16)
    C = torch.empty(S, S, device=dev, dtype=torch.float16)
    out.append(("matmul 4096^3 fp16 (fp32 acc)", "TFLOP/s", 2 * S ** 3,
                lambda m: timed(m, ours, "matmul_fp16_kernel", ((S // 128) * (S // 128),),
                                (A, B, C, S, S, S), BM=128, BN=128, BK=32, GROUP_M=8,
                                num_warps=4, num_stages=3),
                lambda: ((C.float() - (A.float() @ B.float())).abs().max() /
                         (A.float() @ B.float()).abs().max()).item(),
                lambda m, cfg: timed(m, ours, "matmul_fp16_kernel",
                                     ((S // cfg[0]) * (S // cfg[1]),), (A, B, C, S, S, S),
                                     BM=cfg[0], BN=cfg[1], BK=cfg[2], GROUP_M=8,
                                     num_warps=cfg[3], num_stages=cfg[4])))
    Ct = torch.empty(S, S, device=dev, dtype=torch.float16)

    def tutorial(m, cfg):
        return timed(m, ours, "matmul_tutorial_kernel", ((S // cfg[0]) * (S // cfg[1]),),
                     (A, B, Ct, S, S, S, S, 1, S, 1, S, 1), BLOCK_SIZE_M=cfg[0],
                     BLOCK_SIZE_N=cfg[1], BLOCK_SIZE_K=cfg[2], GROUP_SIZE_M=8,
                     num_warps=cfg[3], num_stages=cfg[4])
    out.append(("matmul 4096^3 fp16, tutorial form", "TFLOP/s", 2 * S ** 3,
                lambda m: tutorial(m, (128, 128, 32, 4, 3)),
                lambda: ((Ct.float() - (A.float() @ B.float())).abs().max() /
                         (A.float() @ B.float()).abs().max()).item(),
                tutorial))
    Z, H, NC, D = 4, 16, 2048, 64
    q, k, v = (torch.randn(Z * H, NC, D, device=dev, dtype=torch.float16) for _ in range(3))
    ao = torch.empty_like(q)
    scale = D ** -0.5
    out.append((f"attention fwd {Z}x{H}x{NC}x{D} fp16", "TFLOP/s", 4 * Z * H * NC * NC * D,
                lambda m: timed(m, ours, "attention_fwd_kernel", (NC // 64, Z * H),
                                (q, k, v, ao, scale, NC),
                                D=D, BM=64, BN=64, num_warps=4, num_stages=3),
                lambda: (ao.float() - torch.softmax(q.float() @ k.float().transpose(1, 2) *
                                                    scale, -1) @ v.float()).abs().max().item()))
    return out


MATMUL_CONFIGS = [(128, 128, 32, 8, 3), (128, 128, 64, 8, 3), (128, 256, 32, 8, 3),
                  (128, 128, 32, 4, 4), (128, 256, 64, 8, 3)]


def main() -> None:
    torch = require_gpu("benchmarks/gpu.py", __doc__)

    from workbench.testing import examples
    ours = types.SimpleNamespace(**{name: getattr(examples, name) for name in KERNELS})
    theirs = triton_twins(*(getattr(ours, name) for name in KERNELS))
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    rows = []
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    for name, unit, work, launch, check, *tuned in cases(torch, ours, theirs):
        if only is not None and only not in name:
            continue  # --only SUBSTRING: just the rows whose name contains it
        res = {}
        for who, mod in (("ours", ours), ("triton", theirs)):
            try:
                ms = _bench(launch(mod))
                if tuned:  # both sides get the best of the same tile configurations
                    for cfg in MATMUL_CONFIGS:
                        try:
                            t = _bench(tuned[0](mod, cfg))
                        except Exception as e:  # noqa: BLE001
                            print(f"  {who}, matmul config {cfg}: {type(e).__name__}: "
                                  f"{str(e).splitlines()[0][:80]}")
                            continue
                        print(f"  {who}, matmul BM, BN, BK, warps, stages = {cfg}: "
                              f"{t:.3f} ms")
                        ms = min(ms, t)
                torch.cuda.synchronize()
                err = check()
                res[who] = (ms, err)
            except Exception as e:  # noqa: BLE001 - report and go on
                res[who] = (None, f"{type(e).__name__}: {str(e).splitlines()[0][:90]}")
                if "--trace" in sys.argv:
                    traceback.print_exc()
        rows.append((name, unit, work, res))
    print(f"{'kernel':34s} {'ours ms':>9s} {'rate':>10s} {'triton ms':>9s} {'rate':>10s} "
          f"{'ours/triton time':>16s}  max err (ours / triton)")
    for name, unit, work, res in rows:
        scale = 1e9 if unit == "GB/s" else 1e12
        cells = []
        for who in ("ours", "triton"):
            ms, _ = res[who]
            cells.append((f"{ms:9.3f}", f"{work / (ms * 1e-3) / scale:7.1f} {unit.split('/')[0]}")
                         if ms is not None else ("     fail", ""))
        ratio = (f"{res['ours'][0] / res['triton'][0]:16.2f}"
                 if res["ours"][0] is not None and res["triton"][0] is not None else " " * 16)
        errs = " / ".join(f"{e:.2e}" if isinstance(e, float) else str(e)
                          for _, e in (res["ours"], res["triton"]))
        print(f"{name:34s} {cells[0][0]} {cells[0][1]:>10s} {cells[1][0]} {cells[1][1]:>10s} "
              f"{ratio}  {errs}")
    xs = torch.rand(1024, device="cuda")
    ys, zs = torch.rand_like(xs), torch.empty_like(xs)
    for who, mod in (("ours", ours), ("triton", theirs)):
        us = _overhead(lambda mod=mod: mod.add_kernel[(1,)](xs, ys, zs, 1024, BLOCK_SIZE=1024))
        print(f"host launch overhead ({who}, kernel[grid](...)): {us:.1f} us per call")
    raw = bound_launcher(ours.add_kernel, (1,), (xs, ys, zs, 1024))
    print(f"host launch overhead (ours, compiled launcher, bound args): {_overhead(raw):.1f} us "
          f"per call")


if __name__ == "__main__":
    main()
