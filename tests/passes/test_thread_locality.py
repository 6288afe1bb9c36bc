"""``tritongpu-optimize-thread-locality``: a reduction accumulated across a loop reduces only
each thread's own elements inside the loop (3-D reshape, thread-local ``tt.reduce``) and once
across threads after it, as Triton 3.6's ttgir shows; the interpreter runs the rewritten ttgir
against numpy, the PTX compiles for cuda:90, and the GPU runs it."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.config import Options, Target
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.passes import PassManager
from workbench.passes.pipelines import ttgir_passes

from .pipeline_kernels import run_ttgir


@wb.jit
def row_reduce_k(X, Y, N, OP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 SCALE: tl.constexpr = False):
    start_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    num_pid_n = tl.num_programs(1)
    if OP == "sum":
        local = tl.zeros([BLOCK_M], dtype=tl.float32)
    elif OP == "max":
        local = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    else:
        local = tl.full([BLOCK_M], float("inf"), dtype=tl.float32)
    off_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    for start_n in range(pid_n, tl.cdiv(N, BLOCK_N), num_pid_n):
        off_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
        x = tl.load(X + off_m[:, None] * N + off_n[None, :])
        if SCALE:
            x = x * 2.0
        if OP == "sum":
            local = local + tl.sum(x, axis=1)
        elif OP == "max":
            local = tl.maximum(local, tl.max(x, axis=1))
        else:
            local = tl.minimum(local, tl.min(x, axis=1))
    tl.store(Y + off_m * num_pid_n + pid_n, local)


def _ttgir(op, block_n, target="cuda:90", scale=False):
    c = wb.compile(row_reduce_k, "*fp32:16", "*fp32:16", "i32:16", target="interpreter",
                   OP=op, BLOCK_M=32, BLOCK_N=block_n, SCALE=scale)
    passes = ttgir_passes(Options(num_warps=4, num_stages=3), Target.parse(target))
    return PassManager(passes, verify=True).run(parse_module(c.asm["ttir"]), None, "ttgir")


@pytest.mark.parametrize("op,block_n,n,pids", [("sum", 128, 1024, 2), ("max", 32, 512, 4),
                                               ("min", 64, 512, 2)])
def test_rewritten_ttgir_reduces_twice_and_matches_numpy(op, block_n, n, pids):
    module = _ttgir(op, block_n)
    text = print_module(module, locations=False)
    assert text.count('"tt.reduce"') == 2
    assert "allow_reorder efficient_layout" in text and "{axis = 2 : i32}" in text
    rng = np.random.default_rng()
    x = rng.standard_normal((32, n)).astype(np.float32)
    y = np.full((32, pids), np.nan, np.float32)
    run_ttgir(module, (1, pids, 1), [x, y, n])
    ref = np.stack([{"sum": np.sum, "max": np.max, "min": np.min}[op](
        x.reshape(32, -1, block_n)[:, p::pids], axis=(1, 2)) for p in range(pids)], axis=1)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-4)


def test_same_ttgir_structure_as_triton():
    """The reduced shapes and the 3-D layout as real Triton's ttgir has them."""
    text = print_module(_ttgir("max", 32), locations=False)
    assert "#ttg.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [4, 8, 1], " \
           "warpsPerCTA = [4, 1, 1], order = [2, 1, 0]}>" in text
    assert "-> tensor<32x8x4xf32," in text and "dense<0xFF800000> : tensor<32x8xf32" in text


def test_only_reductions_of_loaded_values_are_split():
    """Triton's condition: the reduced tile is a ``tt.load`` result."""
    text = print_module(_ttgir("sum", 128, scale=True), locations=False)
    assert text.count('"tt.reduce"') == 1 and "efficient_layout" not in text


def test_ptx_compiles():
    c = wb.compile(row_reduce_k, "*fp32:16", "*fp32:16", "i32:16", target="cuda:90", OP="sum",
                   BLOCK_M=32, BLOCK_N=128)
    assert c.asm["ttgir"].count('"tt.reduce"') == 2 and "ret;" in c.asm["ptx"]


@pytest.mark.gpu
@pytest.mark.parametrize("op,block_n,n,pids", [("sum", 128, 1024, 2), ("max", 32, 2048, 4),
                                               ("min", 64, 512, 2)])
def test_row_reduce_on_gpu(op, block_n, n, pids):
    import workbench.cuda as wcuda
    rng = np.random.default_rng()
    x = rng.standard_normal((32, n)).astype(np.float32)
    y = wcuda.to_device(np.full((32, pids), np.nan, np.float32))
    row_reduce_k[(1, pids, 1)](wcuda.to_device(x), y, n, OP=op, BLOCK_M=32, BLOCK_N=block_n)
    ref = np.stack([{"sum": np.sum, "max": np.max, "min": np.min}[op](
        x.reshape(32, -1, block_n)[:, p::pids], axis=(1, 2)) for p in range(pids)], axis=1)
    np.testing.assert_allclose(y.to_numpy(), ref, rtol=1e-5, atol=1e-4)
