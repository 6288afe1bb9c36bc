"""Cold compile time for ``cuda:90``, ours against Triton 3.6, stage by stage.

Usage: ``python benchmarks/compile_time.py [--repeat 3] [--cases attn_fwd_d64,...]
[--triton-python PATH] [--triton-src /tmp/triton-src] [--no-triton] [--passes]
[--sweep 64|128] [--baseline PATH]``

The kernels are Triton's own tutorial kernels, read from ``--triton-src`` (a Triton 3.6
source tree: ``python/tutorials``): every ``@triton.jit`` function of the tutorial file is
copied into a module in a temporary folder (autotune decorators dropped) that imports either
``workbench`` or ``triton`` under the name ``triton``. Each side compiles the same
``ASTSource(fn, signature, constexprs, attrs)`` for ``GPUTarget("cuda", 90, 32)`` (no GPU
needed: both stop after ptxas's cubin) in its own process, specialised as the tutorial's launch
specialises it (pointers and the integers that are multiples of 16 marked divisible by 16,
the unit strides as the constant 1):

- ours: ``workbench.compile``, a fresh ``@jit`` object per compile, ``WORKBENCH_DISK_CACHE=0``,
  the in-process layout caches emptied first (``--keep-caches``: kept, as in one process
  that autotunes);
- Triton: ``triton.compile``, ``TRITON_ALWAYS_COMPILE=1`` and a fresh ``TRITON_CACHE_DIR``.

Each process first compiles the vector add once, untimed (imports and LLVM start-up are paid
once, as in a script that launches several kernels). Figures: the median over ``--repeat``
compiles of the wall time (``time.perf_counter``) and of the CPU time of the process and its
children (ptxas), seconds. Stage columns (wall seconds): ours ``frontend``, ``ttir`` passes,
``ttgir`` (the ttgir passes, cloning and printing), ``llir`` (lowering to LLVM IR text),
``opt`` (llvmlite parse + LLVM ``-O3``), ``ptx`` (NVPTX code generation), ``ptxas``; Triton's
``make_ir`` then its stages ``ttir``, ``ttgir``, ``llir`` (lowering and ``-O3``), ``ptx``,
``cubin``. ``--passes`` adds the slowest ttgir passes of each case (ours). Ours runs ptxas
in the background while it makes the stages' line maps, so its ``ptxas`` column is the time
from starting ptxas to having its result.

``--baseline PATH`` (another checkout, e.g. ``git worktree add --detach /tmp/base <commit>``)
instead compares three processes, that checkout, this one and Triton, one compile each in
turn per case (:func:`interleaved`): on a shared machine the load then falls on all three
alike, and the medians and minima of the three are comparable.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIV16 = [["tt.divisibility", 16]]

_FWD_SIG = dict(sm_scale="fp32", M="*fp32", Z="i32", H="i32", desc_q="*fp16", desc_k="*fp16",
                desc_v="*fp16", desc_o="*fp16", N_CTX="i32")
_BWD_SIG = dict(Q="*fp16", K="*fp16", V="*fp16", sm_scale="fp32", DO="*fp16", DQ="*fp16",
                DK="*fp16", DV="*fp16", M="*fp32", D="*fp32", stride_z="i32", stride_h="i32",
                stride_tok="i32", stride_d="i32", H="i32", N_CTX="i32")
_MM_SIG = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32",
               stride_am="i32", stride_ak="i32", stride_bk="i32", stride_bn="i32",
               stride_cm="i32", stride_cn="i32")


def _fwd(hd, bm, bn, warps, stages, causal=False):
    """Tutorial 06's forward as the H200 benchmark runs it: device-side descriptors from
    pointers (warp_specialize=True on Hopper), one autotune configuration."""
    consts = dict(HEAD_DIM=hd, BLOCK_M=bm, BLOCK_N=bn, FP8_OUTPUT=False,
                  STAGE=3 if causal else 1, warp_specialize=not causal, IS_HOPPER=True)
    return ("06", "_attn_fwd", _FWD_SIG, consts, (1, 4, 5, 6, 7, 8),
            dict(num_warps=warps, num_stages=stages))


def _bwd(hd, causal):
    consts = dict(BLOCK_M1=32, BLOCK_N1=128, BLOCK_M2=128, BLOCK_N2=32, BLK_SLICE_FACTOR=2,
                  HEAD_DIM=hd, CAUSAL=causal, **_ONES_BWD)
    return ("06", "_attn_bwd", _BWD_SIG, consts, (0, 1, 2, 4, 5, 6, 7, 8, 9, 12, 15),
            dict(num_warps=4, num_stages=5))


#: integer arguments that are 1 when the tutorial launches the kernel: a launch specialises
#: them to the constant 1 (Triton and ours alike), so the compiles below do too (typed
#: "constexpr" with the value 1 in the ASTSource)
_ONES_MM = dict(stride_ak=1, stride_bn=1, stride_cn=1)
_ONES_BWD = dict(stride_d=1)

#: name -> (tutorial number, kernel, signature, constexprs, 16-divisible parameter indices,
#: options)
CASES = {
    "vector_add": ("01", "add_kernel", dict(x_ptr="*fp32", y_ptr="*fp32", output_ptr="*fp32",
                                            n_elements="i32"),
                   dict(BLOCK_SIZE=1024), (0, 1, 2, 3), dict(num_warps=4, num_stages=3)),
    "matmul_128x256x64": ("03", "matmul_kernel", _MM_SIG,
                          dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64,
                               GROUP_SIZE_M=8, ACTIVATION="", **_ONES_MM),
                          (0, 1, 2, 3, 4, 5, 6, 8, 10),
                          dict(num_warps=8, num_stages=3)),
    "matmul_64x32x32": ("03", "matmul_kernel", _MM_SIG,
                        dict(BLOCK_SIZE_M=64, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32,
                             GROUP_SIZE_M=8, ACTIVATION="", **_ONES_MM),
                        (0, 1, 2, 3, 4, 5, 6, 8, 10),
                        dict(num_warps=2, num_stages=5)),
    "attn_fwd_d64_128x64_s3w4": _fwd(64, 128, 64, 4, 3),
    "attn_fwd_d64_64x32_s2w4_causal": _fwd(64, 64, 32, 4, 2, causal=True),
    "attn_fwd_d128_128x128_s3w8": _fwd(128, 128, 128, 8, 3),
    "attn_fwd_d128_128x64_s4w4_causal": _fwd(128, 128, 64, 4, 4, causal=True),
    "attn_bwd_pre_d128": ("06", "_attn_bwd_preprocess",
                          dict(O="*fp16", DO="*fp16", Delta="*fp32", Z="i32", H="i32",
                               N_CTX="i32"), dict(BLOCK_M=128, HEAD_DIM=128), (0, 1, 2, 5),
                          dict(num_warps=4, num_stages=3)),
    "attn_bwd_d64_causal": _bwd(64, True),
    "attn_bwd_d128_causal": _bwd(128, True),
    "attn_bwd_d128": _bwd(128, False),
}


def sweep_cases(head_dim: int) -> list:
    """Every autotune configuration of tutorial 06's forward that an H200 compiles for one
    (HEAD_DIM, non-causal, warp_specialize=True) key: BLOCK_M in (64, 128), BLOCK_N in (32, 64,
    128), num_stages in (2, 3, 4), num_warps in (4, 8), less the 8-warp ones with BLOCK_M *
    BLOCK_N < 128 * 128 (the tutorial's ``keep``), less BLOCK_N > HEAD_DIM (its
    static_assert). Registered in CASES as ``sweep_d<head_dim>_<BM>x<BN>_s<S>w<W>``."""
    names = []
    for bm in (64, 128):
        for bn in (32, 64, 128):
            for st in (2, 3, 4):
                for w in (4, 8):
                    if (w == 8 and bm * bn < 128 * 128) or bn > head_dim:
                        continue
                    name = f"sweep_d{head_dim}_{bm}x{bn}_s{st}w{w}"
                    CASES[name] = _fwd(head_dim, bm, bn, w, st)
                    names.append(name)
    return names


def tutorial06_compiles() -> dict:
    """The distinct compiles of tutorial 06's benchmark (``bench_flash_attention.run``) on an
    H200 (Hopper, torch with fp8, no flash-attn), following its code: per HEAD_DIM (64, 128),
    mode (fwd, bwd), causal, warp_specialize (both only for the non-causal forward) and
    provider (fp16, fp8), N_CTX 1024..16384. The autotune key (N_CTX, HEAD_DIM, FP8_OUTPUT,
    warp_specialize, argument dtypes) leaves out STAGE, so a non-causal forward without warp
    specialisation reuses the configuration tuned for the causal one and compiles only it
    (counted once per N_CTX, the most it can be); the compiled kernel does not depend on
    N_CTX (a multiple of 16 in every case). Returns ``{"forward": n, "forward_failing": n
    (static_assert BLOCK_N <= HEAD_DIM: stopped in the frontend), "backward": n}``."""
    fwd, failing = set(), set()
    for hd in (64, 128):
        for fp8 in (False, True):
            for causal, ws in ((True, False), (False, False), (False, True)):
                stage = 3 if causal else 1
                if not causal and not ws:  # the causal key's best config, per N_CTX
                    fwd.update((hd, fp8, stage, ws, "best", n) for n in range(5))
                    continue
                for bm in (64, 128):
                    for bn in (32, 64, 128):
                        if stage == 3 and bm < bn:  # prune_invalid_configs
                            continue
                        for st in (2, 3, 4):
                            for w in (4, 8):
                                if w == 8 and bm * bn < 128 * 128:  # keep()
                                    continue
                                key = (hd, fp8, stage, ws, bm, bn, st, w)
                                (failing if bn > hd else fwd).add(key)
    backward = 2 * (1 + 2)  # per HEAD_DIM: _attn_bwd_preprocess, _attn_bwd causal and not
    return {"forward": len(fwd), "forward_failing": len(failing), "backward": backward}


DEFAULT_CASES = tuple(CASES)
SWEEPS = {64: sweep_cases(64), 128: sweep_cases(128)}

OURS_STAGES = (("frontend", ("frontend",)), ("ttir", ("ttir_passes",)), ("ttgir", ("ttgir",)),
               ("llir", ("llir",)), ("opt", ("llvm-opt",)), ("ptx", ("ptx",)),
               ("ptxas", ("cubin",)))
TRITON_STAGES = ("make_ir", "ttir", "ttgir", "llir", "ptx", "cubin")


# ------------------------------------------------------------------------------ kernels
def kernel_module(triton_src: str, number: str, flavour: str, folder: str):
    """Import the ``@triton.jit`` functions of tutorial ``number`` as a module written into
    ``folder``, ``triton`` being the workbench (``flavour="ours"``) or Triton."""
    import importlib.util
    tut = os.path.join(triton_src, "python", "tutorials")
    fname = [f for f in sorted(os.listdir(tut)) if f.startswith(number + "-")][0]
    text = open(os.path.join(tut, fname)).read()
    head = ("import workbench as triton\nimport workbench.language as tl\n" if flavour == "ours"
            else "import triton\nimport triton.language as tl\n")
    parts = [head]
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and any(
                "jit" in ast.unparse(d) for d in node.decorator_list):
            seg = ast.get_source_segment(text, node)
            parts.append("\n@triton.jit\n" + str(seg) + "\n")
    name = f"tut{number}_{flavour}"
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write("\n".join(parts))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _source(mods, case, flavour, compiler_mod):
    number, kname, sig, consts, div16, _ = CASES[case]
    fn = getattr(mods[number], kname)
    if flavour == "ours":  # a fresh @jit object: nothing cached in memory
        import workbench
        fn = workbench.jit(fn.fn)
    full = dict(sig, **{k: "constexpr" for k in consts})
    attrs = {(i,): DIV16 for i in div16}
    return compiler_mod.ASTSource(fn, full, dict(consts), attrs)


# ------------------------------------------------------------------------------ workers
def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _triton_stage_timer(timings: dict):
    """Wrap Triton's CUDA backend so each stage's wall time lands in ``timings``."""
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.compiler import compiler as tc

    def timed(key, fn):
        def run(*a, **kw):
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                timings[key] = timings.get(key, 0.0) + time.perf_counter() - t0
        return run

    orig_add = CUDABackend.add_stages

    def add_stages(self, stages, options, language):
        orig_add(self, stages, options, language)
        for k in list(stages):
            stages[k] = timed(k, stages[k])
    CUDABackend.add_stages = add_stages  # type: ignore[method-assign]
    tc.ASTSource.make_ir = timed("make_ir", tc.ASTSource.make_ir)  # type: ignore[method-assign]


def _clear_ours_caches() -> None:
    """Empty the workbench's in-process caches of layout facts (a cold compile)."""
    from workbench.codegen.nvptx import async_copy, convert_layout, threads
    from workbench.layouts import banks, convert
    convert._CACHE.clear()
    threads._LAYOUTS.clear()
    async_copy._STRIDES.clear()
    convert_layout._scratch_for.cache_clear()
    banks._cached_summary.cache_clear()


def compiler(flavour: str, cases: list, triton_src: str, keep_caches: bool = False,
             repo: str = REPO):
    """Set this process up to compile for ``flavour`` (ours from the checkout ``repo``, or
    Triton) and return ``one(case) -> (wall s, cpu s of the process and its children, stage
    timings, PTX length, cpu s of the process alone)``. Ours empties its layout caches before
    each compile unless ``keep_caches``."""
    folder = tempfile.mkdtemp(prefix="compile-time-")
    stage_t: dict = {}
    if flavour == "ours":
        sys.path.insert(0, repo)
        os.environ["WORKBENCH_DISK_CACHE"] = "0"
        import workbench as compiler_mod
        from workbench.compiler import ASTSource, GPUTarget
        compiler_mod.ASTSource = ASTSource  # type: ignore[attr-defined]
    else:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(folder, "cache")
        os.environ["TRITON_ALWAYS_COMPILE"] = "1"
        import triton as compiler_mod  # type: ignore[no-redef]
        from triton.backends.compiler import GPUTarget  # type: ignore[no-redef]
        from triton.compiler import ASTSource  # type: ignore[no-redef]  # noqa: F401
        compiler_mod.ASTSource = ASTSource
        _triton_stage_timer(stage_t)
    mods = {n: kernel_module(triton_src, n, flavour, folder)
            for n in sorted({CASES[c][0] for c in cases} | {"01"})}
    target = GPUTarget("cuda", 90, 32)

    def one(case):
        stage_t.clear()
        if flavour == "ours" and not keep_caches:
            _clear_ours_caches()
        src = _source(mods, case, flavour, compiler_mod)
        t = os.times()
        c0, own0, t0 = _cpu(), t.user + t.system, time.perf_counter()
        k = compiler_mod.compile(src, target=target, options=dict(CASES[case][5]))
        wall, cpu = time.perf_counter() - t0, _cpu() - c0
        t = os.times()
        st = dict(k.timings) if flavour == "ours" else dict(stage_t)
        return wall, cpu, st, len(k.asm["ptx"]), t.user + t.system - own0

    one("vector_add")  # imports and LLVM start-up, untimed
    return one


def worker(flavour: str, cases: list, repeat: int, triton_src: str,
           keep_caches: bool = False) -> list:
    """Compile every case ``repeat`` times in this process; one record per case. Ours starts
    each compile with its layout caches empty unless ``keep_caches`` (an autotune sweep, where
    the configurations of one kernel share them)."""
    one = compiler(flavour, cases, triton_src, keep_caches)
    out = []
    for case in cases:
        runs = [one(case) for _ in range(repeat)]
        keys = set().union(*(r[2] for r in runs))
        out.append({"case": case, "wall": statistics.median(r[0] for r in runs),
                    "cpu": statistics.median(r[1] for r in runs),
                    "stages": {k: statistics.median(r[2].get(k, 0.0) for r in runs)
                               for k in keys}, "ptx_chars": runs[0][3]})
    return out


def serve(flavour: str, repo: str, triton_src: str) -> None:
    """Read case names on stdin, compile each once, print ``{"wall", "cpu", "own"}`` as a
    JSON line (the processes of :func:`interleaved`)."""
    one = compiler(flavour, list(CASES), triton_src, repo=repo)
    for line in sys.stdin:
        wall, cpu, _, _, own = one(line.strip())
        print(json.dumps({"wall": wall, "cpu": cpu, "own": own}), flush=True)


def interleaved(args) -> None:
    """``--baseline PATH``: three processes, ours from PATH, ours from this checkout and
    Triton, compile each case in turn (the order rotating each repeat), so that the load of
    a shared machine falls on all three alike; prints per case the median and the minimum
    over ``--repeat`` compiles of the wall time, the CPU time of process and children
    (ptxas) and of the process alone, and the ratios to Triton."""
    who = {"baseline": ("ours", args.baseline), "this": ("ours", REPO),
           "Triton": ("triton", REPO)}
    procs = {k: subprocess.Popen(
        [args.triton_python if f == "triton" else sys.executable, os.path.abspath(__file__),
         "--serve", f, "--repo", r, "--triton-src", args.triton_src],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
        for k, (f, r) in who.items()}
    names = list(procs)
    print(f"interleaved cold compiles for cuda:90, {args.repeat} each; load average "
          f"{os.getloadavg()[0]:.2f}; seconds; cpu = process + ptxas, own = process alone")
    print(f"{'kernel':<28} {'stat':<6} " + " ".join(
        f"{k + ' ' + m:>16}" for m in ("wall", "cpu", "own") for k in names) +
          "  wall/T b->t  cpu/T b->t")
    for case in args.case_list:
        rec: dict = {k: [] for k in names}
        for r in range(args.repeat):
            for k in names[r % 3:] + names[:r % 3]:
                procs[k].stdin.write(case + "\n")  # type: ignore[union-attr]
                procs[k].stdin.flush()  # type: ignore[union-attr]
                rec[k].append(json.loads(procs[k].stdout.readline()))  # type: ignore[union-attr]
        for stat, f in (("median", statistics.median), ("min", min)):
            v = {(k, m): f(x[m] for x in rec[k]) for k in names for m in ("wall", "cpu", "own")}
            ratios = "  ".join(f"{v['baseline', m] / v['Triton', m]:.2f}->"
                               f"{v['this', m] / v['Triton', m]:.2f}" for m in ("wall", "cpu"))
            print(f"{case:<28} {stat:<6} " + " ".join(
                f"{v[k, m]:16.3f}" for m in ("wall", "cpu", "own") for k in names) +
                  f"  {ratios}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    for p in procs.values():
        p.stdin.close()  # type: ignore[union-attr]
        p.wait()


def run_worker(python: str, flavour: str, args) -> list:
    cmd = [python, os.path.abspath(__file__), "--worker", flavour, "--repeat", str(args.repeat),
           "--cases", ",".join(args.case_list), "--triton-src", args.triton_src]
    cmd += ["--keep-caches"] if args.keep_caches else []
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if p.returncode:
        sys.stderr.write(p.stderr[-3000:])
        raise SystemExit(f"the {flavour} worker failed (exit {p.returncode})")
    return json.loads(p.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------ table
def print_table(ours: list, theirs: list | None, passes: bool) -> None:
    trit = {r["case"]: r for r in theirs or []}
    cols = [c for c, _ in OURS_STAGES]
    w = max(len(r["case"]) for r in ours)
    print(f"{'kernel':<{w}}  {'ours s':>7} {'Triton s':>8} {'ratio':>6} {'ours cpu':>8} "
          f"{'Tr cpu':>7} | " + " ".join(f"{c:>8}" for c in cols) + " | Triton: " +
          " ".join(f"{c:>7}" for c in TRITON_STAGES))
    for r in ours:
        t = trit.get(r["case"])
        st = r["stages"]
        vals = [sum(st.get(k, 0.0) for k in keys) for _, keys in OURS_STAGES]
        tw = f"{t['wall']:8.3f}" if t else f"{'-':>8}"
        ratio = f"{r['wall'] / t['wall']:6.2f}" if t else f"{'-':>6}"
        tc = f"{t['cpu']:7.3f}" if t else f"{'-':>7}"
        tst = " ".join(f"{t['stages'].get(c, 0.0):7.3f}" for c in TRITON_STAGES) if t else ""
        print(f"{r['case']:<{w}}  {r['wall']:7.3f} {tw} {ratio} {r['cpu']:8.3f} {tc} | " +
              " ".join(f"{v:8.3f}" for v in vals) + " | " + tst)
    if passes:
        print("\nslowest ttgir passes (ours, wall s):")
        for r in ours:
            ps = sorted(((v, k) for k, v in r["stages"].items() if k.startswith("ttgir:")),
                        reverse=True)[:4]
            print(f"  {r['case']:<{w}} " + ", ".join(f"{k[6:]} {v:.3f}" for v, k in ps))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="cold compiles per case (median)")
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES), help="comma-separated case names")
    ap.add_argument("--triton-src", default="/tmp/triton-src", help="Triton 3.6 source tree")
    ap.add_argument("--triton-python", default=sys.executable,
                    help="a Python with Triton 3.6 installed (compile only)")
    ap.add_argument("--no-triton", action="store_true", help="measure ours only")
    ap.add_argument("--passes", action="store_true", help="list the slowest ttgir passes")
    ap.add_argument("--sweep", type=int, choices=(64, 128), default=0,
                    help="instead of --cases: every autotune configuration of tutorial 06's "
                         "forward for this HEAD_DIM (see sweep_cases), with totals")
    ap.add_argument("--keep-caches", action="store_true",
                    help="ours: keep the layout caches between compiles (as in one process "
                         "that autotunes); the default empties them before each compile")
    ap.add_argument("--baseline", metavar="PATH",
                    help="another checkout of the workbench (e.g. a git worktree of the "
                         "parent commit): compile it, this checkout and Triton in turn, "
                         "case by case, and print medians and minima (see interleaved)")
    ap.add_argument("--worker", choices=("ours", "triton"), help=argparse.SUPPRESS)
    ap.add_argument("--serve", choices=("ours", "triton"), help=argparse.SUPPRESS)
    ap.add_argument("--repo", default=REPO, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.case_list = [c for c in a.cases.split(",") if c]
    if a.sweep:  # the configurations of one autotune key, summed
        a.case_list = SWEEPS[a.sweep]
    unknown = [c for c in a.case_list if c not in CASES]
    if unknown:
        raise SystemExit(f"unknown case(s) {unknown}; choose from {', '.join(CASES)}")
    if a.worker:
        print(json.dumps(worker(a.worker, a.case_list, a.repeat, a.triton_src, a.keep_caches)))
        return
    if a.serve:
        serve(a.serve, a.repo, a.triton_src)
        return
    if a.baseline:
        interleaved(a)
        return
    ours = run_worker(sys.executable, "ours", a)
    theirs = None if a.no_triton else run_worker(a.triton_python, "triton", a)
    print(f"cold compile for cuda:90 up to the cubin, median of {a.repeat}; wall seconds "
          "unless marked cpu (process + ptxas)")
    print_table(ours, theirs, a.passes)
    if a.sweep:
        counts = tutorial06_compiles()
        print(f"tutorial 06 on an H200 compiles at most {counts['forward']} forward kernels "
              f"({counts['forward_failing']} more stop at its static_assert) and "
              f"{counts['backward']} backward kernels")
        for who, rows in (("ours", ours), ("Triton", theirs or [])):
            if rows:
                print(f"{who}: {len(rows)} configurations, {sum(r['wall'] for r in rows):.1f} s "
                      f"wall, {sum(r['cpu'] for r in rows):.1f} s cpu in all")


if __name__ == "__main__":
    main()
