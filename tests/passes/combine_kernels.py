"""Kernels whose ttir the triton-combine and triton-reorder-broadcast passes change, written
as in Triton (shared by the ttir comparison with Triton and the CPU/interpreter runs)."""
from __future__ import annotations

import workbench as wb
import workbench.language as tl


@wb.jit
def mul_broadcast_sum_k(Z, X, Y, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Triton's ``test_dot_mulbroadcasted`` kernel: ``sum(x[:, :, None] * y[None], 1)``."""
    pidn = tl.program_id(1)
    pidm = tl.program_id(0)
    offm = tl.arange(0, BM)[:, None]
    offn = tl.arange(0, BN)[None, :]
    offak = tl.arange(0, BK)[None, :]
    offbk = tl.arange(0, BK)[:, None]
    acc = tl.full((BM, BN), 0.0, tl.float32)
    for ridx5 in range(0, K // BK):
        x = tl.load(X + ((pidm * K * BM) + (offm * K) + (ridx5 * BK) + offak))
        y = tl.load(Y + ((pidn * BN) + (offbk * N) + (ridx5 * N * BK) + offn))
        x = tl.expand_dims(x, axis=2)
        y = tl.expand_dims(y, axis=0)
        t = tl.sum(x * y, axis=1)
        acc = t + acc
    tl.store(Z + ((pidm * BM * N) + (pidn * BN) + (offm * N) + offn), acc)


@wb.jit
def dot_accumulate_k(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
                     BK: tl.constexpr):
    """``acc += tl.dot(a, b)`` over K (row-major A: BM x K, B: K x BN)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@wb.jit
def where_masked_load_k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """``tl.where(c, tl.load(p, mask=c), 7.0)`` with a scalar condition."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    c = pid < n
    tl.store(out_ptr + offs, tl.where(c, tl.load(x_ptr + offs, mask=c), 7.0))


@wb.jit
def addptr_chain_k(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """Pointers advanced twice: by 64-bit offsets, and by two 32-bit constants."""
    offs = tl.arange(0, BLOCK).to(tl.int64)
    q = (x_ptr + offs) + offs * 2
    s = (out_ptr + 3) + 4
    tl.store(s + tl.arange(0, BLOCK), tl.load(q + 1))


@wb.jit
def splat_broadcast_math_k(x_ptr, r_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """exp of a splat scalar and of a broadcast row, a broadcast column added."""
    s = tl.load(x_ptr)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    row = tl.load(r_ptr + rn)
    v = tl.exp(tl.broadcast_to(s, (BM, BN)))
    w = tl.exp(tl.broadcast_to(row[None, :], (BM, BN))) * 2.0
    u = tl.broadcast_to(s, (BM,))[:, None] + w
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], v + u)


@wb.jit
def flat_sum_k(x_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """The sum of a tile reshaped to 1-D."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(out_ptr, tl.sum(tl.reshape(x, (BM * BN,)), axis=0))


@wb.jit
def batched_descriptor_k(x_ptr, out_ptr, B, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """One BM x BN block per batch through a rank-3 descriptor, reshaped to 2-D."""
    desc = tl.make_tensor_descriptor(x_ptr, shape=[B, M, N], strides=[M * N, N, 1],
                                     block_shape=[1, BM, BN])
    b = tl.program_id(0)
    x = desc.load([b, 0, 0]).reshape(BM, BN)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    tl.store(out_ptr + b * BM * BN + rm[:, None] * BN + rn[None, :], x * 2.0)


F32 = "*fp32:16"
#: (name, kernel, signature, constexprs)
KERNELS = [
    ("mul_broadcast_sum", mul_broadcast_sum_k, (F32, F32, F32),
     {"M": 256, "N": 192, "K": 160, "BM": 128, "BN": 32, "BK": 32}),
    ("dot_accumulate", dot_accumulate_k, ("*fp16:16", "*fp16:16", F32, "i32"),
     {"BM": 64, "BN": 64, "BK": 32}),
    ("where_masked_load", where_masked_load_k, (F32, F32, "i32"), {"BLOCK": 128}),
    ("addptr_chain", addptr_chain_k, (F32, F32), {"BLOCK": 128}),
    ("splat_broadcast_math", splat_broadcast_math_k, (F32, F32, F32), {"BM": 32, "BN": 64}),
    ("flat_sum", flat_sum_k, (F32, F32), {"BM": 16, "BN": 64}),
    ("batched_descriptor", batched_descriptor_k, (F32, F32, "i32", "i32", "i32"),
     {"BM": 16, "BN": 32}),
]
