"""Run one mutant (:mod:`.mutate`) on the interpreter and the CPU backend (and compile it for
cuda:90 when its error is a compile-time one) and classify what happened on each.

Outcomes, per stage:

- ``"good"``: the answer the mutant requires (a located WorkbenchError, an out-of-bounds error
  naming the program and offset, or no error where none is required);
- ``"unlocated"``: a WorkbenchError whose message does not name the mutant's file, line and
  column with a caret (or, out of bounds, the program id and offset);
- ``"misplaced"``: a located error on another line than the one broken;
- ``"wrong_error"``: a WorkbenchError of another kind than required (e.g. a compile error for
  an access that stays in bounds);
- ``"internal"``: any other exception (KeyError, TypeError, AssertionError... from inside);
- ``"missing"``: no error where one is required;
- ``"crash"``: the process died (reported by :mod:`.workers`, never by this module).
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
import tempfile
import traceback
from dataclasses import dataclass, field

import numpy as np

from ...errors import OutOfBoundsError, WorkbenchError
from ...runtime.aot import compile as wb_compile
from . import build, reference
from .check import launch_args
from .mutate import Mutant, apply_launch

OUTCOMES = ("good", "unlocated", "misplaced", "wrong_error", "internal", "missing", "crash")
#: one line per outcome, for the campaign's printed legend (the module docstring says more)
OUTCOME_MEANING = {
    "good": "the answer required: a located workbench error (or none where none is due)",
    "unlocated": "a workbench error without the mutant's file:line:col and caret",
    "misplaced": "a located error on another line than the one broken",
    "wrong_error": "a workbench error of another kind than required",
    "internal": "another exception from inside the workbench (KeyError, TypeError, ...)",
    "missing": "no error where one is required",
    "crash": "the worker process died",
}
STAGES = ("interpreter", "cpu", "cuda:90")
_DIR: str | None = None


@dataclass
class BadOutcome:
    """What one mutant did: ``stages`` maps a stage to its outcome (see the module
    docstring); ``messages`` maps a stage whose outcome is not ``"good"`` to the error's text
    (an internal exception's text ends with its innermost frames)."""
    seed: int
    kind: str
    expect: str
    stages: dict = field(default_factory=dict)
    messages: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every stage gave the required answer."""
        return all(v == "good" for v in self.stages.values())


def load(m: Mutant):
    """Write the mutant's module to a file (so errors name a real file and line) and import
    it; returns ``(kern, path)``."""
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="wb-badfuzz-")
    name = f"bad_{m.seed}_{abs(hash(m.text)) % 10**8}"
    path = os.path.join(_DIR, name + ".py")
    with open(path, "w") as f:
        f.write(m.text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod.kern, path


def classify(m: Mutant, path: str, err: BaseException | None) -> str:
    """The outcome of one stage that raised ``err`` (None: it ran to the end)."""
    if err is None:
        return "good" if m.expect in ("none", "any") else "missing"
    if not isinstance(err, WorkbenchError):
        return "internal"
    text = str(err)
    if m.expect == "none":
        return "wrong_error"
    if isinstance(err, OutOfBoundsError):
        if m.expect not in ("oob", "any"):
            return "wrong_error"
        named = err.program_id is not None and "program" in text and (
            err.offset is not None or "address" in text)
        return "good" if named and _located(text, path) else "unlocated"
    if m.expect == "oob":
        return "wrong_error"
    if not _located(text, path):
        return "unlocated"
    if m.expect == "compile" and m.line is not None and f"{path}:{m.line}:" not in text:
        return "misplaced"
    return "good"


def _located(text: str, path: str) -> bool:
    """``path:line:col:`` followed (after the source line) by a caret line."""
    return re.search(re.escape(path) + r":\d+:\d+: .*\n.*\n\s*\^+", text) is not None


def _describe(err: BaseException) -> str:
    if isinstance(err, WorkbenchError):
        return f"{type(err).__name__}: {err}"
    frames = traceback.format_exception(type(err), err, err.__traceback__)
    return "".join(frames[-6:])[-3000:]


def _run_stage(m: Mutant, kern, stage: str, data_seed: int) -> None:
    prog = m.prog
    args = reference.make_args(prog, np.random.default_rng(data_seed))
    pos, kw = launch_args(prog, args)
    pos, kw, grid = apply_launch(m, list(pos), kw, build.grid(prog))
    target = "cpu" if stage == "cpu" else stage
    compiled = wb_compile(kern, *pos, target=target, **kw)
    if stage.startswith("cuda"):
        return
    compiled[grid](*pos, **kw)


def run(m: Mutant, stages=("interpreter", "cpu"), data_seed: int | None = None) -> BadOutcome:
    """Run mutant ``m`` on ``stages`` (and cuda:90 when ``m.expect == "compile"``); never
    raises for the mutant's own failure."""
    res = BadOutcome(m.seed, m.kind, m.expect)
    try:
        kern, path = load(m)
    except Exception as e:  # noqa: BLE001 - a mutant that does not import is a fuzzer bug
        res.stages["import"] = "internal"
        res.messages["import"] = _describe(e)
        return res
    todo = list(stages) + (["cuda:90"] if m.expect == "compile" and "cuda:90" not in stages
                           else [])
    for stage in todo:
        err: BaseException | None = None
        try:
            _run_stage(m, kern, stage, m.seed if data_seed is None else data_seed)
        except Exception as e:  # noqa: BLE001 - classified below
            err = e
        res.stages[stage] = classify(m, path, err)
        if res.stages[stage] != "good":
            res.messages[stage] = _describe(err) if err is not None else "no error raised"
    sys.modules.pop(os.path.basename(path)[:-3], None)  # messages are formatted: drop the file
    os.remove(path)
    return res
