"""The stage view's diff mode: which lines a pass (or Triton) changed, checked on fresh random
edits and on real pass snapshots."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.viz.ir_lines import split_debug
from workbench.viz.stage_diffs import diff_lines, mlir_line_map, pass_diff, triton_diff


@wb.jit
def scaled_copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, v * 2, mask=m)


SIG = ("*fp32:16", "*fp32:16", "i32")


def _line_of(text: str) -> int:
    src, first = inspect.getsourcelines(scaled_copy.fn if hasattr(scaled_copy, "fn")
                                        else scaled_copy)
    return first + next(i for i, s in enumerate(src) if text in s)


def _kept(stage: str, text: str, gone: list[int]) -> list[str]:
    split = split_debug(stage, text.splitlines())
    return [s.code.strip() for i, s in enumerate(split) if not s.debug and i not in gone]


def test_diff_lines_finds_random_edits():
    rng = np.random.default_rng()
    for _ in range(20):
        n = int(rng.integers(5, 60))
        a = [f"  %v{i} = arith.addi %a{i}, %b{i} : i32 loc(#loc{int(rng.integers(1, 9))})"
             for i in range(n)]
        dropped = set(rng.choice(n, int(rng.integers(0, n // 2 + 1)), replace=False).tolist())
        b, added = [], []
        for i, line in enumerate(a):
            if rng.random() < 0.2:
                added.append(len(b))
                b.append(f"  %new{len(b)} = arith.muli %x, %y : i32")
            if i not in dropped:
                # same code, a renumbered location: not a change
                b.append(line.rsplit(" loc(", 1)[0] + f" loc(#loc{int(rng.integers(10, 20))})")
        dele, add = diff_lines("ttgir", "\n".join(a), "\n".join(b))
        assert dele == sorted(dropped)
        assert add == added


def test_diff_lines_ignores_location_tables():
    a = '%x = tt.load %p : f32 loc(#loc1)\n#loc1 = loc("k.py":3:4)'
    b = '%x = tt.load %p : f32 loc(#loc7)\n#loc7 = loc("k.py":9:1)\n#loc8 = loc("k.py":2:2)'
    assert diff_lines("ttgir", a, b) == ([], [])


@pytest.fixture(scope="module")
def snapped():
    return wb.compile(scaled_copy, *SIG, target="cuda:90", BLOCK=1024, keep_snapshots=True)


def test_pass_diff_pairs_every_pass_and_marks_its_changes(snapped):
    snaps = snapped.snapshots["ttgir"]
    view = pass_diff(snapped, "ttgir")
    data = view.data
    assert [p["label"] for p in data["diff"]] == [f"{i}. {n}" for i, (n, _) in
                                                  enumerate(snaps) if i]
    for k, p in enumerate(data["diff"]):
        before, after = snaps[k][1], snaps[k + 1][1]
        assert (p["a"], p["b"]) == (k, k + 1)
        # what is left of the input once its removed lines go equals what is left of the
        # output once its added lines go
        assert _kept("ttgir", before, p["del"]) == _kept("ttgir", after, p["add"])
        assert (before == after) == (not p["del"] and not p["add"])
    coalesce = next(p for p in data["diff"] if p["label"].endswith("tritongpu-coalesce"))
    out = snaps[coalesce["b"]][1].splitlines()
    added = [out[i] for i in coalesce["add"]]
    # coalescing gives the load a vectorised layout, reached through convert_layout
    assert any("ttg.convert_layout" in s for s in added), added
    assert any(s.startswith("#blocked1 = #ttg.blocked<{sizePerThread = [4]") for s in added)
    chosen = data["diff"][data["diff_chosen"]]
    assert chosen["del"] or chosen["add"]
    assert data["visible"] == [data["panes"][chosen["a"]]["stage"],
                               data["panes"][chosen["b"]]["stage"]]


def test_pass_diff_links_lines_to_the_source(snapped):
    view = pass_diff(snapped, "ttgir", "tritongpu-coalesce")
    d = view.data
    assert d["diff"][d["diff_chosen"]]["label"].endswith("tritongpu-coalesce")
    pane = d["panes"][d["diff"][d["diff_chosen"]]["b"]]
    text = snapped.snapshots["ttgir"][d["diff"][d["diff_chosen"]]["b"]][1].splitlines()
    loads = [row[1] for row, line in zip(pane["lines"], text, strict=True) if "tt.load" in line]
    assert loads and set(loads) == {_line_of("tl.load")}
    lm = mlir_line_map("\n".join(text), "k.py")
    assert {lm[i].line for i, s in enumerate(text) if "tt.store" in s} == {_line_of("tl.store")}


def test_pass_diff_errors_say_what_to_do(snapped):
    with pytest.raises(ValueError, match="keep_snapshots=True"):
        pass_diff(snapped, "llir")      # the passes run on ttir and ttgir only
    with pytest.raises(ValueError, match="tritongpu-coalesce"):
        pass_diff(snapped, "ttgir", "no-such-pass")


def test_triton_diff_marks_what_differs_from_triton():
    pytest.importorskip("triton", reason="ours beside Triton needs the triton extra")
    comp = wb.compare(scaled_copy, *SIG, BLOCK=1024)
    data = triton_diff(comp).data
    assert [p["label"] for p in data["diff"]] == ["ttir", "ttgir", "llir", "ptx"]
    for p in data["diff"]:
        st = p["label"]
        ours, theirs = comp.ours[st], comp.theirs[st]
        assert _kept(st, ours, p["del"]) == _kept(st, theirs, p["add"])
        assert data["panes"][p["a"]]["stage"] == f"{st} ours"
        assert data["panes"][p["b"]]["stage"] == f"{st} Triton"
    ttgir = data["diff"][data["diff_chosen"]]
    assert ttgir["label"] == "ttgir"
    theirs = comp.theirs["ttgir"].splitlines()
    rows = data["panes"][ttgir["b"]]["lines"]
    assert {r[1] for r, s in zip(rows, theirs, strict=True) if "tt.load" in s} == \
        {_line_of("tl.load")}


def test_trailing_locations_split_in_linear_time():
    import time
    rng = np.random.default_rng()
    n = int(rng.integers(20, 60))
    args = ", ".join(f'%a{i}: i32 loc("a{i}"(#loc))' for i in range(n))
    sig = f"  tt.func public @k({args}) attributes {{noinline = false}} {{"
    op = f'    %x = tt.load %p : f32 loc("k"("k.py":{n}:3))'
    t0 = time.perf_counter()
    got = split_debug("ttgir", [sig, sig[:-1] + "loc(#loc9)", op])
    assert time.perf_counter() - t0 < 0.5          # a backtracking pattern took minutes
    assert got[0].code == sig and got[0].suffix == ""
    assert got[1].code == sig[:-1].rstrip() and got[1].suffix == " loc(#loc9)"
    assert got[2].code == "    %x = tt.load %p : f32" and got[2].suffix.strip().startswith("loc(")
