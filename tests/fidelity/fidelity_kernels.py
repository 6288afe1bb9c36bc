"""The fidelity suite's kernels: small kernels written for the purpose, each exercising one
decision Triton makes (layouts of loads, broadcasts, reductions, scans, shape ops, dots,
pipelines). ``CASES`` gives, per kernel, the signature entries and constexprs for
``workbench.compare``, and a numpy check run on the interpreter (the reference semantics)."""
from __future__ import annotations

from dataclasses import dataclass, field

import workbench as wb
import workbench.language as tl


@dataclass(frozen=True)
class Case:
    """One kernel of the suite: ``signature`` (Triton signature strings, one per runtime
    parameter) and ``constexprs`` for both compilers."""

    name: str
    kernel: object
    signature: tuple
    constexprs: dict = field(default_factory=dict)


F32, F16, I32 = "*fp32:16", "*fp16:16", "i32:16"


@wb.jit
def add_k(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
             mask=m)


@wb.jit
def silu_f16_k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    tl.store(out_ptr + offs, (x * tl.sigmoid(x)).to(tl.float16), mask=offs < n)


@wb.jit
def bias_cols_k(x_ptr, b_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    b = tl.load(b_ptr + rn)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], x + b[None, :])


@wb.jit
def scale_rows_k(x_ptr, s_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    s = tl.load(s_ptr + rm)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], x * s[:, None])


@wb.jit
def row_sum_k(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(out_ptr + rm, tl.sum(x, axis=1))


@wb.jit
def col_sum_k(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(out_ptr + rn, tl.sum(x, axis=0))


@wb.jit
def softmax_k(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], e / tl.sum(e, axis=1)[:, None])


@wb.jit
def layernorm_k(x_ptr, w_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    mean = tl.sum(x, axis=1) / BN
    d = x - mean[:, None]
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / BN + 1e-5)
    w = tl.load(w_ptr + rn)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], d * rstd[:, None] * w[None, :])


@wb.jit
def argmax_rows_k(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(out_ptr + rm, tl.argmax(x, axis=1))


@wb.jit
def cumsum_rows_k(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], tl.cumsum(x, axis=1))


@wb.jit
def cumsum_cols_k(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], tl.cumsum(x, axis=0))


@wb.jit
def transpose_k(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(out_ptr + rn[:, None] * M + rm[None, :], tl.trans(x))


@wb.jit
def join_k(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    j = tl.join(tl.load(a_ptr + offs), tl.load(b_ptr + offs))
    tl.store(out_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :], j)


@wb.jit
def split_k(x_ptr, a_ptr, b_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :])
    a, b = tl.split(x)
    tl.store(a_ptr + offs, a)
    tl.store(b_ptr + offs, b)


@wb.jit
def interleave_k(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.interleave(tl.load(a_ptr + offs), tl.load(b_ptr + offs))
    tl.store(out_ptr + tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK), y)


@wb.jit
def reshape_sum_k(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    offs = tl.program_id(0) * BM * BN + tl.arange(0, BM * BN)
    x = tl.reshape(tl.load(x_ptr + offs), BM, BN)
    tl.store(out_ptr + tl.program_id(0) * BM + tl.arange(0, BM), tl.sum(x, axis=1))


@wb.jit
def gather_rows_k(x_ptr, idx_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rows = tl.load(idx_ptr + rm)
    x = tl.load(x_ptr + rows[:, None] * N + rn[None, :])
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], x)


@wb.jit
def atomic_add_k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.atomic_add(out_ptr + offs % 64, x, mask=offs < n)


@wb.jit
def atomic_max_rows_k(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.atomic_max(out_ptr + rm, tl.max(x, axis=1))


@wb.jit
def tril_k(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], tl.where(rm[:, None] >= rn[None, :], x, 0.0))


@wb.jit
def matmul_k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
             BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@wb.jit
def matmul_bias_relu_k(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, BM: tl.constexpr,
                       BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    acc = tl.maximum(acc + tl.load(bias_ptr + rn)[None, :], 0.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@wb.jit
def dot_single_k(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


@wb.jit
def attention_k(q_ptr, k_ptr, v_ptr, o_ptr, L, BM: tl.constexpr, BN: tl.constexpr,
                D: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for start in range(0, L, BN):
        rn = start + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[None, :] * D + rd[:, None])
        s = tl.dot(q, k)
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + rn[:, None] * D + rd[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], acc / l_i[:, None])


@wb.jit
def block_ptr_copy_k(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    dst = tl.make_block_ptr(out_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN),
                            (1, 0))
    tl.store(dst, tl.load(src) * 2.0)


@wb.jit
def block_ptr_matmul_k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                       BK: tl.constexpr):
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (tl.program_id(0) * BM, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, tl.program_id(1) * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(a_bp), tl.load(b_bp))
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, tl.program_id(1) * BN),
                             (BM, BN), (1, 0))
    tl.store(c_bp, acc)


@wb.jit
def copy_strided_k(x_ptr, out_ptr, sxm, sxn, som, son, BM: tl.constexpr, BN: tl.constexpr):
    # every stride a run-time value: no contiguity is known in either dim
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, x * 2.0)


@wb.jit
def bias_strided_k(x_ptr, b_ptr, out_ptr, sxm, sxn, sb, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn)
    b = tl.load(b_ptr + rn * sb)
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], x + b[None, :])


@wb.jit
def trans_dot_k(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BK: tl.constexpr):
    # tl.trans of a dot result: the #mma layout transposed (a #ttg.linear layout), no data moved
    r = tl.arange(0, BM)
    k = tl.arange(0, BK)
    a = tl.load(a_ptr + r[:, None] * BK + k[None, :])
    b = tl.load(b_ptr + k[:, None] * BM + r[None, :])
    tl.store(c_ptr + r[:, None] * BM + r[None, :], tl.trans(tl.dot(a, b)))


@wb.jit
def matmul_store_t_k(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr):
    # c stored column-major: on sm_90 Triton stores the accumulator with stmatrix.x4.trans
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] + rn[None, :] * M, acc.to(tl.float16))


@wb.jit
def tma_persistent_matmul_k(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr,
                            BN: tl.constexpr, BK: tl.constexpr, NUM_SMS: tl.constexpr):
    # host tensor descriptors; the output tile's TMA store sits in the loop over tiles: Triton
    # allocates its buffer once, before that loop, and waits before the next write of it
    tiles_n = tl.cdiv(N, BN)
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, NUM_SMS):
        om = (tile // tiles_n) * BM
        on = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([om, k]), b_desc.load([on, k]).T, acc)
        c_desc.store([om, on], acc.to(tl.float16))


@wb.jit
def tma_scale_k(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # descriptors made on the device (tl.make_tensor_descriptor): global scratch, tensormap
    xd = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    od = tl.make_tensor_descriptor(out_ptr, [M, N], [N, 1], [BM, BN])
    om, on = tl.program_id(0) * BM, tl.program_id(1) * BN
    od.store([om, on], xd.load([om, on]) * 2.0)


@wb.jit
def row_max_stream_k(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """Persistent programs over the rows of an (n_rows, BLOCK) row-major tile, the loop
    staged by ``tl.range(num_stages=3)``: Triton pipelines the row load although no dot reads
    it, through a ``#ttg.swizzled_shared<{vec = 1, ...}>`` buffer, its ``-inf`` padding
    restored by a select after the copy (cp.async only zero-fills)."""
    cols = tl.arange(0, BLOCK)
    for r in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=3):
        x = tl.load(x_ptr + r * BLOCK + cols, mask=cols < n_cols, other=-float("inf"))
        tl.store(out_ptr + r, tl.max(x, axis=0))


@wb.jit
def matmul_ieee_k(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    """One (BM, BN) tile of C = A @ B, A (BM, K) and B (K, BN) row-major fp32, an ``ieee``
    (FMA) dot: Triton pipelines its operand loads through swizzled shared buffers read back
    in the dot-operand layouts."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@wb.jit
def accumulate_if_k(x_ptr, acc_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    """acc = 2 x (+ acc when the flag is set): the ``scf.if`` result takes the loads'
    coalesced layout from the branch that yields it, the other branch converts."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(x_ptr + offs, mask=m, other=0.0) * 2.0
    if tl.load(flag_ptr) != 0:
        y += tl.load(acc_ptr + offs, mask=m, other=0.0)
    tl.store(acc_ptr + offs, y, mask=m)


@wb.jit
def scores_t_k(q_ptr, k_ptr, o_ptr, N, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """Q K^T summed over key blocks, K loaded row-major and transposed for the dot: on sm_80
    Triton stages the K tile untransposed (an A-like swizzled buffer), reads it back in the
    transposed operand layout (``#ttg.linear``) and transposes in registers."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    k_ptrs = k_ptr + rn[:, None] * D + rd[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, N, BN):
        acc += tl.dot(q, tl.trans(tl.load(k_ptrs)))
        k_ptrs += BN * D
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], acc)


@wb.jit
def two_dots_k(a_ptr, b_ptr, x_ptr, o_ptr, N, BM: tl.constexpr, BN: tl.constexpr,
               D: tl.constexpr):
    """One loaded tile X read by two dots, A @ X and B @ X^T, each accumulated in the loop:
    on sm_90 both wgmma read X's one pipelined buffer (the second through memdesc_trans), as
    Triton points both copies of the tile at the same slot; on sm_80 the two dots are
    connected through the loop's yield, so both take Triton's chained-dot warps (all along
    M)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    a = tl.load(a_ptr + rm[:, None] * D + rd[None, :])
    b = tl.load(b_ptr + rm[:, None] * BN + rn[None, :])
    x_ptrs = x_ptr + rd[:, None] * BN + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    acc2 = tl.zeros((BM, D), dtype=tl.float32)
    for _ in range(0, N, BN):
        x = tl.load(x_ptrs)
        acc += tl.dot(a, x)
        acc2 += tl.dot(b, tl.trans(x))
        x_ptrs += D * BN
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], acc)
    tl.store(o_ptr + BM * BN + rm[:, None] * D + rd[None, :], acc2)


@wb.jit
def carried_hint_k(x_ptr, out_ptr, ld, n_steps, BM: tl.constexpr, BK: tl.constexpr):
    """Rows of a strided fp16 matrix summed block by block, the loop-carried pointers hinted
    inside the loop with the result discarded: Triton's frontend puts the hint on the
    pointers computed before the loop (its first pass over the body), so the loads are
    16-byte vectors."""
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    ptrs = x_ptr + rm[:, None] * ld + rk[None, :]
    acc = tl.zeros((BM, BK), dtype=tl.float16)
    for _ in range(n_steps):
        tl.multiple_of(ptrs, [16, 16])
        acc += tl.load(ptrs)
        ptrs += BK
    tl.store(out_ptr + rm[:, None] * BK + rk[None, :], acc)


_2D = {"BM": 32, "BN": 64}
_MM = {"BM": 64, "BN": 64, "BK": 32}

CASES = [
    Case("add", add_k, (F32, F32, F32, I32), {"BLOCK": 1024}),
    Case("silu_f16", silu_f16_k, (F16, F16, I32), {"BLOCK": 1024}),
    Case("bias_cols", bias_cols_k, (F32, F32, F32, I32), _2D),
    Case("scale_rows", scale_rows_k, (F32, F32, F32, I32), _2D),
    Case("row_sum", row_sum_k, (F32, F32, I32), _2D),
    Case("col_sum", col_sum_k, (F32, F32, I32), _2D),
    Case("softmax", softmax_k, (F32, F32, I32), _2D),
    Case("layernorm", layernorm_k, (F32, F32, F32, I32), _2D),
    Case("argmax_rows", argmax_rows_k, (F32, "*i32:16", I32), _2D),
    Case("cumsum_rows", cumsum_rows_k, (F32, F32, I32), _2D),
    Case("cumsum_cols", cumsum_cols_k, (F32, F32, I32), _2D),
    Case("transpose", transpose_k, (F32, F32, I32, I32), {"BM": 64, "BN": 64}),
    Case("join", join_k, (F32, F32, F32), {"BLOCK": 256}),
    Case("split", split_k, (F32, F32, F32), {"BLOCK": 256}),
    Case("interleave", interleave_k, (F32, F32, F32), {"BLOCK": 256}),
    Case("reshape_sum", reshape_sum_k, (F32, F32), {"BM": 16, "BN": 64}),
    Case("gather_rows", gather_rows_k, (F32, "*i32:16", F32, I32), _2D),
    Case("atomic_add", atomic_add_k, (F32, F32, I32), {"BLOCK": 512}),
    Case("atomic_max_rows", atomic_max_rows_k, (F32, F32, I32), _2D),
    Case("tril", tril_k, (F32, F32, I32), {"BM": 64, "BN": 64}),
    Case("matmul_f16", matmul_k, (F16, F16, F16, I32, I32, I32), _MM),
    Case("matmul_bias_relu", matmul_bias_relu_k, (F16, F16, F32, F32, I32, I32, I32), _MM),
    Case("dot_single_f32", dot_single_k, (F32, F32, F32), {"BM": 32, "BN": 32, "BK": 32}),
    Case("attention", attention_k, (F16, F16, F16, F32, I32), {"BM": 64, "BN": 32, "D": 64}),
    Case("block_ptr_copy", block_ptr_copy_k, (F32, F32, I32, I32), _2D),
    Case("block_ptr_matmul", block_ptr_matmul_k, (F16, F16, F32, I32, I32, I32), _MM),
    Case("copy_strided", copy_strided_k, (F32, F32, "i32", "i32", "i32", "i32"), _2D),
    Case("bias_strided", bias_strided_k, (F32, F32, F32, "i32", "i32", "i32"), _2D),
    Case("trans_dot", trans_dot_k, (F16, F16, F32), {"BM": 64, "BK": 32}),
    Case("matmul_store_t", matmul_store_t_k, (F16, F16, F16, I32, I32, I32), _MM),
    Case("tma_persistent_matmul", tma_persistent_matmul_k,
         ("tensordesc<fp16[64, 64]>",) * 3 + (I32, I32, I32),
         {"BM": 64, "BN": 64, "BK": 64, "NUM_SMS": 4}),
    Case("tma_scale", tma_scale_k, (F32, F32, I32, I32), _2D),
    Case("row_max_stream", row_max_stream_k, (F32, F32, "i32", "i32"), {"BLOCK": 512}),
    Case("matmul_ieee", matmul_ieee_k, (F32, F32, F32, I32), {"BM": 32, "BN": 32, "BK": 16}),
    Case("accumulate_if", accumulate_if_k, (F32, F32, "*i32:16", I32), {"BLOCK": 1024}),
    Case("scores_t", scores_t_k, (F16, F16, F32, I32), {"BM": 64, "BN": 64, "D": 64}),
    Case("two_dots", two_dots_k, (F16, F16, F16, F32, I32), {"BM": 64, "BN": 64, "D": 64}),
    Case("carried_hint", carried_hint_k, (F16, F16, "i32", "i32"), {"BM": 32, "BK": 64}),
]

TARGETS = ("cuda:80", "cuda:90")
WARPS = (4, 8)


def triton_parses(text: str) -> None:
    """Parse ``text`` (a printed ttgir module) with Triton's own MLIR parser, in a context
    with Triton's dialects loaded (``triton._C.libtriton.ir``; what ``triton.compile`` does
    with a ``.ttgir`` file). Raises RuntimeError (with MLIR's message on stderr) when Triton
    rejects it; ImportError without Triton."""
    import tempfile
    from pathlib import Path

    from triton._C.libtriton import ir as tir
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "kernel.ttgir"
        path.write_text(text)
        ctx = tir.context()
        tir.load_dialects(ctx)
        tir.parse_mlir_module(str(path), ctx)
