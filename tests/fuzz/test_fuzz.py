"""Differential fuzzing in CI: random valid kernels (seeds from today's date plus a fixed list)
must agree with their numpy reference on the interpreter and the CPU backend; a sample also
compiles to PTX for cuda:80 and cuda:90 (and ptxas assembles it when installed). A failure
prints the seed, the program and its shrunk form, so `generate(seed)` reproduces it."""
import datetime
import os

import numpy as np
import pytest

from workbench.backends.nvidia_tools import find_tool
from workbench.testing.fuzz import check, generate, shrink, source
from workbench.testing.fuzz.check import compare
from workbench.testing.fuzz.reference import expected, make_args
from workbench.testing.fuzz.workers import run_pool

N_PROGRAMS = 300
N_PTX = 6
# 5059 5096 5136: tl.minimum/maximum with a Python number kept the tile's narrow
# dtype before the language took Triton's rule (wrong values, a loop-carried type mismatch, fp16
# rejected by tl.sqrt); 202323: a bf16 cumsum summed in bf16 instead of fp32
FIXED_SEEDS = [0, 1, 2, 3, 19, 36, 4242, 31337, 5059, 5096, 5136, 202323]
# Compiled to PTX for cuda:80 and cuda:90 (and assembled) every run. 303510 304170 305900
# 308620 311760 319580: a tl.cumsum of a tl.dot result kept the dot's #mma layout, which the
# scan lowering cannot take (Triton converts to a blocked layout first); 300690 301910 302350:
# float64 tl.sin/tl.cos were not implemented by the CUDA backend
PTX_SEEDS = [303510, 304170, 305900, 308620, 311760, 319580, 300690, 301910, 302350]


def _seeds(n: int) -> list:
    today = int(datetime.date.today().strftime("%Y%m%d")) * 1000
    return FIXED_SEEDS + [today + i for i in range(n - len(FIXED_SEEDS))]


def _report(prog, failures: dict, archs=()) -> str:
    def fails(p):
        return not check(p, ptx_archs=archs).ok
    small = shrink(prog, fails, budget=60)
    return (f"seed {prog.seed} failed: {failures}\n--- program ---\n{source(prog)}"
            f"--- shrunk ---\n{source(small)}")


def _jobs() -> int:
    return 2 if (os.cpu_count() or 1) > 1 else 1


def test_random_programs_agree_with_numpy():
    """Run in worker processes (a crash is reported with its seed); failures are shrunk
    here."""
    results = run_pool("valid", _seeds(N_PROGRAMS), jobs=_jobs(), options={}, timeout=300)
    assert len(results) == N_PROGRAMS
    bad = sorted((r for r in results if r["failures"]), key=lambda r: r["seed"])
    assert not bad, "\n\n".join(
        f"seed {r['seed']}: {r['failures']}" if "crash" in r["failures"]
        else _report(generate(r["seed"]), r["failures"]) for r in bad[:3])


def test_random_programs_compile_to_ptx():
    ptxas = find_tool("ptxas")
    seeds = [s + 7 for s in _seeds(N_PROGRAMS)[-N_PTX:]]
    results = run_pool("valid", seeds, jobs=_jobs(), timeout=300,
                       options={"ptx_every": 1, "first": seeds[0], "ptxas": ptxas})
    bad = sorted((r for r in results if r["failures"]), key=lambda r: r["seed"])
    assert all("cuda:80" in r["passed"] + list(r["unsupported"]) for r in results if r not in bad)
    assert not bad, "\n\n".join(_report(generate(r["seed"]), r["failures"], (80, 90))
                                  for r in bad)


def test_regression_seeds_compile_to_ptx():
    ptxas = find_tool("ptxas")
    results = run_pool("valid", PTX_SEEDS, jobs=_jobs(), timeout=300,
                       options={"ptx_every": 1, "first": PTX_SEEDS[0], "ptxas": ptxas})
    assert len(results) == len(PTX_SEEDS)
    for r in results:
        assert "cuda:80" in r["passed"] and "cuda:90" in r["passed"], r
    bad = [r for r in results if r["failures"]]
    assert not bad, "\n\n".join(_report(generate(r["seed"]), r["failures"], (80, 90))
                                  for r in bad)


def test_programs_are_deterministic_and_varied():
    assert source(generate(123)) == source(generate(123))
    texts = {source(generate(s)) for s in range(40)}
    assert len(texts) == 40
    kinds = {st.kind for s in range(200) for st in generate(s).stmts}
    assert {"dot", "reduce", "scan", "loop", "ifelse", "atomic", "joinsplit", "cast",
            "math", "divmod", "shift", "where", "minmax", "reshape", "trans"} <= kinds
    styles = {st.p["style"] for s in range(200) for st in generate(s).stmts if st.kind == "loop"}
    assert styles == {"for", "while_up", "while_down"}
    text = next(source(p) for p in map(generate, range(200))
                if any(st.kind == "loop" and st.p["style"] == "while_down" for st in p.stmts))
    assert "while v" in text and "_i > 0:" in text


def test_compare_catches_a_wrong_lane():
    prog = generate(5)
    args = make_args(prog, np.random.default_rng(1))
    want = expected(prog, args)
    got = {k: v.copy() for k, v in want.items()}
    assert compare(prog, got, want) is None
    flat = got["out"].view(np.uint8)
    flat[0] ^= 0x40  # one bit of the first element
    assert compare(prog, got, want) is not None


def test_shrink_keeps_the_failure_and_drops_the_rest():
    prog = next(p for p in map(generate, range(100, 400))
                if any(s.kind == "shift" for s in p.stmts) and len(p.stmts) > 6)

    def has_shift(p):
        return any(s.kind == "shift" for s in p.stmts) and p.result in [s.out for s in p.stmts]
    small = shrink(prog, has_shift)
    assert has_shift(small)
    assert len(small.stmts) < len(prog.stmts) and small.M <= prog.M


@pytest.mark.parametrize("seed", [11, 12])
def test_reference_is_not_the_interpreter(seed):
    """The numpy reference is computed without compiling anything."""
    import workbench.testing.fuzz.ops as ops
    import workbench.testing.fuzz.reference as ref
    for mod in (ops, ref):
        text = open(mod.__file__).read()
        assert "backends" not in text and "interpreter" not in text.lower().replace(
            "not the interpreter", "")
    prog = generate(seed)
    args = make_args(prog, np.random.default_rng(seed))
    assert expected(prog, args)["out"].shape == args["out"].shape


@pytest.mark.gpu
def test_random_programs_agree_on_the_gpu():
    """The CUDA backend (stage "cuda") against the same numpy reference, 40 programs."""
    failures = []
    for seed in _seeds(N_PROGRAMS)[:40]:
        prog = generate(seed)
        out = check(prog, ptx_archs=(), cuda=True)
        if not out.ok or "cuda" not in out.passed + list(out.unsupported):
            failures.append(f"seed {seed}: {out.failures}\n{source(prog)}")
    assert not failures, "\n\n".join(failures[:3])


def test_version_2_programs_draw_the_newer_features_and_old_seeds_keep_theirs():
    """Seeds from LEGACY_SEEDS on make version-2 programs: 8-bit float casts, bf16/tf32/ieee
    dots, dots with an accumulator, every order-independent atomic op. Seeds below keep
    their version-1 programs (the regression seeds above reproduce what they found)."""
    from workbench.testing.fuzz.build import LEGACY_SEEDS
    from workbench.testing.fuzz.makers import ATOMIC_OPS
    progs = [generate(s) for s in range(LEGACY_SEEDS, LEGACY_SEEDS + 400)]
    assert {p.version for p in progs} == {2}
    stmts = [st for p in progs for st in p.stmts]
    dtypes = {st.info.dtype for st in stmts if st.info is not None}
    assert {"fp8e4nv", "fp8e5", "fp8e4b15", "bf16"} <= dtypes
    dots = {(st.p["src"], bool(st.args)) for st in stmts if st.kind == "dot"}
    assert {"fp16", "bf16", "tf32", "ieee", "i8"} == {d for d, _ in dots}
    assert any(acc for _, acc in dots)
    assert {st.p["op"] for st in stmts if st.kind == "atomic"} == set(ATOMIC_OPS)
    for p in progs:  # one atomic op per program: mixed ops would depend on the order
        assert len({st.p["op"] for st in p.stmts if st.kind == "atomic"}) <= 1
    text = next(source(p) for p in progs if any(st.kind == "dot" and st.p["src"] == "tf32"
                                                for st in p.stmts))
    assert "tl.dot(" in text
    old = generate(FIXED_SEEDS[-1])
    assert old.version == 1 and not any(st.info is not None and st.info.dtype.startswith("fp8")
                                        for st in old.stmts)


def test_the_fp8_model_rounds_as_the_formats_define():
    """Hand-worked values: ties to even and saturation for e4m3fn and e5m2, Triton's
    e4b15 (clamped to 1.75, half away from zero)."""
    from workbench.testing.fuzz.fp8 import cast_fp8
    x = np.array([1.0625, 1.1875, 500.0, -500.0, 2.0**-10, 3 * 2.0**-10, -0.0], np.float32)
    assert cast_fp8(x, "fp32", "fp8e4nv").tolist() == \
        [1.0, 1.25, 448.0, -448.0, 0.0, 2.0**-8, -0.0]
    y = np.array([1.125, 60000.0, -3.0, 0.75], np.float64)
    assert cast_fp8(y, "fp64", "fp8e5").tolist() == [1.0, 57344.0, -3.0, 0.75]
    z = np.array([5.5, 0.125, 1.0625, -1.0625, -9.0], np.float32)
    assert cast_fp8(z, "fp32", "fp8e4b15").tolist() == [1.75, 0.125, 1.125, -1.125, -1.75]
    assert cast_fp8(np.array([448.0], np.float32), "fp8e4nv", "fp16").dtype == np.float16
    with pytest.raises(ValueError):
        cast_fp8(np.array([1], np.int32), "i32", "fp8e5")
