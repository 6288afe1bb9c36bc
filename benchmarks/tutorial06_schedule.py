"""Tutorial 06's attention forward (``_attn_fwd``) compiled for sm_90 by the workbench and by
Triton 3.6, schedule against schedule (no GPU needed).

Usage: ``python benchmarks/tutorial06_schedule.py [--triton-src /tmp/triton-src]``

For each configuration (head dim, BLOCK_M x BLOCK_N, warps, stages, causal; device-side
descriptors from pointers as the tutorial's Hopper benchmark makes them, warp_specialize off)
it prints whether the layout on every tracked op agrees (:func:`workbench.runtime.ir_facts.
op_layouts`), whether the layout definitions agree, whether the ``ttg``/``ttng`` ops of the
attention loops (names, ``isAsync``, ``pendings``, ``num``) come in the same order, whether
the PTX's synchronisation instructions (``wgmma.fence``/``commit_group``/``wait_group N``,
``cp.async.wait_group N``, mbarrier expect/wait, TMA copies) come in the same order, and the
``bar.sync`` counts (ours / Triton's). Needs Triton 3.6 and its source tree (the tutorials).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

#: (head dim, BLOCK_M, BLOCK_N, warps, stages, causal)
CONFIGS = [(64, 128, 64, 4, 3, False), (128, 128, 128, 8, 3, False), (64, 64, 32, 4, 2, False),
           (64, 128, 64, 4, 3, True), (128, 128, 64, 4, 4, True), (64, 64, 32, 4, 2, True)]
_SYNC = re.compile(r"(wgmma\.fence|wgmma\.commit_group|wgmma\.wait_group\.sync\.aligned\s+\d+|"
                   r"cp\.async\.wait_group\s+\d+|cp\.async\.commit_group|mbarrier\.try_wait"
                   r"[\w.]*|mbarrier\.arrive\.expect_tx[\w.]*|cp\.async\.bulk\.tensor[\w.:]*)")


def loop_ops(ttgir: str) -> list:
    """The ``ttg.``/``ttng.`` ops (with ``isAsync``, ``pendings``, ``num``) inside loops."""
    out, depth = [], 0
    for line in ttgir.splitlines():
        s = line.strip()
        if "scf.for" in s:
            depth += 1
            out.append("for")
        elif s.startswith("scf.yield") and depth:
            depth -= 1
            out.append("yield")
        elif depth:
            m = re.match(r'^(?:%[\w#]+(?::\d+)? = )?"?((?:ttg|ttng)\.\w+)', s)
            if m and m.group(1) != "ttg.local_dealloc":
                extra = re.findall(r"(pendings = \d+|num = \d+|isAsync = true)", s)
                out.append(m.group(1) + (f"[{','.join(extra)}]" if extra else ""))
    return out


def sync_ops(ptx: str) -> list:
    return [re.sub(r"\s+", " ", x) for x in _SYNC.findall(ptx)]


def compile_both(src_dir: str, cfg: tuple) -> dict:
    """``{"ours": kernel, "triton": kernel}`` for one configuration."""
    import compile_time as ct
    import triton
    from triton.backends.compiler import GPUTarget as TGPUTarget
    from triton.compiler import ASTSource as TASTSource

    import workbench
    from workbench.compiler import ASTSource, GPUTarget
    hd, bm, bn, warps, stages, causal = cfg
    _, kname, sig, consts, div16, opts = ct._fwd(hd, bm, bn, warps, stages, causal)
    consts = dict(consts, warp_specialize=False)
    full = dict(sig, **{k: "constexpr" for k in consts})
    attrs = {(i,): ct.DIV16 for i in div16}
    folder = tempfile.mkdtemp(prefix="tut06-")
    out = {}
    for flavour, mod, src_cls, tgt in (("ours", workbench, ASTSource, GPUTarget),
                                       ("triton", triton, TASTSource, TGPUTarget)):
        fn = getattr(ct.kernel_module(src_dir, "06", flavour, folder), kname)
        src = src_cls(fn, full, dict(consts), attrs)
        out[flavour] = mod.compile(src, target=tgt("cuda", 90, 32), options=dict(opts))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--triton-src", default="/tmp/triton-src",
                    help="Triton's source tree (python/tutorials/06-fused-attention.py)")
    args = ap.parse_args(argv)
    os.environ.setdefault("WORKBENCH_DISK_CACHE", "0")
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tut06-cache-"))
    from workbench.runtime import ir_facts
    print("hd  BMxBN   warps stages causal | op layouts | layout defs | loop ops | ptx sync | "
          "bar.sync ours/Triton")
    for cfg in CONFIGS:
        k = compile_both(args.triton_src, cfg)
        o, t = k["ours"].asm, k["triton"].asm
        same = [ir_facts.op_layouts(o["ttgir"]) == ir_facts.op_layouts(t["ttgir"]),
                sorted(ir_facts.alias_table(o["ttgir"]).values()) ==
                sorted(ir_facts.alias_table(t["ttgir"]).values()),
                loop_ops(o["ttgir"]) == loop_ops(t["ttgir"]),
                sync_ops(o["ptx"]) == sync_ops(t["ptx"])]
        hd, bm, bn, warps, stages, causal = cfg
        cols = " | ".join(f"{'yes' if s else 'NO':>{w}}" for s, w in
                          zip(same, (10, 11, 8, 8), strict=True))
        print(f"{hd:<3} {bm:>3}x{bn:<4} {warps:>5} {stages:>6} {str(causal):>6} | {cols} | "
              f"{o['ptx'].count('bar.sync')}/{t['ptx'].count('bar.sync')}")


if __name__ == "__main__":
    main()
