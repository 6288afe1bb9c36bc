"""Attention's Q (loaded once, before the K/V loop) is staged in shared memory before the loop
and read into dot-operand registers in every iteration, as in Triton 3.6's ttgir: its buffer
lives through the loop (not reused by the K/V slots), and the pipelined kernel still computes
softmax(Q K^T) V."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tests.passes.pipeline_kernels import pipelined_ttgir, run_ttgir
from workbench.ir.printer import print_module

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fidelity"))
from fidelity_kernels import attention_k as attn  # noqa: E402


@pytest.mark.parametrize("num_warps", [4, 8])
def test_q_is_read_from_shared_memory_in_every_iteration(num_warps):
    module = pipelined_ttgir(attn, ["*fp16:16"] * 3 + ["*fp32:16", "i32:16"], stages=3,
                             num_warps=num_warps, target="cuda:80", BM=32, BN=16, D=32)
    text = print_module(module, locations=False)
    before, body = text[:text.index("scf.for")], text[text.index("scf.for"):]
    assert "ttg.local_alloc %q" in before and "ttg.local_load" not in before
    assert "ttg.shared = 6144" in text  # Q 2048 B + K and V 2 slots x 1024 B each
    q_buf = before.split("ttg.local_alloc %q")[0].rsplit("%", 1)[1].split(" ")[0]
    assert f"ttg.local_load %{q_buf} :" in body
    rng = np.random.default_rng()
    L, m, d = 48, 64, 32
    q, k, v = (rng.standard_normal((n, d)).astype(np.float16) for n in (m, L, L))
    o = np.full((m, d), np.nan, np.float32)
    run_ttgir(module, (2, 1, 1), [q, k, v, o, L])
    s = q.astype(np.float64) @ k.astype(np.float64).T
    p = np.exp(s - s.max(axis=1, keepdims=True))
    want = (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(o, want, atol=2e-2, rtol=2e-2)
