"""The compute micro-kernels of the ceilings: the FMA kernel keeps its chains in registers and
is vectorised to the host's widest vectors (host asm), and the CPU's tl.dot roof exists."""
from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

mk = importlib.import_module("workbench.testing.microkernels")


def _fma_compiled(dtype=np.float32):
    n = 256 * 2
    x, out = np.full(n, 0.5, dtype), np.zeros(n, dtype)
    return mk.fma_kernel[(2,)](x, out, 0.5, 0.25, 3, BLOCK=256, CHAIN=mk.CHAIN)


def test_fma_asm_counts_register_classes():
    asm = {"asm": "\tvfmadd213ps\t%zmm1, %zmm2, %zmm0\n\tvfmadd231pd %ymm1, %ymm2, %ymm3\n"
                  "\tvfmadd132ss %xmm1, %xmm2, %xmm0\n\tvfnmadd231ps (%rax), %xmm1, %xmm2\n"
                  "\tvmovups %zmm0, (%rax)\n"}
    fake = type("K", (), {"asm": asm})()
    assert mk.fma_asm(fake) == {"zmm": 1, "ymm": 1, "xmm": 1, "scalar": 1}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_kernel_vectorised_at_host_width(dtype):
    want = mk.widest_vector()
    if not want:
        pytest.skip("not an x86 host: no vfmadd to count")
    counts = mk.fma_asm(_fma_compiled(dtype))
    assert counts[want] >= 4 * mk.CHAIN, counts       # packed FMAs at the host's width
    assert counts["scalar"] == 0, counts


def test_fma_chains_stay_in_registers():
    """The FMA roof measures FMAs, not the L1 cache: the hot code has several FMAs per vector
    load or store (the kernel before had one load and one store per FMA)."""
    if not mk.widest_vector():
        pytest.skip("not an x86 host")
    asm = _fma_compiled().asm["asm"]
    fmas = sum(mk.fma_asm(_fma_compiled()).values())
    moves = len(re.findall(r"^\s*vmov(?:ups|aps|dqu\w*)\s+[^\n]*\(", asm, re.M))
    assert fmas >= 2 * moves, (fmas, moves)            # (it was 16 FMAs for 64 moves)


def test_cpu_dot_probe_counts_dot_flops():
    probe = mk.dot_probe("cpu", "fp32", target_ms=0.5)
    probe.run(1)
    r = probe.result()
    assert r["tile"] == (128, 128, 128) and r["iters"] >= 2
    assert r["flops"] == 2 * 128 ** 3 * r["iters"] * r["programs"]
    assert r["flops_per_s"] > 1e8
