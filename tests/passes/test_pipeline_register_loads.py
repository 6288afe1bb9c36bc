"""tritongpu-pipeline on loads read in registers (Triton 3.6 ``AssignLatencies.cpp``
``loadOpsToIndirectionLevel``, ``LowerLoops.cpp`` ``createAsyncCopy``): rows loaded in a
``tl.range(num_stages=S)`` loop with no dot, and the operands of an FMA (``ieee``) dot, are
copied ahead through ``#ttg.swizzled_shared<{vec = 1, ...}>`` buffers; a non-zero ``other``
is restored by a select. Also: a rank-1 swizzled buffer's addressing."""
from __future__ import annotations

import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.codegen.nvptx.smem_access import swizzle_offset_py
from workbench.layouts.encodings import SwizzledSharedLayout
from workbench.layouts.mma import mma_operand_shared
from workbench.passes.pipeline_register_loads import is_innermost, reached_loads
from workbench.runtime.aot import compile as wb_compile

rng = np.random.default_rng()


@wb.jit
def rows_max(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr, STAGES: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for r in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=STAGES):
        x = tl.load(x_ptr + r * BLOCK + cols, mask=cols < n_cols, other=-float("inf"))
        tl.store(out_ptr + r, tl.max(x, axis=0))


@wb.jit
def rows_sum_plain(x_ptr, out_ptr, n_rows, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for r in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        tl.store(out_ptr + r, tl.sum(tl.load(x_ptr + r * BLOCK + cols), axis=0))


@wb.jit
def rows_gathered(x_ptr, idx_ptr, out_ptr, n_rows, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for r in tl.range(0, n_rows, num_stages=3):
        row = tl.load(idx_ptr + r)
        tl.store(out_ptr + r * BLOCK + cols, tl.load(x_ptr + row * BLOCK + cols))


@wb.jit
def fma_matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
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
def scores_t(q_ptr, k_ptr, o_ptr, N, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for n in range(0, N, BN):
        k = tl.load(k_ptr + (n + rn)[:, None] * D + rd[None, :])
        acc += tl.dot(q, tl.trans(k))
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], acc)


def _ttgir(kernel, *sig, target="cuda:80", **kw) -> str:
    return wb_compile(kernel, *sig, target=target, **kw).asm["ttgir"]


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_row_load_of_a_staged_loop_is_copied_ahead(target):
    stages = int(rng.integers(2, 5))
    block = int(2 ** rng.integers(7, 11))
    text = _ttgir(rows_max, "*fp32:16", "*fp32:16", "i32", "i32", target=target,
                  BLOCK=block, STAGES=stages)
    shared = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>"
    assert shared in text
    # S - 1 buffers (Triton's stageDiff), S - 1 copies before the loop and one in it
    assert f"!ttg.memdesc<{stages - 1}x{block}xf32, #shared, #smem, mutable>" in text
    assert text.count("ttg.async_copy_global_to_local") == stages
    assert " tt.load " not in text.split("scf.for", 1)[1]
    # the -inf padding comes back through a select on the load's mask (cp.async zero-fills)
    loop = text.split("scf.for", 1)[1]
    assert re.search(rf"ttg\.local_load .* -> tensor<{block}xf32", loop)
    assert re.search(rf"arith\.select %\w+, %\w+, %\w+ : tensor<{block}xi1", loop)


def test_loop_without_dot_or_num_stages_is_left_alone():
    text = _ttgir(rows_sum_plain, "*fp32:16", "*fp32:16", "i32", BLOCK=256, num_stages=4)
    assert "async_copy" not in text and "local_alloc" not in text


def test_load_whose_address_is_loaded_stays_a_load():
    text = _ttgir(rows_gathered, "*fp32:16", "*i32:16", "*fp32:16", "i32", BLOCK=256)
    loop = text.split("scf.for", 1)[1]
    assert "async_copy" not in text and "local_alloc" not in text
    assert len(re.findall(r"= tt\.load ", loop)) == 2


def test_two_byte_copies_are_not_pipelined():
    # fp16 rows with no divisibility hint: one 2-byte element per copy, below cp.async's 4
    text = _ttgir(rows_max, "*fp16", "*fp16", "i32", "i32", BLOCK=256, STAGES=3)
    assert "async_copy" not in text


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_fma_dot_operands_are_read_back_in_the_dot_layout(target):
    bk = int(rng.choice([16, 32]))
    text = _ttgir(fma_matmul, "*fp32:16", "*fp32:16", "*fp32:16", "i32:16", target=target,
                  BM=32, BN=32, BK=bk, num_stages=3)
    assert "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>" in text
    assert f"!ttg.memdesc<2x32x{bk}xf32" in text and f"!ttg.memdesc<2x{bk}x32xf32" in text
    loop = text.split("scf.for", 1)[1].split("scf.yield", 1)[0]
    assert "ttg.convert_layout" not in loop
    reads = re.findall(r"ttg\.local_load .* -> tensor<[^,]+, #ttg\.dot_op<\{opIdx = (\d)", loop)
    assert sorted(reads) == ["0", "1"]


def test_transposed_mma_operand_is_staged_untransposed_on_sm80():
    bn, d = int(rng.choice([32, 64, 128])), int(rng.choice([32, 64]))
    ck = wb_compile(scores_t, "*fp16:16", "*fp16:16", "*fp32:16", "i32:16", target="cuda:80",
                    BM=64, BN=bn, D=d, num_stages=3)
    text = ck.asm["ttgir"]
    want = mma_operand_shared(0, (bn, d), (1, 0), 2, 16)
    assert f"!ttg.memdesc<2x{bn}x{d}xf16, #shared" in text
    assert str(want).split("<", 1)[1] in text  # the tile's buffer: A-like, K contiguous
    loop = text.split("scf.for", 1)[1].split("scf.yield", 1)[0]
    assert re.search(rf"ttg\.local_load .* -> tensor<{bn}x{d}xf16, #linear>", loop)
    assert re.search(rf"tt\.trans .* -> tensor<{d}x{bn}xf16, #ttg\.dot_op<{{opIdx = 1", loop)
    assert "local_alloc" not in loop  # nothing staged again inside the loop
    ptx = ck.asm["ptx"]
    assert "cp.async.cg.shared.global" in ptx and "ld.global.b16" not in ptx


def test_reached_loads_follow_the_dot_operands_only():
    ck = wb_compile(fma_matmul, "*fp32:16", "*fp32:16", "*fp32:16", "i32:16",
                    target="cuda:80", BM=16, BN=16, BK=16, num_stages=1, keep_snapshots=True)
    from workbench.ir.parser import parse_module
    snap = dict(ck.snapshots)
    m = parse_module(snap["tritongpu-optimize-dot-operands"]
                     if "tritongpu-optimize-dot-operands" in snap else ck.asm["ttgir"])
    loop = next(op for op in m.walk() if op.name == "scf.for")
    assert is_innermost(loop)
    assert len(reached_loads(loop)) == 2


def test_rank1_swizzled_offset_is_the_element_index():
    enc = SwizzledSharedLayout(1, 1, 1, (0,))
    n = int(2 ** rng.integers(4, 12))
    for c in rng.integers(0, n, 16):
        assert swizzle_offset_py(enc, (n,), (int(c),)) == int(c)


@pytest.mark.gpu
def test_pipelined_rows_and_fma_dot_on_the_gpu():
    from workbench.backends import cuda_driver
    from workbench.backends.cuda_driver import DeviceArray
    n_rows, n_cols, block = int(rng.integers(40, 90)), int(rng.integers(100, 256)), 256
    x = rng.standard_normal((n_rows, block)).astype(np.float32)
    out = DeviceArray.from_numpy(np.full(n_rows, np.nan, np.float32))
    rows_max[(7,)](DeviceArray.from_numpy(x), out, n_rows, n_cols, BLOCK=block, STAGES=3)
    cuda_driver.synchronize()
    np.testing.assert_allclose(out.to_numpy(), x[:, :n_cols].max(axis=1), rtol=0, atol=0)
    k = 16 * int(rng.integers(2, 9))
    a = rng.standard_normal((32, k)).astype(np.float32)
    b = rng.standard_normal((k, 32)).astype(np.float32)
    c = DeviceArray.from_numpy(np.full((32, 32), np.nan, np.float32))
    fma_matmul[(1,)](DeviceArray.from_numpy(a), DeviceArray.from_numpy(b), c, k, BM=32, BN=32,
                     BK=16, num_stages=3)
    cuda_driver.synchronize()
    np.testing.assert_allclose(c.to_numpy(), a @ b, rtol=1e-5, atol=1e-4)
    n = 64 * int(rng.integers(1, 6))
    q = rng.standard_normal((64, 64)).astype(np.float16)
    kk = rng.standard_normal((n, 64)).astype(np.float16)
    o = DeviceArray.from_numpy(np.full((64, 64), np.nan, np.float32))
    scores_t[(1,)](DeviceArray.from_numpy(q), DeviceArray.from_numpy(kk), o, n, BM=64, BN=64,
                   D=64, num_stages=3)
    cuda_driver.synchronize()
    ref = sum(q.astype(np.float32) @ kk[j:j + 64].astype(np.float32).T for j in range(0, n, 64))
    np.testing.assert_allclose(o.to_numpy(), ref, rtol=1e-2, atol=1e-2)
