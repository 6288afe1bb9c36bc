"""Bad-input fuzzing in CI: mutants of the random valid kernels (seeds from today's date plus a
fixed list), each run on the interpreter and the CPU backend (and compiled for cuda:90 when its
error is a compile-time one) in a worker process, must give a workbench error naming the
mutant's file, line and column with a caret (out of bounds: the program id and offset), never
an internal exception, never a missing error, never a crash. A failure prints the seed, so
``mutate(seed)`` reproduces it."""
import datetime
import os

import pytest

from workbench.errors import CompilationError, LaunchError, WorkbenchError
from workbench.testing.fuzz.badcheck import classify, load, run
from workbench.testing.fuzz.mutate import Mutant, mutate
from workbench.testing.fuzz.mutations import EXTRA_MUTATIONS, LAUNCH_MUTATIONS, MUTATIONS
from workbench.testing.fuzz.workers import run_pool

N_BAD = 100
# 19 39 81: tl.expand_dims wrapped an out-of-range axis; 283 316: tl.dot took bool operands;
# 134: a bad grid's LaunchError named no line; 274: tensor.to(rounding=1) raised a TypeError;
# 301 471: a combine_fn that is not @jit raised AttributeError; 87 247: hints below 1 passed
FIXED_SEEDS = [0, 1, 2, 19, 39, 81, 283, 316, 134, 274, 301, 471, 87, 247]


def _seeds(n: int) -> list:
    today = int(datetime.date.today().strftime("%Y%m%d")) * 1000
    return FIXED_SEEDS + [today + i for i in range(n - len(FIXED_SEEDS))]


def _report(res: dict) -> str:
    m = mutate(res["seed"])
    lines = [f"seed {res['seed']} ({res['kind']}: {res['note']}; expected {res['expect']}, "
             f"line {m.line}, launch {m.launch})"]
    for stage, outcome in res["stages"].items():
        if outcome != "good":
            lines.append(f"  {stage}: {outcome}\n{res['messages'].get(stage, '')}")
    head = f"--- mutant (workbench.testing.fuzz.mutate.mutate({res['seed']})) ---"
    return "\n".join(lines + [head, m.text])


def test_mutants_give_located_workbench_errors():
    jobs = 2 if (os.cpu_count() or 1) > 1 else 1
    results = run_pool("bad", _seeds(N_BAD), jobs=jobs, timeout=300)
    assert len(results) == N_BAD
    bad = [r for r in results if any(v != "good" for v in r["stages"].values())]
    assert not bad, "\n\n".join(_report(r) for r in bad[:5])
    kinds = {r["kind"] for r in results}
    assert len(kinds) >= 12, kinds  # the sample covers most mutations


def test_every_mutation_is_drawn_and_mutants_are_deterministic():
    kinds = {mutate(s).kind for s in range(120)}
    assert kinds == set(MUTATIONS) | set(LAUNCH_MUTATIONS) | set(EXTRA_MUTATIONS)
    assert mutate(77).text == mutate(77).text
    m = mutate(next(s for s in range(100) if mutate(s).expect == "compile"))
    assert m.line is not None and m.text.splitlines()[m.line - 1].strip()


def test_the_classifier_can_fail():
    """Each wrong answer is told apart: a missing error, an internal exception, an error
    without a location, an error on another line, an error where none is allowed."""
    m = mutate(next(s for s in range(100) if mutate(s).expect == "compile"))
    kern, path = load(m)
    assert classify(m, path, None) == "missing"
    assert classify(m, path, KeyError("x")) == "internal"
    assert classify(m, path, CompilationError("no location")) == "unlocated"
    elsewhere = CompilationError("x", type("L", (), {"file": path, "line": 1, "col": 1})())
    assert classify(m, path, elsewhere) == "misplaced"
    none = Mutant(m.seed, m.kind, m.prog, m.text, "none")
    assert classify(none, path, LaunchError("x")) == "wrong_error"
    assert classify(none, path, None) == "good"
    assert isinstance(CompilationError("x"), WorkbenchError)


def test_a_valid_program_passed_off_as_bad_is_reported_missing():
    m = mutate(next(s for s in range(100) if mutate(s).expect == "compile"))
    from workbench.testing.fuzz.build import source
    valid = Mutant(m.seed, "none", m.prog, source(m.prog), "compile", 10)
    out = run(valid)
    assert set(out.stages.values()) == {"missing"}, out


def test_pool_reports_a_crash_and_a_hang_with_their_seeds():
    """Seed 7 kills its worker with SIGSEGV, seed 11 sleeps past the timeout; the others
    still run, in replacement workers. (One worker, so seed 11 is not a fresh worker's first
    seed, whose clock starts after the worker's start-up allowance.)"""
    results = run_pool("selftest", [1, 11, 7, 12, 13], jobs=1, options={"sleep": 60},
                       timeout=4)
    by_seed = {r["seed"]: r for r in results}
    assert sorted(by_seed) == [1, 7, 11, 12, 13]
    assert by_seed[1] == {"seed": 1} and by_seed[12] == {"seed": 12}
    assert "died (exit code -11)" in by_seed[7]["failures"]["crash"]
    assert "Segmentation fault" in by_seed[7]["failures"]["crash"]  # faulthandler's stack
    assert "timed out" in by_seed[11]["failures"]["crash"]


@pytest.mark.parametrize("seed", [19, 283, 274, 301])
def test_fixed_regressions_in_process(seed):
    """The seeds that found bugs, run in this process (a quicker failure message)."""
    out = run(mutate(seed))
    assert out.ok, out


def test_campaign_tables_say_what_their_columns_and_mutations_mean():
    """The campaign's printed tables end with what ``runs``, each outcome column shown and
    each mutation kind in the table mean (read from the mutations themselves)."""
    import collections
    import importlib.util
    from pathlib import Path

    from workbench.testing.fuzz.badcheck import OUTCOME_MEANING
    from workbench.testing.fuzz.mutate import describe
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz_campaign.py"
    spec = importlib.util.spec_from_file_location("fuzz_campaign", path)
    campaign = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(campaign)
    by_stage: dict = collections.defaultdict(collections.Counter)
    by_kind: dict = collections.defaultdict(collections.Counter)
    stage_runs: collections.Counter = collections.Counter()
    for seed in (0, 1, 2):
        out = run(mutate(seed))
        stage_runs[out.kind] += len(out.stages)
        assert len(out.stages) in (2, 3), out.stages
        for stage, outcome in out.stages.items():
            by_stage[stage][outcome] += 1
            by_kind[out.kind][outcome] += 1
    text = campaign.bad_tables(by_stage, by_kind)
    lines = text.splitlines()
    head = lines[lines.index("") + 1].split()
    assert head[:2] == ["mutation", "runs"], text
    for kind, counts in by_kind.items():
        row = next(ln.split() for ln in lines if ln.startswith(kind + " "))
        assert int(row[1]) == stage_runs[kind] == sum(counts.values()), text
        assert f"  {kind}: {describe(kind)}" in lines and len(describe(kind)) > 20, text
    assert any(ln.startswith("runs: stage runs, not mutants") for ln in lines), text
    for col in head[2:]:
        assert f"  {col}: {OUTCOME_MEANING[col]}" in lines, text
    with pytest.raises(KeyError):
        describe("no_such_mutation")
