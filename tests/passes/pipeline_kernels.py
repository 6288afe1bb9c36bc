"""Kernels shared by the pipeline tests (tests/passes/test_pipeline_carried.py and
tests/backends/test_cuda_pipeline.py): the Triton tutorial matmul, whose K loop advances its
pointers (``a_ptrs += BLOCK_K * stride_ak``), with and without the K masks and the ``% M`` /
``% N`` wrap of the row and column offsets; and helpers to get its pipelined ttgir and run it
in the interpreter."""
from __future__ import annotations

import numpy as np

import workbench as wb
import workbench.language as tl
from workbench.backends.base import PointerArg
from workbench.backends.interpreter import interpret
from workbench.config import Options, Target
from workbench.ir.parser import parse_module
from workbench.passes import PassManager
from workbench.passes.pipelines import ttgir_passes


@wb.jit
def tutorial_mm(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, MASK: tl.constexpr, WRAP: tl.constexpr):
    """The tutorial's matmul (2-D grid of BLOCK_M x BLOCK_N tiles of C, fp16 out)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    if WRAP:
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    else:
        offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if MASK:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        else:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@wb.jit
def carried_after_loop(a_ptr, b_ptr, c_ptr, last_ptr, K, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """A (BLOCK_M x K) @ B (K x BLOCK_N), K a multiple of BLOCK_K, row-major; the advanced
    pointer of A is used after the loop too (it re-reads the last K tile of A into
    ``last_ptr``), so the pipeliner must keep it exact instead of shifting it."""
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * BLOCK_N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * BLOCK_N
    tl.store(c_ptr + rm[:, None] * BLOCK_N + rn[None, :], acc)
    tl.store(last_ptr + rm[:, None] * BLOCK_K + rk[None, :], tl.load(a_ptrs - BLOCK_K))


#: The benchmark signature: fp16 pointers (16-byte aligned), M = N = K = 1024, unit strides.
SIG_1024 = ["*fp16:16", "*fp16:16", "*fp16:16", 1024, 1024, 1024, 1024, 1, 1024, 1, 1024, 1]
#: Any sizes (K need not be a multiple of anything), unit inner strides.
SIG_ANY = ["*fp16:16", "*fp16:16", "*fp16:16", "i32", "i32", "i32", "i32", 1, "i32", 1,
           "i32", 1]
#: Any sizes with fp32 A and B: every element is a 4-byte run, so the loads are copied with
#: cp.async even though nothing is known about K or the strides (fp16 loads like SIG_ANY's
#: are left synchronous then, as Triton 3.6 leaves them: cp.async needs 4-byte runs).
SIG_ANY_F32 = ["*fp32:16", "*fp32:16", "*fp16:16", "i32", "i32", "i32", "i32", 1, "i32", 1,
               "i32", 1]
#: fp16 with N, K and the strides multiples of 16 (16-byte runs: pipelined); M any.
SIG_DIV16 = ["*fp16:16", "*fp16:16", "*fp16:16", "i32", "i32:16", "i32:16", "i32:16", 1,
             "i32:16", 1, "i32:16", 1]


def pipelined_ttgir(kernel, sig, stages=3, num_warps=4, target="cuda:80", **constexprs):
    """The ttgir module of ``kernel`` after the CUDA target's ttgir passes (pipelined when
    ``stages`` > 1), without generating code."""
    c = wb.compile(kernel, *sig, target="interpreter", **constexprs)
    m = parse_module(c.asm["ttir"])
    opts = Options(num_warps=num_warps, num_stages=stages)
    return PassManager(ttgir_passes(opts, Target.parse(target)), verify=True).run(m, None,
                                                                                  "ttgir")


def parg(a: np.ndarray) -> PointerArg:
    """A numpy array as an interpreter pointer argument."""
    addr = a.ctypes.data
    return PointerArg(addr, addr, addr + a.nbytes, a.itemsize, a)


def run_ttgir(module, grid, args) -> None:
    """Interpret ``module`` (ttgir) over ``grid`` with ``args`` (numpy arrays as pointers)."""
    interpret(module, grid, [parg(a) if isinstance(a, np.ndarray) else a for a in args])
