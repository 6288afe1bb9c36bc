"""The course's exercises check themselves: a good solution passes with no advice, a
deliberately slow correct one passes with the specific advice, wrong kernels get a sentence
naming the case, the elements, the program and the line (never a traceback), and the student
release holds no solution text."""
from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pytest

from workbench.course import EXERCISES, LESSONS, check, exercise, hint, solution, stub
from workbench.course.release import leaks, release, solution_lines

NAMES = sorted(EXERCISES)


def load_kernel(tmp_path, name: str, source: str):
    """Define a kernel from source the way a notebook cell does (a file of its own)."""
    path = tmp_path / f"student_{name}.py"
    path.write_text("import workbench as wb\nimport workbench.language as tl\n\n" + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def test_every_exercise_is_complete():
    assert set(LESSONS) == {e.lesson for e in EXERCISES.values()}
    for e in EXERCISES.values():
        assert len(e.hints) == 3 and all(len(h) > 20 for h in e.hints), e.name
        assert f"def {e.name}(" in e.stub and e.slow is not e.solution
        assert f"def {e.name}(" in solution(e.name)
        assert any(int(s) % 16 for s in np.ravel(e.sizes)), e.name   # a size with a tail
    assert hint("vector_add", 3).startswith("offs = pid * BLOCK")
    with pytest.raises(ValueError, match="1 to 3"):
        hint("vector_add", 4)
    # shown as text in a notebook, not as a quoted literal with \n escapes
    nudge, lines, code = hint("clamp", 1), hint("clamp", 3), solution("clamp")
    assert nudge._repr_markdown_() == str(nudge) and "\\n" not in lines._repr_markdown_()
    assert lines._repr_markdown_().startswith("```python\n") and "\n" in lines
    assert code._repr_markdown_().startswith("```python\n@jit\ndef clamp(")
    with pytest.raises(KeyError, match="vector_add"):
        exercise("vector_addd")


@pytest.mark.parametrize("name", NAMES)
def test_slow_solution_is_right_and_gets_the_advice(name):
    e = EXERCISES[name]
    report = check(name, e.slow)
    assert report.correct, str(report)
    assert any(e.slow_advice in a for a in report.advice), report.advice
    assert "it would be slow on a GPU" in str(report)


@pytest.mark.parametrize("name", ["vector_add", "softmax"])
def test_good_solution_gets_no_advice(name):
    report = check(name, EXERCISES[name].solution)
    assert report.correct and report.advice == [] and "well done" in str(report)


@pytest.mark.parametrize("name", NAMES)
def test_stub_fails_with_words_not_a_traceback(tmp_path, name):
    report = check(name, load_kernel(tmp_path, name, stub(name)), speed=False)
    assert not report.correct
    text = str(report)
    assert "your kernel stores nothing into" in text and "replace the stub's `pass`" in text
    assert "Traceback" not in text and f"hint('{name}')" in text
    # said once, for both backends
    assert len(report.failures) == 1 and "interpreter and the CPU backend" in text


def test_a_compile_error_is_reported_once_at_the_students_line(tmp_path):
    src = stub("vector_add").replace(
        "    pass\n", "    offs = pid * BLOCK + tl.arange(0, n)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs))\n")
    report = check("vector_add", load_kernel(tmp_path, "vector_add", src))
    text = str(report)
    assert not report.correct and len(report.failures) == 1, text
    assert "does not compile" in text and "Triton's position" not in text
    line = src.splitlines().index("    offs = pid * BLOCK + tl.arange(0, n)") + 4
    assert f"student_vector_add.py:{line}:" in text
    assert "tl.arange(0, n)" in text and "^^^" in text and "tl.constexpr" in text


def test_wrong_values_name_the_program_and_line(tmp_path):
    src = stub("vector_add").replace(
        "    pass\n", "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n"
        "    x = tl.load(x_ptr + offs, mask=mask)\n    y = tl.load(y_ptr + offs, mask=mask)\n"
        "    tl.store(out_ptr + offs, x - y, mask=mask)\n")
    report = check("vector_add", load_kernel(tmp_path, "vector_add", src), seed=1)
    assert not report.correct
    f = report.failures[0]
    assert f.target == "interpreter and the cpu" and f.case.startswith("n=1000")
    assert "the first is out_ptr[0]" in f.message and "program id 0." in f.message
    assert "student_vector_add.py:13: tl.store(out_ptr + offs, x - y, mask=mask)" in f.message


def test_missing_mask_is_reported_with_the_program_id(tmp_path):
    src = stub("clamp").replace(
        "    pass\n", "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + offs)\n"
        "    tl.store(out_ptr + offs, tl.minimum(tl.maximum(x, lo), hi))\n")
    report = check("clamp", load_kernel(tmp_path, "clamp", src), speed=False)
    f = report.failures[0]
    assert not report.correct and "program id 0 accessed" in f.message
    assert "outside the array" in f.message and "mask" in f.look_at
    # both backends' bounds checks catch it; it is said once, in the interpreter's words
    assert len(report.failures) == 1 and f.target == "interpreter and the cpu", f.target


def test_wrong_signature_and_not_a_kernel():
    r = check("saxpy", EXERCISES["vector_add"].solution)
    assert not r.correct and "Keep the stub's parameters" in str(r)
    assert "expects a @jit kernel" in str(check("saxpy", lambda: None))


def test_release_has_nbgrader_cells_and_no_solutions(tmp_path):
    written = release(tmp_path / "student")
    nbs = [p for p in written if p.suffix == ".ipynb"]
    assert len(nbs) == len(LESSONS) and (tmp_path / "student" / "grade.py").exists()
    assert len(solution_lines()) > 20
    graded = 0
    for p in nbs:
        nb = json.loads(p.read_text())
        assert leaks(nb) == []
        for cell in nb["cells"]:
            meta = cell["metadata"].get("nbgrader")
            if meta and meta["grade"]:
                graded += 1
                assert "assert report.correct" in "".join(cell["source"])
    assert graded == len(EXERCISES)


def test_a_solution_in_an_answer_cell_is_a_leak():
    cell = {"cell_type": "code", "source": solution("softmax"),
            "metadata": {"course": {"exercise": "softmax", "role": "answer"}}}
    assert leaks({"cells": [cell]})
    cell["metadata"] = {}
    assert leaks({"cells": [cell]})          # a whole body anywhere is a leak too


def test_an_autotuned_kernel_is_checked_at_each_configuration(tmp_path):
    src = ("configs = [wb.Config({'BM': 32, 'BN': 32, 'BK': 32}), "
           "wb.Config({'BM': 64, 'BN': 32, 'BK': 16})]\n\n\n"
           "@wb.autotune(configs=configs, key=['M', 'N', 'K'])\n"
           + solution("matmul_tuned").replace("@jit", "@wb.jit", 1))
    tuned = load_kernel(tmp_path, "matmul_tuned", src)
    assert hasattr(tuned, "configs")
    report = check("matmul_tuned", tuned, speed=False)
    assert report.correct, str(report)
    assert "BM=64, BN=32, BK=16" in str(report)
