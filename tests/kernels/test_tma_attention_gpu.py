"""Attention over host tensor descriptors (tutorial 06's form, TMA copies with an mbarrier
array per tile, both wgmma of the loop asynchronous) on an sm_90 GPU against numpy: 4 and 8
warps, head dims 64 and 128, causal and not, 2 to 4 stages, outputs poisoned with NaN.
Skipped without a GPU."""
from __future__ import annotations

import numpy as np
import pytest

from tests.passes.tma_attention_kernels import attention_ref, tma_attention_k
from workbench.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu


def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(np.ascontiguousarray(a))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d,bm,bn,warps,stages", [
    (64, 128, 64, 4, 3), (64, 64, 32, 4, 2), (64, 128, 64, 8, 4), (128, 128, 64, 8, 3),
    (128, 64, 64, 4, 3), (128, 128, 128, 8, 2)])
def test_tma_attention_gpu(causal, d, bm, bn, warps, stages):
    from workbench.backends import cuda_driver
    rng = np.random.default_rng()
    z, n = 3, 512
    q, k, v = (rng.standard_normal((z, n, d)).astype(np.float16) for _ in range(3))
    devs = [_dev(a.reshape(z * n, d)) for a in (q, k, v)]
    out = _dev(np.full((z * n, d), np.nan, np.float16))
    descs = [TensorDescriptor(a, [z * n, d], [d, 1], [blk, d])
             for a, blk in zip([*devs, out], (bm, bn, bn, bm), strict=True)]
    scale = d ** -0.5
    tma_attention_k[(n // bm, z)](*descs, scale, n, D=d, BM=bm, BN=bn, CAUSAL=causal,
                                  num_warps=warps, num_stages=stages)
    cuda_driver.synchronize()
    got = out.to_numpy().reshape(z, n, d).astype(np.float64)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, attention_ref(q, k, v, scale, causal), atol=2e-2, rtol=2e-2)
