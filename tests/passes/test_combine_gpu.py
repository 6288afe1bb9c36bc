"""The kernels triton-combine and triton-reorder-broadcast rewrite, run on an NVIDIA GPU
(torch CUDA tensors) against numpy: the broadcast-multiply-sum as a TF32 dot (sm_80 mma,
sm_90 as the backend picks), ``acc += tl.dot`` accumulating in the (async on sm_90) wgmma,
and the splat/broadcast reordering. Skipped where no CUDA device is usable."""
from __future__ import annotations

import numpy as np
import pytest

from tests.passes.combine_kernels import (
    dot_accumulate_k,
    mul_broadcast_sum_k,
    splat_broadcast_math_k,
)

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch", reason="CUDA tensors")


def _tf32(a):
    return (a.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def test_mul_broadcast_sum_on_the_gpu():
    rng = np.random.default_rng()
    m, n, k, bm, bn, bk = 256, 192, 160, 128, 32, 32
    x = (rng.standard_normal((m, k)) * 0.1).astype(np.float32)
    y = (rng.standard_normal((k, n)) * 0.1).astype(np.float32)
    z = torch.full((m, n), float("nan"), device="cuda")
    mul_broadcast_sum_k[(m // bm, n // bn)](z, torch.from_numpy(x).cuda(),
                                            torch.from_numpy(y).cuda(), m, n, k, bm, bn, bk)
    ref = _tf32(x).astype(np.float64) @ _tf32(y).astype(np.float64)
    np.testing.assert_allclose(z.cpu().numpy(), ref, rtol=0, atol=2e-5)


def test_accumulating_dot_on_the_gpu():
    rng = np.random.default_rng()
    a = rng.standard_normal((64, 256)).astype(np.float16)
    b = rng.standard_normal((256, 64)).astype(np.float16)
    c = torch.full((64, 64), float("nan"), device="cuda")
    dot_accumulate_k[(1,)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, 256,
                           BM=64, BN=64, BK=32)
    np.testing.assert_allclose(c.cpu().numpy(), a.astype(np.float64) @ b.astype(np.float64),
                               rtol=0, atol=2e-3)


def test_splat_broadcast_math_on_the_gpu():
    rng = np.random.default_rng()
    s = rng.standard_normal(1).astype(np.float32)
    row = rng.standard_normal(64).astype(np.float32)
    out = torch.full((32, 64), float("nan"), device="cuda")
    splat_broadcast_math_k[(1,)](torch.from_numpy(s).cuda(), torch.from_numpy(row).cuda(), out,
                                 BM=32, BN=64)
    s64, row64 = s.astype(np.float64), row.astype(np.float64)
    ref = np.exp(s64[0]) + (s64[0] + np.exp(row64)[None, :] * 2)
    np.testing.assert_allclose(out.cpu().numpy(), np.broadcast_to(ref, (32, 64)), rtol=1e-5,
                               atol=1e-5)  # ex2.approx
