"""A hint on a loop-carried value inside the loop (``tl.multiple_of(ptrs, ...)`` with its
result discarded, as in Triton's tutorial 08): Triton 3.6's frontend generates the body once
with the values from before the loop to find what it carries, so the attribute lands on the
op computing the value before the loop; the workbench does the same. The hinted pointers are
then known 16-aligned runs: the loads become 16-byte vectors."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.runtime.aot import compile as wb_compile

rng = np.random.default_rng()


@wb.jit
def carried_hint(x_ptr, out_ptr, ld, n_steps, BM: tl.constexpr, BK: tl.constexpr,
                 HINT: tl.constexpr):
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    ptrs = x_ptr + rm[:, None] * ld + rk[None, :]
    acc = tl.zeros((BM, BK), dtype=tl.float32)
    for _ in range(n_steps):
        if HINT:
            tl.multiple_of(ptrs, [16, 16])
        acc += tl.load(ptrs).to(tl.float32)
        ptrs += BK
    tl.store(out_ptr + rm[:, None] * BK + rk[None, :], acc)


def _ttir(hint: bool) -> str:
    return wb_compile(carried_hint, "*fp16:16", "*fp32:16", "i32", "i32", target="cuda:80",
                      BM=32, BK=64, HINT=hint).asm["ttir"]


def test_hint_lands_on_the_value_before_the_loop():
    text = _ttir(True)
    before, loop = text.split("scf.for", 1)
    hinted = [ln for ln in before.splitlines() if "tt.divisibility = dense<16>" in ln]
    assert len(hinted) == 1 and "tt.addptr" in hinted[0]
    assert "tt.divisibility" not in loop
    assert "tt.divisibility = dense" not in _ttir(False)


def test_hinted_loads_are_wide():
    warps = int(rng.choice([4, 8]))
    ck = wb_compile(carried_hint, "*fp16:16", "*fp32:16", "i32", "i32", target="cuda:80",
                    num_warps=warps, BM=32, BK=64, HINT=True)
    assert re.search(r"sizePerThread = \[1, 8\]", ck.asm["ttgir"])
    plain = wb_compile(carried_hint, "*fp16:16", "*fp32:16", "i32", "i32", target="cuda:80",
                       num_warps=warps, BM=32, BK=64, HINT=False)
    assert not re.search(r"sizePerThread = \[1, 8\]", plain.asm["ttgir"])


@pytest.mark.parametrize("hint", [True, False])
def test_values_unchanged_on_the_interpreter(hint):
    steps, ld = int(rng.integers(1, 4)), 64 * int(rng.integers(4, 8))
    x = rng.standard_normal(32 * ld + 64 * steps).astype(np.float16)
    out = np.full((32, 64), np.nan, np.float32)
    carried_hint[(1,)](x, out, ld, steps, BM=32, BK=64, HINT=hint)
    ref = sum(x[np.arange(32)[:, None] * ld + s * 64 + np.arange(64)[None, :]].astype(np.float32)
              for s in range(steps))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
