"""Fidelity beyond our own suite: the kernels of Triton 3.6's tutorials and of
``workbench.testing.examples``, compiled by the workbench and by Triton 3.6 for cuda:80 and
cuda:90 (``workbench.compare``; no GPU), one row per kernel, target and configuration.

    python benchmarks/fidelity_tutorials.py        # Triton's files from /tmp/triton-src/python
    python benchmarks/fidelity_tutorials.py --triton-src /path/to/triton/python --only 03-matmul
    python benchmarks/fidelity_tutorials.py --json sweep.json     # also write the rows

The tutorials' kernels are read from Triton's files where they lie (``--triton-src``, the
``python`` folder of a Triton 3.6 checkout) and never copied: each file is parsed, its
``@triton.jit`` functions (autotune and other decorators dropped) are executed from their own
file and line numbers with ``triton`` bound to the workbench and ``triton.language`` to
``workbench.language``. The constexprs and warp/stage counts are taken from each tutorial's own
autotune configurations or launch code. Without the folder the tutorials are skipped with a
message and only the example kernels run.

Columns: kernel, target, warps/stages, the properties that differ (of ``layouts``,
``op_layouts``, ``converts``, ``shared``, ``barriers``, ``vectors``; see
:mod:`workbench.runtime.compare`) and one line per difference. A configuration that either
compiler rejects is listed with the error.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import sys
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import workbench  # noqa: E402
import workbench.language as wtl  # noqa: E402
from workbench.runtime.compare import PROPERTIES, compare  # noqa: E402

TARGETS = ("cuda:80", "cuda:90")
F16, F32, I32 = "*fp16:16", "*fp32:16", "i32:16"


@dataclass(frozen=True)
class Case:
    """One configuration: ``source`` (a tutorial file name or ``"examples"``), ``kernel``
    (the function's name), ``signature`` per target (``{"cuda:80": (...), ...}``; a target
    left out is not supported by the kernel), ``constexprs`` (and ``per_target`` ones), warps
    and stages."""

    label: str
    source: str
    kernel: str
    signature: dict
    constexprs: dict = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int = 3
    #: constexprs that depend on the target (``{"cuda:90": {"IS_HOPPER": True}}``)
    per_target: dict = field(default_factory=dict)


def _both(*sig) -> dict:
    return {t: sig for t in TARGETS}


def _matmul_sig() -> tuple:
    return (F16, F16, F16, I32, I32, I32, I32, "i32:1", I32, "i32:1", I32, "i32:1")


def _attn_fwd_sig(target: str) -> tuple:
    desc = ("*fp16:16",) * 4 if target == "cuda:80" else ("tensordesc<fp16[128, 64]>",
                                                          "tensordesc<fp16[64, 64]>",
                                                          "tensordesc<fp16[64, 64]>",
                                                          "tensordesc<fp16[128, 64]>")
    return ("fp32", F32, "i32", "i32") + desc + (I32,)


def _persistent_tma_sig(bm: int, bn: int, bk: int, sub: bool) -> tuple:
    return (f"tensordesc<fp16[{bm}, {bk}]>", f"tensordesc<fp16[{bn}, {bk}]>",
            f"tensordesc<fp16[{bm}, {bn // 2 if sub else bn}]>", I32, I32, I32)


HOPPER = {"cuda:80": {"IS_HOPPER": False}, "cuda:90": {"IS_HOPPER": True}}
MM = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8)
CASES = [
    Case("01 add", "01-vector-add.py", "add_kernel", _both(F32, F32, F32, "i32"),
         dict(BLOCK_SIZE=1024)),
    Case("02 softmax", "02-fused-softmax.py", "softmax_kernel",
         _both(F32, F32, I32, I32, "i32", "i32"), dict(BLOCK_SIZE=1024), 8, 4),
    Case("03 matmul 128x256x64", "03-matrix-multiplication.py", "matmul_kernel",
         _both(*_matmul_sig()), dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64,
                                     GROUP_SIZE_M=8, ACTIVATION=""), 8, 3),
    Case("03 matmul 64x128x32 leaky", "03-matrix-multiplication.py", "matmul_kernel",
         _both(*_matmul_sig()), dict(BLOCK_SIZE_M=64, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32,
                                     GROUP_SIZE_M=8, ACTIVATION="leaky_relu"), 4, 4),
    Case("05 ln fwd", "05-layer-norm.py", "_layer_norm_fwd_fused",
         _both(F16, F16, F16, F16, F32, F32, I32, I32, "fp32"), dict(BLOCK_SIZE=1024), 4),
    Case("05 ln bwd dx", "05-layer-norm.py", "_layer_norm_bwd_dx_fused",
         _both(F16, F16, F16, F16, F16, F16, F32, F32, "*i32:16", I32, I32),
         dict(GROUP_SIZE_M=128, BLOCK_SIZE_N=1024), 4),
    Case("05 ln bwd dwdb", "05-layer-norm.py", "_layer_norm_bwd_dwdb",
         _both(F16, F16, F16, F16, I32, I32), dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=128), 4),
    Case("06 attn fwd", "06-fused-attention.py", "_attn_fwd",
         {t: _attn_fwd_sig(t) for t in TARGETS},
         dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, FP8_OUTPUT=False, STAGE=1,
              warp_specialize=False), 4, 3, HOPPER),
    Case("06 attn fwd causal", "06-fused-attention.py", "_attn_fwd",
         {t: _attn_fwd_sig(t) for t in TARGETS},
         dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64, FP8_OUTPUT=False, STAGE=3,
              warp_specialize=False), 8, 3, HOPPER),
    Case("06 attn bwd pre", "06-fused-attention.py", "_attn_bwd_preprocess",
         _both(F16, F16, F32, "i32", "i32", I32), dict(BLOCK_M=128, HEAD_DIM=64), 4, 5),
    Case("06 attn bwd", "06-fused-attention.py", "_attn_bwd",
         _both(F16, F16, F16, "fp32", F16, F16, F16, F16, F32, F32, I32, I32, I32, "i32:1",
               "i32", I32),
         dict(BLOCK_M1=32, BLOCK_N1=128, BLOCK_M2=128, BLOCK_N2=32, BLK_SLICE_FACTOR=2,
              HEAD_DIM=64, CAUSAL=True), 4, 5),
    Case("08 grouped gemm", "08-grouped-gemm.py", "grouped_matmul_kernel",
         _both("*i64:16", "*i64:16", "*i64:16", "*i32:16", "*i32:16", "i32"),
         dict(NUM_SM=128, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32), 4, 3),
    Case("08 grouped gemm tma", "08-grouped-gemm.py", "grouped_matmul_tma_kernel",
         {"cuda:90": ("*i64:16", "*i64:16", "*i64:16", "*i32:16", "*i32:16", "i32")},
         dict(NUM_SM=132, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, FP8=False),
         4, 3),
    Case("09 matmul", "09-persistent-matmul.py", "matmul_kernel",
         _both(*_matmul_sig()), MM, 8, 3),
    Case("09 persistent", "09-persistent-matmul.py", "matmul_kernel_persistent",
         _both(*_matmul_sig()), dict(MM, NUM_SMS=132), 8, 3),
    Case("09 tma", "09-persistent-matmul.py", "matmul_kernel_tma",
         {"cuda:90": ("tensordesc<fp16[128, 64]>", "tensordesc<fp16[128, 64]>",
                      "tensordesc<fp16[128, 128]>", I32, I32, I32)},
         dict(MM, FP8_OUTPUT=False, WARP_SPECIALIZE=False), 8, 3),
    Case("09 tma persistent", "09-persistent-matmul.py", "matmul_kernel_tma_persistent",
         {"cuda:90": _persistent_tma_sig(128, 128, 64, True)},
         dict(MM, FP8_OUTPUT=False, EPILOGUE_SUBTILE=True, NUM_SMS=132,
              WARP_SPECIALIZE=False), 8, 3),
    Case("09 tma persistent nosub", "09-persistent-matmul.py", "matmul_kernel_tma_persistent",
         {"cuda:90": _persistent_tma_sig(128, 128, 64, False)},
         dict(MM, FP8_OUTPUT=False, EPILOGUE_SUBTILE=False, NUM_SMS=132,
              WARP_SPECIALIZE=False), 4, 4),
    Case("09 descriptor persistent", "09-persistent-matmul.py",
         "matmul_kernel_descriptor_persistent", {"cuda:90": (F16, F16, F16, I32, I32, I32)},
         dict(MM, EPILOGUE_SUBTILE=False, NUM_SMS=132, WARP_SPECIALIZE=False, FLATTEN=False),
         8, 3),
    Case("10 block scaled mxfp8", "10-block-scaled-matmul.py", "block_scaled_matmul_kernel",
         {"cuda:90": ("tensordesc<fp8e4nv[128, 128]>", "tensordesc<u8[1, 1, 1, 2, 256]>",
                      "tensordesc<fp8e4nv[256, 128]>", "tensordesc<u8[1, 2, 1, 2, 256]>",
                      "tensordesc<fp16[128, 256]>")},
         dict(M=8192, N=8192, K=8192, output_type=1, ELEM_PER_BYTE_A=1, ELEM_PER_BYTE_B=1,
              VEC_SIZE=32, BLOCK_M=128, BLOCK_N=256, BLOCK_K=128, rep_m=1, rep_n=2, rep_k=1,
              NUM_STAGES=4), 4, 4),
    Case("11 pdl add", "11-programmatic-dependent-launch.py", "add_kernel",
         {"cuda:90": (F32, F32, F32, "i32")}, dict(BLOCK_SIZE=1024, USE_GDC=True), 4),
    Case("ex add", "examples", "add_kernel", _both(F32, F32, F32, "i32"),
         dict(BLOCK_SIZE=1024)),
    Case("ex triad", "examples", "triad_kernel", _both(F32, F32, F32, "fp32", "i32"),
         dict(BLOCK_SIZE=1024)),
    Case("ex softmax", "examples", "softmax_kernel", _both(F32, F32, I32, I32, "i32"),
         dict(BLOCK_SIZE=1024), 4),
    Case("ex softmax fp32 acc", "examples", "softmax_fp32_acc_kernel",
         _both(F16, F16, I32, I32, "i32"), dict(BLOCK_SIZE=1024), 4),
    Case("ex ln fwd", "examples", "layer_norm_fwd_kernel",
         _both(F16, F16, F16, F16, F32, F32, I32, I32, "fp32"), dict(BLOCK_SIZE=1024), 4),
    Case("ex ln row", "examples", "layer_norm_row_kernel",
         _both(F16, F16, F16, F16, I32, "i32", "fp32"), dict(BLOCK_SIZE=1024), 4),
    Case("ex matmul ieee", "examples", "matmul_kernel", _both(F32, F32, F32, "i32", "i32", "i32"),
         dict(BM=64, BN=64, BK=32, GROUP_M=8), 4, 3),
    Case("ex matmul fp16", "examples", "matmul_fp16_kernel", _both(F16, F16, F32, I32, I32, I32),
         dict(BM=128, BN=128, BK=32, GROUP_M=8), 4, 3),
    Case("ex matmul tutorial", "examples", "matmul_tutorial_kernel", _both(*_matmul_sig()),
         dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8), 8, 3),
    Case("ex matmul typed bf16", "examples", "matmul_typed_kernel",
         _both("*bf16:16", "*bf16:16", "*bf16:16", I32, I32, I32),
         dict(BM=128, BN=128, BK=64, GROUP_M=8), 8, 3),
    Case("ex attention", "examples", "attention_fwd_kernel", _both(F16, F16, F16, F16, "fp32", I32),
         dict(D=64, BM=128, BN=64), 4, 3),
    Case("ex attention causal", "examples", "attention_causal_fwd_kernel",
         _both(F16, F16, F16, F16, "fp32", I32), dict(D=64, BM=128, BN=64), 8, 3),
    Case("ex persistent tma", "examples", "matmul_persistent_tma_kernel",
         {"cuda:90": ("tensordesc<fp16[128, 64]>", "tensordesc<fp16[128, 64]>",
                      "tensordesc<fp16[128, 128]>", I32, I32, I32)},
         dict(MM, NUM_SMS=132), 8, 3),
]


def _is_jit_decorator(d) -> bool:
    f = d.func if isinstance(d, ast.Call) else d
    return ast.unparse(f) in ("triton.jit", "jit")


def load_tutorial(path: str) -> dict:
    """The ``@triton.jit`` functions of the tutorial at ``path`` as workbench ``@jit``
    functions, by name. Only the function definitions (and module-level constants) are
    executed, from the file's own lines; ``triton``/``tl`` are the workbench's."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    body = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(map(_is_jit_decorator,
                                                         node.decorator_list)):
            dec = next(d for d in node.decorator_list if _is_jit_decorator(d))
            node.decorator_list = [dec.func if isinstance(dec, ast.Call) else dec]
            body.append(node)
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)):
            body.append(node)
    ns: dict = {"triton": workbench, "tl": wtl, "__name__": "tutorial_" +
                os.path.basename(path).split("-")[0]}
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), ns)  # noqa: S102
    return {k: v for k, v in ns.items() if getattr(v, "__workbench_jit__", False)}


def _short(d) -> str:
    text = f"{d.what}: ours {d.ours} / Triton {d.theirs}"
    return text if len(text) <= 220 else text[:217] + "..."


def run(triton_src: str, only: set | None) -> list[dict]:
    """Compare every case; returns one record per configuration (``label``, ``target``,
    ``warps``, ``stages``, ``differ`` (properties), ``lines`` or ``error``)."""
    from workbench.testing import examples
    tut_dir = os.path.join(triton_src, "tutorials")
    have = os.path.isdir(tut_dir)
    if not have:
        print(f"(Triton's tutorials not found at {tut_dir}: skipping them; pass "
              "--triton-src PATH/TO/triton/python)", file=sys.stderr)
    modules: dict = {}
    rows = []
    for case in CASES:
        if only and not any(o in case.label for o in only):
            continue
        if case.source == "examples":
            kernel = getattr(examples, case.kernel)
        elif not have:
            continue
        else:
            if case.source not in modules:
                modules[case.source] = load_tutorial(os.path.join(tut_dir, case.source))
            kernel = modules[case.source][case.kernel]
        for target in TARGETS:
            sig = case.signature.get(target)
            rec = dict(label=case.label, target=target, warps=case.num_warps,
                       stages=case.num_stages)
            if sig is None:
                continue
            try:
                c = compare(kernel, *sig, target=target, num_warps=case.num_warps,
                            num_stages=case.num_stages, **case.constexprs,
                            **case.per_target.get(target, {}))
            except Exception as e:  # noqa: BLE001 - a row says which compiler refused
                rec.update(error=f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
                rows.append(rec)
                continue
            rec.update(differ=[p for p in PROPERTIES if not c.agree[p]],
                       lines=[f"{d.prop}: {_short(d)}" for d in c.differences])
            rows.append(rec)
    return rows


def table(rows: list[dict]) -> str:
    """The Markdown table of :func:`run`'s records, with the counts below it."""
    out = ["| kernel | target | warps/stages | differ | differences |", "|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['label']} | {r['target']} | {r['warps']}/{r['stages']} | "
                       f"error | {r['error']} |")
            continue
        out.append(f"| {r['label']} | {r['target']} | {r['warps']}/{r['stages']} | "
                   f"{', '.join(r['differ']) or 'none'} | "
                   f"{'<br>'.join(r['lines']).replace('|', '/')} |")
    ok = [r for r in rows if "error" not in r]
    out.append(f"\n{len(rows)} configurations, {len(rows) - len(ok)} not compiled; "
               f"all properties agree in {sum(not r['differ'] for r in ok)}/{len(ok)}")
    out.append("; ".join(f"{p} {sum(p not in r['differ'] for r in ok)}/{len(ok)}"
                         for p in PROPERTIES))
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--triton-src", default="/tmp/triton-src/python",
                    help="the python folder of a Triton 3.6 checkout (holding tutorials/)")
    ap.add_argument("--only", default="", help="comma-separated parts of case labels")
    ap.add_argument("--json", default="", help="write the records here")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = run(args.triton_src, set(filter(None, args.only.split(","))) or None)
    print(table(rows))
    print(f"({time.perf_counter() - t0:.0f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
