"""What the GEP-group rewrite (``workbench.codegen.nvptx.gep_groups``) does to the code: each
case of ``benchmarks/compile_time.py`` compiled for ``cuda:90`` with the rewrite off (limits
above any group) and on (the default limits), then PTX emission time, the GEPs rewritten, and
what ptxas makes of the PTX (registers, spill bytes, SASS instructions: all of them and those
between the first and the last backward branch, the main loops).

Usage: ``python benchmarks/gep_groups_quality.py --triton-src /tmp/triton-src
[--cases attn_bwd_d128,...]``. Needs ptxas and nvdisasm (the ``sass`` extra); no GPU.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

_INSTR = re.compile(r"^\s+/\*([0-9a-f]+)\*/\s+(.*?);")
_LABEL = re.compile(r"^(\.L_x_\d+):")


def sass_counts(sass: str) -> tuple[int, int]:
    """(instructions, instructions from the first to the last backward ``BRA`` target/source:
    the main loops) of ``nvdisasm -c`` text."""
    instrs, labels, pending = [], {}, []
    for line in sass.splitlines():
        lab = _LABEL.match(line.strip())
        if lab:
            pending.append(lab[1])
            continue
        m = _INSTR.match(line)
        if m:
            addr = int(m[1], 16)
            for name in pending:
                labels[name] = addr
            pending = []
            instrs.append((addr, m[2]))
    back = []
    for addr, text in instrs:
        m = re.search(r"\bBRA\b.*?(\.L_x_\d+)", text)
        if m and m[1] in labels and labels[m[1]] <= addr:
            back.append((labels[m[1]], addr))
    if not back:
        return len(instrs), 0
    lo, hi = min(b[0] for b in back), max(b[1] for b in back)
    return len(instrs), sum(1 for a, _ in instrs if lo <= a <= hi)


def ptxas_report(ptx: str) -> dict:
    """Registers, spill bytes and SASS instruction counts of ``ptx`` for sm_90a."""
    from workbench.backends.nvidia_tools import find_tool
    ptxas, nvdisasm = find_tool("ptxas"), find_tool("nvdisasm")
    with tempfile.TemporaryDirectory() as d:
        src, cubin = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        out = subprocess.run([ptxas, "-arch=sm_90a", "-v", "-O3", src, "-o", cubin],
                             capture_output=True, text=True, check=True).stderr
        sass = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True,
                              check=True).stdout
    regs = re.search(r"Used (\d+) registers", out)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", out)
    total, loop = sass_counts(sass)
    return dict(regs=int(regs[1]) if regs else -1,
                spill_st=int(spills[1]) if spills else 0,
                spill_ld=int(spills[2]) if spills else 0, sass=total, loop=loop)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--triton-src", default="/tmp/triton-src")
    ap.add_argument("--cases", default="matmul_128x256x64,attn_fwd_d128_128x128_s3w8,"
                                       "attn_bwd_d64_causal,attn_bwd_d128")
    args = ap.parse_args(argv)
    os.environ["WORKBENCH_DISK_CACHE"] = "0"
    import compile_time as ct

    import workbench
    from workbench.codegen.nvptx import gep_groups
    from workbench.compiler import ASTSource, GPUTarget
    workbench.ASTSource = ASTSource  # type: ignore[attr-defined]
    cases = args.cases.split(",")
    folder = tempfile.mkdtemp(prefix="gep-groups-")
    mods = {n: ct.kernel_module(args.triton_src, n, "ours", folder)
            for n in sorted({ct.CASES[c][0] for c in cases})}
    counted: list[int] = []
    real = gep_groups.hide_large_gep_groups

    def counting(text, index_limit=None, base_limit=None):
        new, n = real(text, index_limit, base_limit)
        counted.append(n)
        return new, n
    gep_groups.hide_large_gep_groups = counting  # type: ignore[assignment]
    default = (gep_groups.INDEX_LIMIT, gep_groups.BASE_LIMIT)
    print("case                         rewrite  GEPs  ptx s  regs  spill st/ld   SASS  loops")
    for case in cases:
        for label, limits in (("off", (10**9, 10**9)), ("on", default)):
            gep_groups.INDEX_LIMIT, gep_groups.BASE_LIMIT = limits
            counted.clear()
            ct._clear_ours_caches()
            src = ct._source(mods, case, "ours", workbench)
            k = workbench.compile(src, target=GPUTarget("cuda", 90, 32),
                                  options=dict(ct.CASES[case][5]))
            r = ptxas_report(k.asm["ptx"])
            print(f"{case:28s} {label:7s} {sum(counted):5d} {k.timings.get('ptx', 0):6.2f} "
                  f"{r['regs']:5d} {r['spill_st']:6d}/{r['spill_ld']:<6d} {r['sass']:6d} "
                  f"{r['loop']:6d}")
    gep_groups.INDEX_LIMIT, gep_groups.BASE_LIMIT = default


if __name__ == "__main__":
    main()
