"""The workbench beside Triton 3.6 on the fidelity suite (tests/fidelity/fidelity_kernels.py):
every kernel for cuda:80 and cuda:90 with 4 and 8 warps, compiled by both (no GPU needed).

``baseline.json`` (written by ``python benchmarks/fidelity.py --baseline
tests/fidelity/baseline.json``) lists per configuration the properties that agree today; each
must keep agreeing. Properties that differ are in the README's table with their reasons.
Triton's own MLIR parser must read our ttgir of every configuration (pipelined loops with
their async tokens included); ``test_triton_compiles_ours.py`` has Triton compile it to PTX."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("triton", reason="the fidelity suite needs Triton 3.6 (the triton extra)")

from fidelity_kernels import CASES, TARGETS, WARPS, triton_parses  # noqa: E402

from workbench.runtime.compare import PROPERTIES, compare  # noqa: E402

BASELINE = json.loads((Path(__file__).parent / "baseline.json").read_text())
#: configurations whose ldmatrix/stmatrix counts differ from Triton's today: the persistent
#: descriptor matmul on sm_80, where descriptors become pointers (Triton rewrites them in its
#: ttir, with the K offsets shared by the A and B loads, and its tie-broken load layouts
#: differ from ours; see the README).
MATRIX_DIFFERS: set = {"tma_persistent_matmul/cuda:80/4", "tma_persistent_matmul/cuda:80/8"}


def matrix_ops(ptx: str) -> dict:
    """``{"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16": n, ...}``: the ldmatrix and
    stmatrix instructions of a PTX text by their full form."""
    names = re.findall(r"\b((?:ld|st)matrix\.sync\.aligned\.[\w.]+)", ptx)
    return {n: names.count(n) for n in set(names)}
CONFIGS = [(c, t, w) for c in CASES for t in TARGETS for w in WARPS]


@pytest.mark.parametrize("case,target,warps", CONFIGS,
                         ids=[f"{c.name}-{t}-w{w}" for c, t, w in CONFIGS])
def test_agreement_does_not_regress(case, target, warps):
    c = compare(case.kernel, *case.signature, target=target, num_warps=warps,
                **case.constexprs)
    assert set(c.ours) >= {"ttgir", "ptx"} and set(c.theirs) >= {"ttgir", "ptx"}
    assert f'ttg.target = "{target}"' in c.theirs["ttgir"]
    assert f'"ttg.num-warps" = {warps}' in c.ours["ttgir"]
    triton_parses(c.ours["ttgir"])  # raises RuntimeError when Triton's parser rejects it
    must_agree = BASELINE[f"{case.name}/{target}/{warps}"]
    regressed = [d for d in c.differences if d.prop in must_agree]
    assert not regressed, "\n".join(map(str, regressed))
    if f"{case.name}/{target}/{warps}" not in MATRIX_DIFFERS:
        assert matrix_ops(c.ours["ptx"]) == matrix_ops(c.theirs["ptx"])
    # the differences and the agreement flags tell the same story
    assert {p for p in PROPERTIES if not c.agree[p]} == {d.prop for d in c.differences}


def test_baseline_covers_the_suite():
    assert set(BASELINE) == {f"{c.name}/{t}/{w}" for c, t, w in CONFIGS}
    assert len(CASES) >= 25
