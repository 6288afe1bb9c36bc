"""What a tensor core does with the fp32 operands of a tf32 ``tl.dot``, on the GPU at hand.

Triton 3.6 passes raw fp32 registers to ``mma.sync ... .tf32`` and ``wgmma ... .tf32`` (no
``cvt.rna.tf32.f32``), so the hardware decides how the 13 low mantissa bits are dropped. This
script launches a dot of crafted values (each row of A holds one value, B is the unit row)
and of random tiles with Triton (when installed) and with the workbench's CUDA backend, and
prints, per compiler and instruction, the largest difference from three emulations: operands
truncated (round toward zero), rounded to nearest with ties away (``cvt.rna``) and to nearest
even. The emulation with a difference at the accumulation-order level (~1e-6) is what the
hardware does; the CPU backend and the interpreter implement it.

    python benchmarks/tf32_probe.py          # needs a CUDA GPU and torch
"""
from __future__ import annotations

import os
import sys

import numpy as np

# run as ``python benchmarks/tf32_probe.py``: make the repository root importable
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def truncate(x):
    return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def rna(x):
    u = x.view(np.uint32).astype(np.uint64)
    return ((u + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def rne(x):
    u = x.view(np.uint32).astype(np.uint64)
    return ((u + 0xFFF + ((u >> 13) & 1)) & 0xFFFFE000).astype(np.uint32).view(np.float32)


def make_kernel(jit, tl):
    @jit
    def f32_dot(a, b, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
        rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
        x = tl.load(a + rm[:, None] * K + rk[None, :])
        y = tl.load(b + rk[:, None] * N + rn[None, :])
        tl.store(c + rm[:, None] * N + rn[None, :], tl.dot(x, y))
    return f32_dot


def probe(name, kernel, torch, M, warps, rng):
    K = 64
    vals = np.array([1 + 2**-11 + 2**-12, -(1 + 2**-11 + 2**-12), 1 + 2**-10 + 2**-11,
                     -2.718281828, 3.14159265], np.float32)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, M)).astype(np.float32)
    a[:len(vals)] = 0.0
    a[:len(vals), 0] = vals
    b[0, :] = 1.0
    c = torch.zeros((M, M), device="cuda")
    kernel[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, M, M, K,
                 num_warps=warps)
    got = c.cpu().numpy().astype(np.float64)
    cells = []
    for emulate in (truncate, rna, rne):
        ref = emulate(a.copy()).astype(np.float64) @ emulate(b.copy()).astype(np.float64)
        cells.append(f"{np.abs(got - ref).max():9.2e}")
    crafted = " ".join(f"{v:.7g}" for v in got[:len(vals), 0])
    print(f"| {name:9} | {M:3} | {warps} | {' | '.join(cells)} | {crafted} |")


def main() -> None:
    import torch
    rng = np.random.default_rng(0)
    print("| compiler  |   M | warps | max diff: truncated | rna | rne | crafted values out |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    kernels = []
    try:
        import triton
        import triton.language as ttl
        kernels.append(("triton", make_kernel(triton.jit, ttl)))
    except ImportError:
        print("(Triton not installed: its rows are left out)")
    import workbench
    import workbench.language as wtl
    kernels.append(("workbench", make_kernel(workbench.jit, wtl)))
    for name, kernel in kernels:
        for M, warps in ((64, 4), (16, 1)):  # wgmma where Triton takes it, then mma.sync
            probe(name, kernel, torch, M, warps, rng)


if __name__ == "__main__":
    main()
