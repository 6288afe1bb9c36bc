"""The conversion lowering beside real Triton 3.6 (no GPU): the scratch bytes, the shared
stores' widths and the ldmatrix forms of the conversions of named fidelity kernels."""
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton", reason="comparing with Triton needs Triton 3.6 (the triton extra)")

sys.path.insert(0, str(Path(__file__).parents[2] / "fidelity"))
from fidelity_kernels import CASES  # noqa: E402

from workbench.runtime.compare import compare  # noqa: E402

BY_NAME = {c.name: c for c in CASES}


def _forms(ptx: str, pattern: str) -> dict:
    names = re.findall(pattern, ptx)
    return {n: names.count(n) for n in set(names)}


@pytest.mark.parametrize("name,target,warps", [
    ("trans_dot", "cuda:90", 4),    # the tile moved in 2 rounds: 8192 B of scratch
    ("matmul_f16", "cuda:90", 4),   # wgmma accumulator: st.shared.v4, ldmatrix.x4
    ("bias_strided", "cuda:80", 4),
    ("col_sum", "cuda:90", 8),      # ldmatrix.x1
])
def test_conversion_as_triton(name, target, warps):
    case = BY_NAME[name]
    c = compare(case.kernel, *case.signature, target=target, num_warps=warps,
                **case.constexprs)
    assert c.ours_shared == c.theirs_shared
    ours, theirs = c.ours["ptx"], c.theirs["ptx"]
    matrix = r"\b((?:ld|st)matrix\.sync\.aligned\.[\w.]+)"
    assert _forms(ours, matrix) == _forms(theirs, matrix)
    assert ours.count("st.shared.v4.b32") == theirs.count("st.shared.v4.b32")
    # no more barriers than Triton (one per round and direction)
    assert ours.count("bar.sync") <= theirs.count("bar.sync")
