"""Block-pointer loads in a K loop: canonicalize drops the iter args that only pass a block
pointer's fixed fields through the loop (as Triton's make_ttir does), so the loop carries the
offsets that tl.advance moves (integers advanced by arith.addi), and the pipeliner issues the
loads ahead as cp.async copies. The pipelined kernel still computes A @ B."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from tests.passes.pipeline_kernels import pipelined_ttgir, run_ttgir
from tests.passes.util import kernel, run
from workbench.ir.printer import print_module
from workbench.passes.canonicalize import Canonicalize


@wb.jit
def bp_mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
          BK: tl.constexpr):
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (tl.program_id(0) * BM, 0), (BM, BK),
                             (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, tl.program_id(1) * BN), (BK, BN),
                             (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(a_bp), tl.load(b_bp))
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (N, 1),
                             (tl.program_id(0) * BM, tl.program_id(1) * BN), (BM, BN), (1, 0))
    tl.store(c_bp, acc)


SIG = ["*fp16:16", "*fp16:16", "*fp32:16", "i32:16", "i32:16", "i32:16"]
TILE = {"BM": 32, "BN": 32, "BK": 16}


def test_pass_through_iter_args_are_dropped():
    text = run([Canonicalize()], kernel("""
        %c0 = arith.constant 0 : i32
        %c1 = arith.constant 1 : i32
        %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %f, %b = %m, %c = %c1)
            -> (f32, i32, i32) : i32 {
          %a2 = arith.addf %a, %f : f32
          %b2 = arith.addi %b, %c : i32
          scf.yield %a2, %b2, %c1 : f32, i32, i32
        }
        %s = tt.splat %r#1 : i32 -> tensor<4xi32>
        %q = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
        %q2 = tt.addptr %q, %s : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
        %v = tt.splat %r#0 : f32 -> tensor<4xf32>
        tt.store %q2, %v : tensor<4x!tt.ptr<f32>>
    """))
    # %c yields its own init: gone, %b now adds the constant 1
    assert "%r:2 = scf.for" in text and "-> (f32, i32)" in text
    assert "arith.addi %b, %c1 : i32" in text and "scf.yield %a2, %b2 : f32, i32" in text


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_block_pointer_loads_are_pipelined_and_exact(target):
    module = pipelined_ttgir(bp_mm, SIG, stages=3, num_warps=4, target=target, **TILE)
    text = print_module(module, locations=False)
    assert text.count("ttg.async_copy_global_to_local") == 6  # 2 operands x (2 ahead + loop)
    assert "tt.load" not in text[text.index("scf.for"):text.index("scf.yield")]
    rng = np.random.default_rng()
    m, n = 64, 32
    for k in (80, 16, 0):  # 5 iterations, 1 (fewer than the stages), none
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        c = np.full((m, n), np.nan, np.float32)
        run_ttgir(module, (2, 1, 1), [a, b, c, m, n, k])
        want = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c, want, atol=1e-2 * np.sqrt(max(k, 1)), rtol=1e-2)
