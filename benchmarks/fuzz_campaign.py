"""A long fuzzing campaign: random valid kernels against the numpy reference (interpreter, CPU
backend, PTX for cuda:80/cuda:90 with ptxas when installed, and with ``--backend cuda`` the GPU),
and mutated bad kernels that must each give a located workbench error.

    PYTHONPATH=. python benchmarks/fuzz_campaign.py --n 5000 --seed 500000 --jobs 2
    PYTHONPATH=. python benchmarks/fuzz_campaign.py --n 0 --bad 5000 --seed 600000 --jobs 2
    PYTHONPATH=. python benchmarks/fuzz_campaign.py --n 2000 --seed 700000 --backend cuda --jobs 16

Seeds below 500,000 make the older generator's programs (see ``build.LEGACY_SEEDS``).

Every program runs in a worker process (``--jobs`` of them), so one that kills its process is
reported as a crash with its seed. Prints one line per failure (seed, stage, message; a valid
program's failure is then shrunk and printed), then a table per campaign and the wall time.
"""
from __future__ import annotations

import argparse
import collections
import time

from workbench.backends.nvidia_tools import find_tool
from workbench.testing.fuzz import check, generate, shrink, source
from workbench.testing.fuzz.badcheck import OUTCOME_MEANING, OUTCOMES, STAGES
from workbench.testing.fuzz.mutate import describe
from workbench.testing.fuzz.workers import run_pool

VALID_STAGES = ("interpreter", "cpu", "cuda", "cuda:80", "cuda:90", "generator", "crash")


def _shrunk(seed: int, stage: str, cuda: bool):
    def fails(p):
        o = check(p, ptx_archs=(80, 90) if stage.startswith("cuda:") else (), cuda=cuda)
        return stage in o.failures
    return shrink(generate(seed), fails)


def valid_campaign(a, ptxas) -> None:
    """Random valid programs: per-stage run/agree/fail/unsupported table."""
    runs: collections.Counter = collections.Counter()
    agree: collections.Counter = collections.Counter()
    gaps: collections.Counter = collections.Counter()
    failed: list = []
    t0 = time.perf_counter()

    def seen(out: dict) -> None:
        for stage in out["passed"] + list(out["failures"]) + list(out["unsupported"]):
            runs[stage] += 1
        for stage in out["passed"]:
            agree[stage] += 1
        for stage, msg in out["unsupported"].items():
            gaps[stage] += 1
            print(f"UNSUPPORTED seed {out['seed']} {stage}: {msg.splitlines()[0][:300]}",
                  flush=True)
        for stage, msg in out["failures"].items():
            print(f"FAIL seed {out['seed']} {stage}: {msg[:800]}", flush=True)
            failed.append((out["seed"], stage))
        done = sum(runs[s] for s in ("interpreter", "generator", "crash"))
        if done and done % 250 == 0:
            print(f"progress: {done} programs, {time.perf_counter() - t0:.0f} s", flush=True)

    options = {"ptx_every": a.ptx_every, "first": a.seed, "ptxas": ptxas,
               "cuda": a.backend == "cuda"}
    run_pool("valid", range(a.seed, a.seed + a.n), a.jobs, options, a.timeout, seen)
    if not a.no_shrink:
        for seed, stage in failed:
            if stage not in ("crash", "generator"):
                print(f"--- seed {seed} {stage}, shrunk ---\n"
                      f"{source(_shrunk(seed, stage, a.backend == 'cuda'))}", flush=True)
    dt = time.perf_counter() - t0
    print(f"\nvalid programs: {a.n} (seeds {a.seed}..{a.seed + a.n - 1}), jobs {a.jobs}, "
          f"wall {dt:.0f} s ({dt / max(a.n, 1):.2f} s per program); ptxas: "
          f"{ptxas or 'not found'}; backend: {a.backend}")
    print(f"{'stage':<12} {'run':>6} {'agree':>6} {'fail':>6} {'unsupported':>11}")
    for stage in VALID_STAGES:
        if runs[stage]:
            fail = runs[stage] - agree[stage] - gaps[stage]
            print(f"{stage:<12} {runs[stage]:>6} {agree[stage]:>6} {fail:>6} {gaps[stage]:>11}")
    print(VALID_LEGEND)
    print(coverage(range(a.seed, a.seed + a.n)))


VALID_LEGEND = """\
run: programs that reached the stage (interpreter and cpu: every program; cuda:80/cuda:90:
  every --ptx-every-th, compiled to PTX and assembled by ptxas when found; cuda: run on the GPU;
  generator: the program could not be made; crash: its worker process died)
agree: the stage's result equals numpy's (integers and exact floats bit for bit, other floats
  within their error bound); fail: a different result or an error; unsupported: the stage
  refused a construct with an UnsupportedError (a known gap, printed above, not a wrong answer)"""


def coverage(seeds) -> str:
    """What the programs of ``seeds`` contain: statements per kind, dots per operand type,
    atomics per op, and how many distinct (source, destination) cast pairs they take."""
    kinds: collections.Counter = collections.Counter()
    detail: collections.Counter = collections.Counter()
    pairs = set()
    for seed in seeds:
        prog = generate(seed)
        dtype = {st.out: st.info.dtype for st in prog.stmts if st.info is not None}
        for st in prog.stmts:
            kinds[st.kind] += 1
            if st.kind == "dot":
                detail["dot " + st.p["src"] + (" +acc" if st.args else "")] += 1
            elif st.kind == "atomic":
                detail["atomic_" + st.p.get("op", "add")] += 1
            elif st.kind == "cast":
                pairs.add((dtype[st.args[0]], st.p["t"]))
                if "fp8" in st.p["t"] or "fp8" in dtype[st.args[0]]:
                    detail["cast with an 8-bit float"] += 1
    return ("statements: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) +
            "\ndetail: " + ", ".join(f"{k} {v}" for k, v in sorted(detail.items())) +
            f"\ndistinct cast pairs: {len(pairs)}")


def bad_campaign(a) -> None:
    """Mutated programs: outcome counts per stage and per mutation kind."""
    by_stage: dict = collections.defaultdict(collections.Counter)
    by_kind: dict = collections.defaultdict(collections.Counter)
    t0 = time.perf_counter()
    count = [0]

    def seen(out: dict) -> None:
        count[0] += 1
        for stage, outcome in out["stages"].items():
            by_stage[stage][outcome] += 1
            by_kind[out["kind"]][outcome] += 1
            if outcome != "good":
                msg = out["messages"].get(stage, "")
                print(f"BAD seed {out['seed']} {out['kind']} ({out['note']}; expect "
                      f"{out['expect']}) {stage}: {outcome}\n{msg[-1500:]}", flush=True)
        if count[0] % 500 == 0:
            print(f"progress: {count[0]} mutants, {time.perf_counter() - t0:.0f} s", flush=True)

    run_pool("bad", range(a.seed, a.seed + a.bad), a.jobs, {}, a.timeout, seen)
    dt = time.perf_counter() - t0
    print(f"\nbad programs: {a.bad} (seeds {a.seed}..{a.seed + a.bad - 1}), jobs {a.jobs}, "
          f"wall {dt:.0f} s ({dt / max(a.bad, 1):.3f} s per mutant)")
    print(bad_tables(by_stage, by_kind))


def _table(title: str, rows: dict, cols: list) -> list:
    out = [f"{title:<20} {'runs':>6} " + " ".join(f"{c:>11}" for c in cols)]
    for name in sorted(rows):
        r = rows[name]
        out.append(f"{name:<20} {sum(r.values()):>6} " + " ".join(f"{r[c]:>11}" for c in cols))
    return out


def bad_tables(by_stage: dict, by_kind: dict) -> str:
    """The bad-input campaign's tables (outcome counts per stage and per mutation kind), then
    what their columns and the mutation kinds shown mean. ``by_stage`` and ``by_kind``: name
    -> Counter of outcomes (one count per stage a mutant ran on)."""
    rows = list(by_stage.values()) + list(by_kind.values())
    cols = [o for o in OUTCOMES if any(r[o] for r in rows)] or ["good"]
    out = _table("stage", by_stage, cols) + [""] + _table("mutation", by_kind, cols)
    out += ["", f"runs: stage runs, not mutants: each mutant runs on {STAGES[0]} and "
            f"{STAGES[1]}, and is compiled for",
            f"  {STAGES[2]} when its error is a compile-time one (2 or 3 runs per mutant). "
            "Outcomes:"]
    out += [f"  {c}: {OUTCOME_MEANING[c]}" for c in cols]
    out += ["Mutations (each breaks a valid random kernel in one way):"]
    out += [f"  {k}: {describe(k)}" for k in sorted(by_kind)]
    return "\n".join(out)


def main() -> None:
    """Parse the arguments and run the campaigns asked for."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="number of valid programs")
    ap.add_argument("--bad", type=int, default=0, help="number of mutated bad programs")
    ap.add_argument("--seed", type=int, default=0, help="first seed (seeds seed..seed+n-1)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--ptx-every", type=int, default=10,
                    help="compile every k-th program to PTX for cuda:80 and cuda:90 (0: never)")
    ap.add_argument("--backend", choices=("host", "cuda"), default="host",
                    help="cuda: also run each valid program on the GPU against the reference")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds one program may take before its worker is killed")
    ap.add_argument("--no-shrink", action="store_true", help="do not minimise failures")
    a = ap.parse_args()
    t0 = time.perf_counter()
    if a.n:
        valid_campaign(a, find_tool("ptxas"))
    if a.bad:
        bad_campaign(a)
    print(f"\ntotal wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
