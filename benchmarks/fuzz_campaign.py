"""A long differential fuzzing campaign: random valid kernels against the numpy reference on the
interpreter and the CPU backend, and PTX for cuda:80/cuda:90 (ptxas when installed).

    python benchmarks/fuzz_campaign.py --n 5000 --seed 1 [--ptx-every 10] [--no-shrink]

Prints one line per failure (seed, stage, message; then the shrunk program) and a table:
programs, agreement per stage, failures, seconds.
"""
from __future__ import annotations

import argparse
import collections
import time

from workbench.backends.nvidia_tools import find_tool
from workbench.testing.fuzz import check, generate, shrink, source


def _shrunk(prog, stage):
    def fails(p):
        o = check(p, ptx_archs=(80, 90) if stage.startswith("cuda") else ())
        return stage in o.failures
    return shrink(prog, fails)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="number of programs")
    ap.add_argument("--seed", type=int, default=0, help="first seed (seeds seed..seed+n-1)")
    ap.add_argument("--ptx-every", type=int, default=10,
                    help="compile every k-th program to PTX for cuda:80 and cuda:90 (0: never)")
    ap.add_argument("--no-shrink", action="store_true", help="do not minimise failures")
    a = ap.parse_args()
    ptxas = find_tool("ptxas")
    runs: collections.Counter = collections.Counter()
    agree: collections.Counter = collections.Counter()
    gaps: collections.Counter = collections.Counter()
    t0 = time.perf_counter()
    for seed in range(a.seed, a.seed + a.n):
        prog = generate(seed)
        ptx = (80, 90) if a.ptx_every and (seed - a.seed) % a.ptx_every == 0 else ()
        out = check(prog, ptx_archs=ptx, ptxas=ptxas)
        for stage in out.passed + list(out.failures) + list(out.unsupported):
            runs[stage] += 1
        for stage, msg in out.unsupported.items():
            gaps[stage] += 1
            print(f"UNSUPPORTED seed {seed} {stage}: {msg.splitlines()[0][:300]}", flush=True)
        for stage in out.passed:
            agree[stage] += 1
        for stage, msg in out.failures.items():
            print(f"FAIL seed {seed} {stage}: {msg[:500]}", flush=True)
            if not a.no_shrink:
                print(source(_shrunk(prog, stage)), flush=True)
        done = seed - a.seed + 1
        if done % 250 == 0:
            print(f"progress: {done} programs, {time.perf_counter() - t0:.0f} s, "
                  + ", ".join(f"{k} {agree[k]}/{runs[k]}" for k in sorted(runs))
                  + f"; unsupported {dict(gaps)}", flush=True)
    dt = time.perf_counter() - t0
    print(f"\nprograms: {a.n} (seeds {a.seed}..{a.seed + a.n - 1}), {dt:.0f} s, "
          f"{dt / max(a.n, 1):.2f} s per program; ptxas: {ptxas or 'not found'}")
    print(f"{'stage':<12} {'run':>6} {'agree':>6} {'fail':>6} {'unsupported':>11}")
    for stage in ("interpreter", "cpu", "cuda:80", "cuda:90", "generator"):
        if runs[stage]:
            fail = runs[stage] - agree[stage] - gaps[stage]
            print(f"{stage:<12} {runs[stage]:>6} {agree[stage]:>6} {fail:>6} {gaps[stage]:>11}")


if __name__ == "__main__":
    main()
