"""Fidelity table: our compile beside Triton 3.6's for every kernel of tests/fidelity, per
target (cuda:80, cuda:90) and warp count (4, 8). Needs the ``triton`` extra; no GPU.

    python benchmarks/fidelity.py                 # the table (Markdown) on stdout
    python benchmarks/fidelity.py --only transpose,join
    python benchmarks/fidelity.py --baseline tests/fidelity/baseline.json   # also record
                                                  # which properties agree, for the tests

Columns: convert_layout ops (ours/Triton), shared bytes from the kernels' metadata
(ours/Triton), bar.sync in PTX (ours/Triton), whether the layout definitions and the layout
on every tracked op agree, whether the PTX global vector widths agree. Below the table: per
property the configurations that agree, and the ``ldmatrix`` / ``stmatrix`` forms (x1/x2/x4,
``.trans``) and counts in the PTX: in how many configurations ours equal Triton's, and in how
many Triton uses the instruction at all.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "fidelity"))

from fidelity_kernels import CASES, TARGETS, WARPS  # noqa: E402

from workbench.runtime.compare import PROPERTIES, compare  # noqa: E402


def _mark(ok: bool) -> str:
    return "yes" if ok else "**no**"


def matrix_forms(ptx: str, kind: str) -> dict:
    """``{"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16": n, ...}``: the ``kind``
    (``ldmatrix`` or ``stmatrix``) instructions of a PTX text by their full form."""
    names = re.findall(rf"\b({kind}\.sync\.aligned\.[\w.]+)", ptx)
    return {n: names.count(n) for n in set(names)}


#: per matrix instruction: configurations whose forms and counts agree, and those where
#: Triton uses it at all (filled by :func:`run`)
MATRIX: dict = {}


def run(only: set | None) -> tuple[list, dict]:
    """Compare every case; returns (table rows, baseline {key: [agreeing properties]})."""
    rows, baseline = [], {}
    MATRIX.clear()
    for case in CASES:
        if only and case.name not in only:
            continue
        for target in TARGETS:
            for nw in WARPS:
                c = compare(case.kernel, *case.signature, target=target, num_warps=nw,
                            **case.constexprs)
                of, tf = c.ours_facts, c.theirs_facts
                rows.append(f"| {case.name} | {target} | {nw} | {of.converts}/{tf.converts} | "
                            f"{c.ours_shared}/{c.theirs_shared} | "
                            f"{of.ptx_barriers}/{tf.ptx_barriers} | "
                            f"{_mark(c.agree['layouts'])} | {_mark(c.agree['op_layouts'])} | "
                            f"{_mark(c.agree['vectors'])} |")
                key = f"{case.name}/{target}/{nw}"
                baseline[key] = [p for p in PROPERTIES if c.agree[p]]
                for kind in ("ldmatrix", "stmatrix"):
                    theirs = matrix_forms(c.theirs["ptx"], kind)
                    agree, used = MATRIX.setdefault(kind, (set(), set()))
                    if matrix_forms(c.ours["ptx"], kind) == theirs:
                        agree.add(key)
                    if theirs:
                        used.add(key)
    return rows, baseline


def main(argv=None) -> None:
    """Print the table; with ``--baseline PATH`` also write the agreement baseline."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated kernel names")
    ap.add_argument("--baseline", default="", help="write {case: agreeing properties} here")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows, baseline = run(set(filter(None, args.only.split(","))) or None)
    print("| kernel | target | warps | converts ours/Triton | shared B ours/Triton | "
          "bar.sync ours/Triton | layout defs agree | op layouts agree | vectors agree |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    total = len(baseline)
    for p in PROPERTIES:
        print(f"\n{p}: agree in {sum(p in v for v in baseline.values())}/{total}", end="")
    for kind, (agree, used) in MATRIX.items():
        differ = sorted(set(baseline) - agree)
        print(f"\n{kind} forms: agree in {len(agree)}/{total} (Triton uses {kind} in "
              f"{len(used)}){'; differ: ' + ', '.join(differ) if differ else ''}", end="")
    print(f"\n\n({total} configurations, {time.perf_counter() - t0:.0f} s)")
    if args.baseline:
        with open(args.baseline, "w") as f:
            json.dump(baseline, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
