"""Example kernels used by the quickstart, the benchmarks and the docs: the one home of the
tutorial kernels that ``benchmarks/`` times.

Each is a plain ``@jit`` kernel written exactly as it would be in Triton (``triton.jit`` runs
the same source: ``benchmarks/common.py`` re-imports it under Triton for the side-by-side
columns). Where two benchmarks need different semantics the variants are separate kernels:

- :func:`add_kernel`, :func:`triad_kernel`: elementwise, one program per ``BLOCK_SIZE``;
- :func:`softmax_kernel` (fp32 through) and :func:`softmax_fp32_acc_kernel` (any float in and
  out, fp32 inside);
- :func:`layer_norm_fwd_kernel` (Triton's tutorial: loops over a row, stores mean and rstd) and
  :func:`layer_norm_row_kernel` (one block per row, fp16 out);
- :func:`matmul_kernel` (masked, fp32 ``ieee`` dot) and :func:`matmul_fp16_kernel` (tiles that
  divide the sizes, tensor-core precision, fp16 out); :func:`matmul_tutorial_kernel` (Triton's
  tutorial form: pointers advanced in the K loop, K tail masked, fp16 out);
- :func:`matmul_typed_kernel`: :func:`matmul_fp16_kernel` storing C in C's own dtype (bf16);
- :func:`matmul_persistent_tma_kernel`: Triton's tutorial 09 persistent matmul through host
  tensor descriptors (TMA on ``cuda:90``);
- :func:`attention_fwd_kernel`: flash attention forward, fp16 in and out;
  :func:`attention_causal_fwd_kernel`: the causal form (Triton's tutorial 06 split: blocks
  below the diagonal unmasked, the diagonal blocks masked).
"""
from __future__ import annotations

import workbench.language as tl
from workbench.runtime.jit import jit


@jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """out[i] = x[i] + y[i] for i < n_elements; one program per BLOCK_SIZE elements."""
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@jit
def triad_kernel(a_ptr, b_ptr, c_ptr, s, n_elements, BLOCK_SIZE: tl.constexpr):
    """STREAM triad a[i] = b[i] + s * c[i] for i < n_elements; grid (cdiv(n, BLOCK_SIZE),)."""
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    b = tl.load(b_ptr + offsets, mask=mask)
    c = tl.load(c_ptr + offsets, mask=mask)
    tl.store(a_ptr + offsets, b + s * c, mask=mask)


@jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                   BLOCK_SIZE: tl.constexpr):
    """Row-wise softmax: one program per row; BLOCK_SIZE is a power of two >= n_cols."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


@jit
def softmax_fp32_acc_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols,
                            BLOCK_SIZE: tl.constexpr):
    """Row-wise softmax computed in fp32 and stored in the output's dtype (fp16 or fp32 rows);
    one program per row; BLOCK_SIZE is a power of two >= n_cols."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask,
                other=-float("inf")).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


@jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    """Triton's fused layer norm forward: Y = (X - mean) * rstd * W + B per row of N, with
    the row's mean and 1/std stored in Mean and Rstd; one program per row, looping over the
    row in BLOCK_SIZE chunks (any N); accumulates in fp32."""
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        _mean += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)


@jit
def layer_norm_row_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, n_cols, eps,
                          BLOCK_SIZE: tl.constexpr):
    """Layer norm forward of one row per program in a single block (BLOCK_SIZE a power of two
    >= n_cols): y = (x - mean) * rstd * w + b, computed in fp32, stored as fp16."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, (d * rstd * w + b).to(tl.float16), mask=mask)


@jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr, GROUP_M: tl.constexpr):
    """C = A @ B for row-major contiguous A (M x K), B (K x N), C (M x N), any sizes (masked
    edges), fp32 ``ieee`` dot. Grid (cdiv(M, BM) * cdiv(N, BN),): one BM x BN tile of C per
    program, programs ordered in groups of GROUP_M tile rows (L2 reuse); BK: the K step."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@jit
def matmul_fp16_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                       BK: tl.constexpr, GROUP_M: tl.constexpr):
    """C = A @ B as :func:`matmul_kernel` (grid, grouping, constexprs) but unmasked (BM, BN,
    BK must divide M, N, K), with the default (tensor-core) dot precision, an fp32
    accumulator and C stored as fp16."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@jit
def matmul_tutorial_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                           stride_bn, stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr,
                           BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                           GROUP_SIZE_M: tl.constexpr):
    """Triton's matmul tutorial kernel (03-matrix-multiplication.py, without the activation):
    C (fp16) = A @ B, fp32 accumulation, grouped 1-D grid, pointers advanced in the K loop,
    K tail masked."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@jit
def matmul_typed_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                        BK: tl.constexpr, GROUP_M: tl.constexpr):
    """C = A @ B as :func:`matmul_fp16_kernel` (BM, BN, BK divide M, N, K; fp32 accumulator)
    with C stored in its own element type (fp16 or bf16 inputs and output)."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    group = GROUP_M * num_pid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@jit
def attention_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, N_CTX, D: tl.constexpr,
                         BM: tl.constexpr, BN: tl.constexpr):
    """Flash attention forward, non-causal: O = softmax(Q K^T * sm_scale) V per (batch x
    head), Q/K/V/O contiguous fp16 of shape (batch * heads, N_CTX, D). Grid (N_CTX // BM,
    batch * heads): BM query rows per program, keys and values in BN steps (online softmax
    in base 2, fp32 accumulator); BM and BN divide N_CTX."""
    start_m = tl.program_id(0)
    off = tl.program_id(1) * N_CTX * D
    rm = start_m * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + off + rm[:, None] * D + rd[None, :])
    m_i = tl.zeros((BM,), dtype=tl.float32) - float("inf")
    l_i = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BN):
        kt = tl.load(k_ptr + off + (start_n + rn)[None, :] * D + rd[:, None])
        qk = tl.dot(q, kt) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + off + (start_n + rn)[:, None] * D + rd[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    tl.store(o_ptr + off + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(tl.float16))


@jit
def attention_causal_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, N_CTX, D: tl.constexpr,
                                BM: tl.constexpr, BN: tl.constexpr):
    """Causal flash attention forward: as :func:`attention_fwd_kernel` with query row ``i``
    attending to keys ``j <= i``. Keys below the program's diagonal block are visited without
    a mask, the diagonal block's BM keys (BN steps, BN divides BM) with one (scores of later
    keys set to -1e6 before the base-2 softmax, as Triton's tutorial 06)."""
    start_m = tl.program_id(0)
    off = tl.program_id(1) * N_CTX * D
    rm = start_m * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + off + rm[:, None] * D + rd[None, :])
    m_i = tl.zeros((BM,), dtype=tl.float32) - float("inf")
    l_i = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, start_m * BM, BN):
        kt = tl.load(k_ptr + off + (start_n + rn)[None, :] * D + rd[:, None])
        qk = tl.dot(q, kt) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + off + (start_n + rn)[:, None] * D + rd[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    for start_n in range(start_m * BM, (start_m + 1) * BM, BN):
        kt = tl.load(k_ptr + off + (start_n + rn)[None, :] * D + rd[:, None])
        causal = rm[:, None] >= (start_n + rn)[None, :]
        qk = tl.dot(q, kt) * qk_scale + tl.where(causal, 0.0, -1.0e6)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + off + (start_n + rn)[:, None] * D + rd[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    tl.store(o_ptr + off + rm[:, None] * D + rd[None, :], (acc / l_i[:, None]).to(tl.float16))


@jit
def matmul_persistent_tma_kernel(a_desc, b_desc, c_desc, M, N, K,
                                 BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                                 BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                                 NUM_SMS: tl.constexpr):
    """Triton's tutorial 09 persistent matmul with host tensor descriptors: C = A @ B^T with
    A [M, K] and B [N, K] row-major (descriptors of blocks [BLOCK_SIZE_M, BLOCK_SIZE_K] and
    [BLOCK_SIZE_N, BLOCK_SIZE_K]) and C [M, N] fp16 (blocks [BLOCK_SIZE_M, BLOCK_SIZE_N]).
    Grid (NUM_SMS,): program p computes output tiles p, p + NUM_SMS, ... in the grouped order
    of :func:`matmul_tutorial_kernel`; fp32 accumulation."""
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        offs_am = pid_m * BLOCK_SIZE_M
        offs_bn = pid_n * BLOCK_SIZE_N
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            accumulator = tl.dot(a, b.T, accumulator)
        c_desc.store([offs_am, offs_bn], accumulator.to(tl.float16))
