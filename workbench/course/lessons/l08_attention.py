"""Lesson 8, flash attention: the online softmax (a running max and sum, rescaled as the row
streams by), then attention O = softmax(Q K^T * scale) V for one head with the scores never
written to memory (Dao et al., "FlashAttention: Fast and Memory-Efficient Exact Attention with
IO-Awareness", NeurIPS 2022), then its causal form.

Slow solutions: the softmax that reads its row three times (max, sum, write); attention whose
Q K^T is a broadcast product summed over D (no tensor cores); causal attention that visits
every key block and masks, where the blocks right of the diagonal can be skipped (twice the
FLOPs).
"""
from __future__ import annotations

import numpy as np

from ... import language as tl
from ...runtime.jit import jit
from ..exercise import Case, Exercise

CHUNK = 128
ROW_SIZES = ((3, 100), (8, 1000), (64, 4096))
BM = BN = 32
D = 32
SEQ = (40, 100, 512)


@jit
def online_softmax(x_ptr, out_ptr, N, stride, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, CHUNK)
    m = -float("inf")
    s = 0.0
    for start in range(0, N, CHUNK):
        x = tl.load(x_ptr + row * stride + start + cols, mask=start + cols < N,
                    other=-float("inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, N, CHUNK):
        mask = start + cols < N
        x = tl.load(x_ptr + row * stride + start + cols, mask=mask, other=-float("inf"))
        tl.store(out_ptr + row * stride + start + cols, tl.exp(x - m) / s, mask=mask)


@jit
def online_softmax_three_passes(x_ptr, out_ptr, N, stride, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, CHUNK)
    m = -float("inf")
    for start in range(0, N, CHUNK):
        x = tl.load(x_ptr + row * stride + start + cols, mask=start + cols < N,
                    other=-float("inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
    s = 0.0
    for start in range(0, N, CHUNK):
        x = tl.load(x_ptr + row * stride + start + cols, mask=start + cols < N,
                    other=-float("inf"))
        s += tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, N, CHUNK):
        mask = start + cols < N
        x = tl.load(x_ptr + row * stride + start + cols, mask=mask, other=-float("inf"))
        tl.store(out_ptr + row * stride + start + cols, tl.exp(x - m) / s, mask=mask)


@jit
def attention(q_ptr, k_ptr, v_ptr, o_ptr, S, scale, D: tl.constexpr, BM: tl.constexpr,
              BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + d[None, :], mask=rm[:, None] < S, other=0.0)
    m = tl.full((BM,), -float("inf"), tl.float32)
    s = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, S, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[:, None] * D + d[None, :], mask=rn[:, None] < S, other=0.0)
        v = tl.load(v_ptr + rn[:, None] * D + d[None, :], mask=rn[:, None] < S, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * scale
        qk = tl.where(rn[None, :] < S, qk, -float("inf"))
        m_new = tl.maximum(m, tl.max(qk, axis=1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m - m_new)
        s = s * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    tl.store(o_ptr + rm[:, None] * D + d[None, :], acc / s[:, None], mask=rm[:, None] < S)


@jit
def attention_broadcast(q_ptr, k_ptr, v_ptr, o_ptr, S, scale, D: tl.constexpr,
                        BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + d[None, :], mask=rm[:, None] < S, other=0.0)
    m = tl.full((BM,), -float("inf"), tl.float32)
    s = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, S, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[:, None] * D + d[None, :], mask=rn[:, None] < S, other=0.0)
        v = tl.load(v_ptr + rn[:, None] * D + d[None, :], mask=rn[:, None] < S, other=0.0)
        qk = tl.sum(q[:, None, :].to(tl.float32) * k[None, :, :].to(tl.float32), axis=2)
        qk = tl.where(rn[None, :] < S, qk * scale, -float("inf"))
        m_new = tl.maximum(m, tl.max(qk, axis=1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m - m_new)
        s = s * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :].to(tl.float32),
                                            axis=1)
        m = m_new
    tl.store(o_ptr + rm[:, None] * D + d[None, :], acc / s[:, None], mask=rm[:, None] < S)


@jit
def causal_attention(q_ptr, k_ptr, v_ptr, o_ptr, S, scale, D: tl.constexpr, BM: tl.constexpr,
                     BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + d[None, :], mask=rm[:, None] < S, other=0.0)
    m = tl.full((BM,), -float("inf"), tl.float32)
    s = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, (tl.program_id(0) + 1) * BM, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[:, None] * D + d[None, :], mask=rn[:, None] < S, other=0.0)
        v = tl.load(v_ptr + rn[:, None] * D + d[None, :], mask=rn[:, None] < S, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * scale
        qk = tl.where((rn[None, :] <= rm[:, None]) & (rn[None, :] < S), qk, -float("inf"))
        m_new = tl.maximum(m, tl.max(qk, axis=1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m - m_new)
        s = s * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    tl.store(o_ptr + rm[:, None] * D + d[None, :], acc / s[:, None], mask=rm[:, None] < S)


@jit
def causal_attention_all_blocks(q_ptr, k_ptr, v_ptr, o_ptr, S, scale, D: tl.constexpr,
                                BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + d[None, :], mask=rm[:, None] < S, other=0.0)
    m = tl.full((BM,), -float("inf"), tl.float32)
    s = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, S, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[:, None] * D + d[None, :], mask=rn[:, None] < S, other=0.0)
        v = tl.load(v_ptr + rn[:, None] * D + d[None, :], mask=rn[:, None] < S, other=0.0)
        qk = tl.dot(q, tl.trans(k)) * scale
        qk = tl.where((rn[None, :] <= rm[:, None]) & (rn[None, :] < S), qk, -float("inf"))
        m_new = tl.maximum(m, tl.max(qk, axis=1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m - m_new)
        s = s * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    tl.store(o_ptr + rm[:, None] * D + d[None, :], acc / s[:, None], mask=rm[:, None] < S)


def _row_of(n: int):
    def program(i: int) -> tuple:
        return (i // n,)
    return program


def _make_online(rng, size) -> Case:
    m, n = size
    x = (rng.standard_normal((m, n)) * 4).astype(np.float32)
    out = np.full((m, n), np.nan, np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    tail = n % CHUNK
    label = f"{m} rows of N={n}" + (f" (the last chunk holds {tail} of {CHUNK})" if tail else "")
    return Case(label, (x, out, n, n), {"CHUNK": CHUNK}, (m,),
                {1: e / e.sum(axis=1, keepdims=True)}, rtol=1e-4, atol=1e-7,
                program_of=_row_of(n))


def _reference_attention(q, k, v, scale, causal):
    s = (q.astype(np.float64) @ k.astype(np.float64).T) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True) @ v.astype(np.float64)).astype(np.float32)


def _make_attention(causal: bool):
    def make(rng, seq) -> Case:
        q, k, v = (rng.standard_normal((seq, D)).astype(np.float16) for _ in range(3))
        o = np.full((seq, D), np.nan, np.float32)
        scale = float(1.0 / np.sqrt(D))        # a Python float: an fp32 scalar argument
        tail = seq % BM
        label = f"S={seq}, D={D}" + (f" (the last block holds {tail} of {BM} rows)"
                                     if tail else "")
        return Case(label, (q, k, v, o, seq, scale), {"D": D, "BM": BM, "BN": BN},
                    (-(-seq // BM),), {3: _reference_attention(q, k, v, scale, causal)},
                    rtol=2e-2, atol=2e-2, program_of=_row_block(D))
    return make


def _row_block(d: int):
    def program(i: int) -> tuple:
        return (i // d // BM,)
    return program


ATT_PARAMS = ("q_ptr", "k_ptr", "v_ptr", "o_ptr", "S", "scale", "D", "BM", "BN")
ATT_STUB = '''@wb.jit
def {name}(q_ptr, k_ptr, v_ptr, o_ptr, S, scale, D: tl.constexpr, BM: tl.constexpr,
           BN: tl.constexpr):
    # TODO: {todo}
    pass
'''
ONLINE = ("m_new = tl.maximum(m, tl.max(qk, axis=1))\np = tl.exp(qk - m_new[:, None])\n"
          "alpha = tl.exp(m - m_new)\ns = s * alpha + tl.sum(p, axis=1)\n"
          "acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)\nm = m_new")

EXERCISES = (
    Exercise(
        name="online_softmax", lesson=8, title="The online softmax",
        task="Softmax of each row of an M x N x, for rows too long for one tile: walk the row "
             "in CHUNKs, keeping a running max and a running sum of exp(x - max) rescaled "
             "whenever the max grows, then write exp(x - max) / sum in a second pass.",
        params=("x_ptr", "out_ptr", "N", "stride", "CHUNK"),
        stub='''@wb.jit
def online_softmax(x_ptr, out_ptr, N, stride, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    # TODO: pass 1: running max m and sum s over the chunks; pass 2: write exp(x - m) / s
    pass
''',
        solution=online_softmax, slow=online_softmax_three_passes,
        slow_advice="it reads the same data more than once",
        make=_make_online, sizes=ROW_SIZES,
        hints=("One pass can find both the max and the sum, if the sum is corrected whenever "
               "the max changes.",
               "With the old max m and a new max m_new >= m, every term exp(x - m) already in "
               "the sum becomes exp(x - m_new) = exp(x - m) * exp(m - m_new): multiply the sum "
               "by exp(m - m_new), then add the new chunk's terms.",
               "m_new = tl.maximum(m, tl.max(x, axis=0))\n"
               "s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)\nm = m_new")),
    Exercise(
        name="attention", lesson=8, title="Flash attention, one head",
        task="o = softmax(q @ k.T * scale) @ v for q, k, v of shape (S, D) in fp16 (o in "
             "fp32); program i computes BM rows of o, walking k and v in blocks of BN rows "
             "with the online softmax, never storing the S x S scores.",
        params=ATT_PARAMS,
        stub=ATT_STUB.format(name="attention", todo="load the BM x D tile of q; for each BN "
                             "block of k and v: scores with tl.dot, the online softmax "
                             "update of m, s and acc; store acc / s"),
        solution=attention, slow=attention_broadcast,
        slow_advice="tl.dot on whole tiles runs on the tensor cores",
        make=_make_attention(False), sizes=SEQ,
        hints=("It is the online softmax of lesson 8's first exercise, one row per query, "
               "with the value rows summed in as you go.",
               "Per block: qk = tl.dot(q, tl.trans(k)) * scale (masked to -inf past S); the "
               "running max m and sum s are per row (shape (BM,)); the accumulator acc (BM, "
               "D) is rescaled by alpha = exp(m - m_new) like the sum, then gets "
               "tl.dot(p, v).",
               "qk = tl.dot(q, tl.trans(k)) * scale\n"
               "qk = tl.where(rn[None, :] < S, qk, -float('inf'))\n" + ONLINE)),
    Exercise(
        name="causal_attention", lesson=8, title="Causal flash attention",
        task="As attention, but query row i attends only to key rows j <= i.",
        params=ATT_PARAMS,
        stub=ATT_STUB.format(name="causal_attention", todo="as attention, masking j > i; "
                             "which key blocks can a program skip entirely?"),
        solution=causal_attention, slow=causal_attention_all_blocks,
        slow_advice="it computes results that are then thrown away",
        make=_make_attention(True), sizes=SEQ,
        hints=("The mask is (key index <= query index).",
               "Program pid's queries are rows pid*BM ... pid*BM + BM-1: no key block starting "
               "at or after (pid + 1) * BM has any key they may see, so the loop can stop "
               "there and do half the work on average.",
               "for start in range(0, (tl.program_id(0) + 1) * BM, BN):\n    ...\n"
               "    qk = tl.where((rn[None, :] <= rm[:, None]) & (rn[None, :] < S), qk, "
               "-float('inf'))")),
)
