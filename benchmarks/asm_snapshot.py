"""Fingerprints of the compiled text of 80 kernels, to show that a compiler change meant to
be invisible (speed work: caches, faster data structures) leaves every stage byte-identical.

Usage::

    python benchmarks/asm_snapshot.py --write /tmp/before.json    # before the change
    python benchmarks/asm_snapshot.py --check /tmp/before.json    # after: lists differences

Kernels: the fidelity suite's (``tests/fidelity/fidelity_kernels.py``, 29 kernels) for
``cuda:90`` and ``cuda:80`` with 4 warps, a few of them for ``cpu``, and the tutorial kernels
of :mod:`compile_time` (vector add, matmul, attention forward and backward, all the cases its
README figures use; ``--triton-src``
must hold Triton 3.6's ``python/tutorials``, else they are skipped). Each stage's text
(``ttir``, ``ttgir``, ``llir``, ``ptx``; ``asm`` on the CPU) is hashed with SHA-256; ptxas
is not run (its input, the PTX, is compared). The checkout's path is replaced by
``<repo>`` in the texts (it is in their debug information). Each kernel compiles twice,
each time in a fresh ``@jit``: first for the fingerprint, then again after all the others
(with whatever the compiler cached from them), so a cache that leaks one kernel's facts
into another shows as a difference too. Exit status 1 when ``--check`` finds a difference.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
#: where the tutorial kernels are written (a fixed folder: their path is in the debug info)
TUT_DIR = os.path.join(tempfile.gettempdir(), "asm-snapshot-kernels")
sys.path.insert(0, ROOT)  # this checkout
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "fidelity"))
sys.path.insert(0, HERE)

STAGES = ("ttir", "ttgir", "llir", "ptx", "asm")
CPU_CASES = ("add", "softmax", "layernorm", "matmul_f16", "cumsum_rows", "attention")
TUTORIAL_CASES = ("vector_add", "matmul_128x256x64", "matmul_64x32x32",
                  "attn_fwd_d64_128x64_s3w4", "attn_fwd_d128_128x64_s4w4_causal",
                  "attn_bwd_pre_d128", "attn_bwd_d64_causal", "attn_fwd_d128_128x128_s3w8",
                  "attn_bwd_d128", "attn_bwd_d128_causal")


def _digest(kernel) -> dict:
    out = {}
    for st in STAGES:
        try:
            text = kernel.asm[st]
        except KeyError:
            continue
        text = str(text).replace(ROOT, "<repo>")  # the same fingerprint from any checkout
        out[st] = hashlib.sha256(text.encode()).hexdigest()[:20]
    return out


def jobs(triton_src: str):
    """(name, thunk) pairs; each thunk compiles one kernel in a fresh ``@jit``."""
    import fidelity_kernels as fk

    import workbench as wb
    for case in fk.CASES:
        targets = ["cuda:90", "cuda:80"] + (["cpu"] if case.name in CPU_CASES else [])
        for target in targets:
            def run(case=case, target=target):
                return wb.compile(wb.jit(case.kernel.fn), *case.signature, target=target,
                                  num_warps=4, **case.constexprs)
            yield f"{case.name}@{target}", run
    if not os.path.isdir(os.path.join(triton_src, "python", "tutorials")):
        print(f"no tutorials under {triton_src}: tutorial kernels skipped", file=sys.stderr)
        return
    import compile_time as ct

    from workbench.compiler import ASTSource, GPUTarget
    wb.ASTSource = ASTSource  # type: ignore[attr-defined]
    os.makedirs(TUT_DIR, exist_ok=True)
    folder = TUT_DIR
    mods = {n: ct.kernel_module(triton_src, n, "ours", folder) for n in ("01", "03", "06")}
    for name in TUTORIAL_CASES:
        def run_t(name=name):
            src = ct._source(mods, name, "ours", wb)
            return wb.compile(src, target=GPUTarget("cuda", 90, 32),
                              options=dict(ct.CASES[name][5]))
        yield f"tutorial:{name}@cuda:90", run_t


def snapshot(triton_src: str) -> dict:
    """{kernel@target: {stage: sha256 prefix}}; a compile error is recorded as its text."""
    os.environ["WORKBENCH_DISK_CACHE"] = "0"
    from workbench.backends import nvidia_tools
    nvidia_tools.find_tool = lambda name: None  # type: ignore[assignment]  # PTX is compared
    result: dict = {}
    thunks = list(jobs(triton_src))
    for name, thunk in thunks:
        try:
            result[name] = _digest(thunk())
        except Exception as e:  # noqa: BLE001 - an error is a fingerprint too
            result[name] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
    for name, thunk in thunks:  # again, after every other kernel: caches must not leak
        try:
            again = _digest(thunk())
        except Exception as e:  # noqa: BLE001
            again = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
        if again != result[name]:
            result[name] = {"unstable": True, "first": result[name], "again": again}
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", metavar="FILE", help="write the fingerprints to FILE (json)")
    g.add_argument("--check", metavar="FILE", help="compare with the fingerprints in FILE")
    ap.add_argument("--triton-src", default="/tmp/triton-src")
    a = ap.parse_args(argv)
    snap = snapshot(a.triton_src)
    unstable = [k for k, v in snap.items() if "unstable" in v]
    if a.write:
        with open(a.write, "w") as f:
            json.dump(snap, f, indent=1, sort_keys=True)
        print(f"{len(snap)} kernels written to {a.write}; {len(unstable)} unstable")
        return 1 if unstable else 0
    with open(a.check) as f:
        old = json.load(f)
    diff = sorted(k for k in set(old) | set(snap) if old.get(k) != snap.get(k))
    for k in diff:
        print(f"DIFFERENT {k}: before {old.get(k)} after {snap.get(k)}")
    print(f"{len(snap)} kernels, {len(diff)} different, {len(unstable)} unstable")
    return 1 if diff or unstable else 0


if __name__ == "__main__":
    raise SystemExit(main())
