"""The workbench's CUDA backend next to Triton 3.6 on one GPU, same inputs.

Each kernel is written once, in Triton's language, in :mod:`workbench.testing.examples`
(``KERNELS`` below names them) and run twice: as the workbench's ``@jit`` kernel and as its
``triton.jit`` twin (the same source, :func:`benchmarks.common.triton_twins`). Times
are ``triton.testing.do_bench`` (ms, L2 flushed between runs, CUDA events) on the same torch
tensors; outputs are checked against torch. Our kernel is launched once through
``kernel[grid](...)`` (compiling it) and then timed through its compiled launcher with the
arguments already bound, so the time is the GPU's, not our Python binding's (which the
"host launch overhead" lines measure separately: wall time per call of an already-compiled
tiny kernel, 2000 calls, then one synchronize). Every configuration is timed ``--rounds N`` times (3), the two sides
alternating (ours then Triton's, then Triton's then ours, ...), each keeping its best: at the
H200's power cap the clock drifts during a run. For matmul both sides take the best of the
same tile configurations (``MATMUL_CONFIGS``, each printed; BM, BN, BK, warps, stages; on
sm_90 our dot is wgmma, ``WORKBENCH_CUDA_MMA=v2`` forces mma.sync for comparison). Matmul has
two rows: ``matmul_fp16_kernel`` (addresses recomputed from the loop index) and
:func:`~workbench.testing.examples.matmul_tutorial_kernel`, the Triton tutorial's own form, which advances its pointers in
the loop (``a_ptrs += BLOCK_SIZE_K * stride_ak``) and masks the K tail.

More rows: matmul bf16 4096^3 and fp16 4096x11008x4096 (LLM-shaped) through
:func:`~workbench.testing.examples.matmul_typed_kernel`, and flash attention with head dims 64
and 128, causal (:func:`~workbench.testing.examples.attention_causal_fwd_kernel`) or not, each
the best of ``ATTN_CONFIGS`` on both sides; tutorial 09's persistent matmul through host
tensor descriptors (:func:`~workbench.testing.examples.matmul_persistent_tma_kernel`), the
best of ``PERSISTENT_CONFIGS``. A configuration one side refuses (shared memory
too small, a compile error) is printed with the reason and skipped.

Run on a GPU machine: ``python benchmarks/gpu.py [--only SUBSTRING[,SUBSTRING...]]`` (rows in that order) (needs
torch, triton, cuda-bindings). ``--few``: tuned rows try only ``FEW_CONFIGS``. Prints one
table.
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
           "matmul_fp16_kernel", "matmul_tutorial_kernel", "attention_fwd_kernel",
           "matmul_typed_kernel", "attention_causal_fwd_kernel", "matmul_persistent_tma_kernel")


def _bench(fn):
    from triton.testing import do_bench
    fn()
    return do_bench(fn, warmup=25, rep=200)


def bound_launcher(jit_fn, grid, args, kern=None):
    """After one ``jit_fn[grid](*args, ...)`` launch (which returned ``kern``, else the last
    kernel compiled): the compiled launcher with the passed arguments pre-converted
    (tensors -> device addresses); constexprs dropped."""
    if kern is None or not hasattr(kern, "_launcher"):
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
    return bound_launcher(k, grid, args, k[grid](*args, **kw))


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
    out.extend(typed_matmul_cases(torch, ours, dev))
    out.extend(attention_cases(torch, ours, dev))
    out.extend(persistent_cases(torch, ours, dev))
    return out


#: tutorial 09's configurations (BM, BN, BK, warps, stages)
PERSISTENT_CONFIGS = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (128, 128, 64, 4, 4),
                      (128, 128, 128, 8, 3)]


def persistent_cases(torch, ours, dev):
    """Tutorial 09's persistent matmul through host tensor descriptors (TMA on sm_90), C = A @
    B^T at 4096^3 fp16, one program per SM. Each side builds its own ``TensorDescriptor``
    (ours: :mod:`workbench.tools.tensor_descriptor`; Triton's ``triton.tools``); our launch is
    ``kernel[grid](...)`` (descriptors are not pre-bound), so our time includes the host
    binding, about 11 us of a ~0.2 ms kernel."""
    from workbench.tools.tensor_descriptor import TensorDescriptor as OurDescriptor
    S = 4096
    A = torch.randn(S, S, device=dev, dtype=torch.float16)
    Bt = torch.randn(S, S, device=dev, dtype=torch.float16)  # B^T: [N, K], as tutorial 09
    C = torch.empty(S, S, device=dev, dtype=torch.float16)
    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def run(m, cfg):
        if m is ours:
            desc = OurDescriptor
        else:
            from triton.tools.tensor_descriptor import TensorDescriptor as desc
        bm, bn, bk, warps, stages = cfg
        args = (desc.from_tensor(A, [bm, bk]), desc.from_tensor(Bt, [bn, bk]),
                desc.from_tensor(C, [bm, bn]), S, S, S)
        grid = (min(sms, (S // bm) * (S // bn)),)
        k = m.matmul_persistent_tma_kernel
        kw = dict(BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8,
                  NUM_SMS=sms, num_warps=warps, num_stages=stages)
        return lambda: k[grid](*args, **kw)

    def check():
        ref = A.float() @ Bt.float().T
        return ((C.float() - ref).abs().max() / ref.abs().max()).item()
    return [("matmul 4096^3 fp16, persistent TMA (tut 09)", "TFLOP/s", 2 * S ** 3,
             lambda m: run(m, PERSISTENT_CONFIGS[0]), check, run, PERSISTENT_CONFIGS)]


def typed_matmul_cases(torch, ours, dev):
    """bf16 4096^3 and the LLM-shaped fp16 4096x11008x4096 (an MLP up-projection), both
    through :func:`~workbench.testing.examples.matmul_typed_kernel`, best of MATMUL_CONFIGS."""
    out = []
    for dt, (M, N, K) in ((torch.bfloat16, (4096, 4096, 4096)),
                          (torch.float16, (4096, 11008, 4096))):
        A = torch.randn(M, K, device=dev, dtype=dt)
        B = torch.randn(K, N, device=dev, dtype=dt)
        C = torch.empty(M, N, device=dev, dtype=dt)

        def run(m, cfg, A=A, B=B, C=C, M=M, N=N, K=K):
            if M % cfg[0] or N % cfg[1] or K % cfg[2]:
                raise ValueError(f"tile {cfg[:3]} does not divide {M}x{N}x{K}")
            return timed(m, ours, "matmul_typed_kernel", ((M // cfg[0]) * (N // cfg[1]),),
                         (A, B, C, M, N, K), BM=cfg[0], BN=cfg[1], BK=cfg[2], GROUP_M=8,
                         num_warps=cfg[3], num_stages=cfg[4])

        def check(A=A, B=B, C=C):
            ref = A.float() @ B.float()
            return ((C.float() - ref).abs().max() / ref.abs().max()).item()
        out.append((f"matmul {M}x{N}x{K} {str(dt)[6:]}", "TFLOP/s", 2 * M * N * K,
                    lambda m, run=run: run(m, (128, 128, 64, 8, 3)), check, run))
    return out


#: attention tile configurations (BM, BN, warps, stages); both sides take the best
ATTN_CONFIGS = [(64, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3)]


def attention_cases(torch, ours, dev):
    """Flash attention forward 4x16x2048xD fp16, D = 64 and 128, causal or not, each the
    best of ATTN_CONFIGS (a configuration one side refuses is printed and skipped)."""
    out = []
    Z, H, NC = 4, 16, 2048
    for D, causal in ((64, False), (64, True), (128, False), (128, True)):
        q, k, v = (torch.randn(Z * H, NC, D, device=dev, dtype=torch.float16)
                   for _ in range(3))
        ao = torch.empty_like(q)
        scale = D ** -0.5
        name = "attention_causal_fwd_kernel" if causal else "attention_fwd_kernel"

        def run(m, cfg, q=q, k=k, v=v, ao=ao, scale=scale, D=D, name=name):
            return timed(m, ours, name, (NC // cfg[0], Z * H), (q, k, v, ao, scale, NC),
                         D=D, BM=cfg[0], BN=cfg[1], num_warps=cfg[2], num_stages=cfg[3])

        def check(q=q, k=k, v=v, ao=ao, scale=scale, causal=causal):
            s = q.float() @ k.float().transpose(1, 2) * scale
            if causal:
                s = s.masked_fill(torch.ones(NC, NC, device=s.device, dtype=torch.bool)
                                  .triu(1), float("-inf"))
            return (ao.float() - torch.softmax(s, -1) @ v.float()).abs().max().item()
        flops = 4 * Z * H * NC * NC * D // (2 if causal else 1)
        out.append((f"attention fwd {Z}x{H}x{NC}x{D}{' causal' if causal else ''} fp16",
                    "TFLOP/s", flops, lambda m, run=run: run(m, (64, 64, 4, 3)), check, run,
                    ATTN_CONFIGS))
    return out


MATMUL_CONFIGS = [(128, 128, 32, 8, 3), (128, 128, 64, 8, 3), (128, 256, 32, 8, 3),
                  (128, 128, 32, 4, 4), (128, 256, 64, 8, 3)]


#: ``--few``: only these configurations (a short device call)
FEW_CONFIGS = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (128, 128, 32, 4, 4),
               (64, 64, 4, 3), (128, 64, 8, 3)]


def _failure(e: Exception) -> str:
    """The first line of an exception, for the table (with ``--trace`` also the traceback)."""
    if "--trace" in sys.argv:
        traceback.print_exc()
    return f"{type(e).__name__}: {str(e).splitlines()[0][:90] if str(e) else ''}"


def _rounds() -> int:
    """``--rounds N`` (default 3): how many times each side is timed, alternating."""
    return int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3


def _launchers(name, who, mod, launch, tuned):
    """``{config: zero-argument launcher}`` of one side of a row (each compiled and run
    once): the row's default launch (config None) and, for a tuned row, every tile
    configuration (printed with the reason when one is refused before the launch)."""
    out = {}
    try:
        out[None] = launch(mod)
        out[None]()
    except Exception:  # noqa: BLE001 - the tuned configurations may still run
        if not tuned:
            raise
    if tuned:
        cfgs = tuned[1] if len(tuned) > 1 else MATMUL_CONFIGS
        if "--few" in sys.argv:  # the configurations that won on the H200 so far
            cfgs = [c for c in cfgs if c in FEW_CONFIGS]
        for cfg in cfgs:
            try:
                out[cfg] = tuned[0](mod, cfg)
                out[cfg]()
            except Exception as e:  # noqa: BLE001 - a refusal is reported, not fatal
                print(f"  {name}, {who}, config {cfg}: refused, {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:100] if str(e) else ''}")
    return out


def _measure_pair(torch, name, sides, launch, check, tuned):
    """``{who: (ms, max error)}`` (ms None and the error's text when nothing ran) for
    ``sides`` (``[(who, module), ...]``). Each configuration is timed ``--rounds`` times,
    the two sides alternating (A B, then B A, ...), and each side keeps its best: at the
    H200's power cap the clock drifts over a run, and timing one side's configurations all
    before the other's tilts the ratio by several percent."""
    fns, res = {}, {}
    for who, mod in sides:
        try:
            fns[who] = _launchers(name, who, mod, launch, tuned)
        except Exception as e:  # noqa: BLE001 - report and go on
            res[who] = (None, _failure(e))
    best: dict = {who: {} for who in fns}
    for r in range(_rounds()):
        order = list(fns) if r % 2 == 0 else list(reversed(list(fns)))
        cfgs = {c for who in fns for c in fns[who]}
        for cfg in sorted(cfgs, key=str):
            for who in order:
                if cfg in fns.get(who, {}) and who not in res:
                    try:
                        t = _bench(fns[who][cfg])
                    except Exception as e:  # noqa: BLE001 - a fault at run time
                        res[who] = (None, _failure(e))
                        continue
                    best[who][cfg] = min(best[who].get(cfg, float("inf")), t)
    for who, _ in sides:
        if who in res:
            continue
        for cfg, t in best[who].items():
            if cfg is not None:
                print(f"  {name}, {who}, config {cfg}: {t:.3f} ms")
        if not best[who]:
            res[who] = (None, "RuntimeError: no configuration ran")
            continue
        fn = min(fns[who].items(), key=lambda kv: best[who][kv[0]])[1]
        fn()  # the best launch writes the output that is checked
        torch.cuda.synchronize()
        res[who] = (min(best[who].values()), check())
    return res


def main() -> None:
    torch = require_gpu("benchmarks/gpu.py", __doc__)

    from workbench.testing import examples
    ours = types.SimpleNamespace(**{name: getattr(examples, name) for name in KERNELS})
    theirs = triton_twins(*(getattr(ours, name) for name in KERNELS))
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    rows = []
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    todo = cases(torch, ours, theirs)
    if only is not None:  # --only A,B: the rows whose name contains A, then those with B
        keys = only.split(",")
        todo = sorted((c for c in todo if any(k in c[0] for k in keys)),
                      key=lambda c: min(i for i, k in enumerate(keys) if k in c[0]))
    for name, unit, work, launch, check, *tuned in todo:
        res = _measure_pair(torch, name, (("ours", ours), ("triton", theirs)), launch, check,
                            tuned)
        rows.append((name, unit, work, res))
    print(f"{'kernel':42s} {'ours ms':>9s} {'rate':>10s} {'triton ms':>9s} {'rate':>10s} "
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
        print(f"{name:42s} {cells[0][0]} {cells[0][1]:>10s} {cells[1][0]} {cells[1][1]:>10s} "
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
