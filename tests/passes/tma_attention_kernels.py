"""Flash attention forward over host tensor descriptors, in tutorial 06's form (K read
transposed through ``.T`` of its tile, ``acc * alpha`` then ``tl.dot(p, v, acc)``, a causal
variant that visits the blocks left of the diagonal unmasked and the diagonal block masked),
shared by the compile-only and interpreter tests (``test_tma_attention.py``) and the H200
runs (``tests/kernels/test_tma_attention_gpu.py``). Q, K, V and O are fp16 ``(Z * N_CTX, D)``
row-major views of ``(Z, N_CTX, D)``; BM and BN divide N_CTX, BN divides BM."""
from __future__ import annotations

import numpy as np

import workbench as wb
import workbench.language as tl


@wb.jit
def tma_attention_k(q_desc, k_desc, v_desc, o_desc, sm_scale, N_CTX, D: tl.constexpr,
                    BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    off = tl.program_id(1) * N_CTX
    q = q_desc.load([off + start_m * BM, 0])
    m_i = tl.zeros((BM,), dtype=tl.float32) - float("inf")
    l_i = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = start_m * BM if CAUSAL else N_CTX
    for start_n in range(0, hi, BN):
        k = k_desc.load([off + start_n, 0]).T
        qk = tl.dot(q, k) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([off + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    if CAUSAL:
        rm = start_m * BM + tl.arange(0, BM)
        for start_n in range(start_m * BM, (start_m + 1) * BM, BN):
            k = k_desc.load([off + start_n, 0]).T
            keep = rm[:, None] >= (start_n + tl.arange(0, BN))[None, :]
            qk = tl.dot(q, k) * qk_scale + tl.where(keep, 0.0, -1.0e6)
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            p = tl.math.exp2(qk - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            v = v_desc.load([off + start_n, 0])
            acc = tl.dot(p.to(tl.float16), v, acc)
            m_i = m_new
    o_desc.store([off + start_m * BM, 0], (acc / l_i[:, None]).to(tl.float16))


def attention_ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float,
                  causal: bool) -> np.ndarray:
    """softmax(Q K^T * scale) V in float64, per leading index; (Z, N, D) arrays."""
    s = np.einsum("zmd,znd->zmn", q.astype(np.float64), k.astype(np.float64)) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("zmn,znd->zmd", p / p.sum(-1, keepdims=True), v.astype(np.float64))
