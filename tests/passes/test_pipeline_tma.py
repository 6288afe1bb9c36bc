"""tritongpu-pipeline for tensor descriptor loads on sm_90 (:mod:`workbench.passes.pipeline_tma`),
also in a loop nest fused by ``flatten=True``:
the ttgir of a TMA matmul K loop is Triton 3.6's pipelined form (the op lines below are
Triton's, value names aside), the pipelined ttgir of tutorial 09's persistent matmul computes
C = A @ B^T in the interpreter for 1 to 4 stages (TMA boxes with out-of-bounds zero fill,
mbarrier phases modelled: a wait that could never complete fails), one ``gpu.barrier`` per
pipelined iteration, and tritongpu-optimize-dot-operands lets wgmma read ``b.T`` through a
``ttg.memdesc_trans`` of the TMA buffer (no register round trip, no spills)."""
from __future__ import annotations

import functools
import re
import shutil

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.interp.compiler import compile_function
from workbench.backends.interp.errors import InterpreterError
from workbench.backends.interp.launch import Launcher
from workbench.ir.core import Operation, functions
from workbench.ir.parser import parse_module
from workbench.testing.examples import matmul_persistent_tma_kernel
from workbench.tools.tensor_descriptor import TensorDescriptor

from .pipeline_kernels import parg
from .test_tma_lowering import op_lines, tma_matmul

# Triton 3.6.0's ttgir of tma_matmul (fp16, 128x128x64, 4 warps, num_stages=3): its ttg/ttng
# op lines in order, without the memdesc_index lines (checked as a set below), the loop
# header and yield (Triton carries slot counters, the workbench derives them from the
# induction variable) and the local_dealloc ops; the wait in the loop lists the two slots
# the dot reads, as Triton's does
TRITON_PIPELINED = """\
%v = ttg.local_alloc : () -> !ttg.memdesc<3x128x64xf16, #shared, #smem, mutable>
%v = ttg.local_alloc : () -> !ttg.memdesc<3x64x128xf16, #shared, #smem, mutable>
%v = ttg.local_alloc : () -> !ttg.memdesc<3x1xi64, #shared1, #smem, mutable>
ttng.init_barrier %v, 1 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.init_barrier %v, 1 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.init_barrier %v, 1 : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.barrier_expect %v, 32768, %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.async_tma_copy_global_to_local %v[%v, %v] %v, %v, %v : !tt.tensordesc<tensor<128x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
ttng.async_tma_copy_global_to_local %v[%v, %v] %v, %v, %v : !tt.tensordesc<tensor<64x128xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
ttng.barrier_expect %v, 32768, %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.async_tma_copy_global_to_local %v[%v, %v] %v, %v, %v : !tt.tensordesc<tensor<128x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
ttng.async_tma_copy_global_to_local %v[%v, %v] %v, %v, %v : !tt.tensordesc<tensor<64x128xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
ttng.wait_barrier %v, %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
%v = ttng.warp_group_dot %v, %v, %v {inputPrecision = 0 : i32, isAsync = true} : !ttg.memdesc<128x64xf16, #shared, #smem, mutable> * !ttg.memdesc<64x128xf16, #shared, #smem, mutable> -> tensor<128x128xf32, #mma>
%v:3 = ttng.warp_group_dot_wait %v, %v, %v {pendings = 1 : i32} : tensor<128x128xf32, #mma>, !ttg.memdesc<128x64xf16, #shared, #smem, mutable>, !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
ttng.barrier_expect %v, 32768, %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.async_tma_copy_global_to_local %v[%v, %v] %v, %v, %v : !tt.tensordesc<tensor<128x64xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
ttng.async_tma_copy_global_to_local %v[%v, %v] %v, %v, %v : !tt.tensordesc<tensor<64x128xf16, #shared>>, !ttg.memdesc<1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
%v = ttng.warp_group_dot_wait %v {pendings = 0 : i32} : tensor<128x128xf32, #mma>
ttng.inval_barrier %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.inval_barrier %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
ttng.inval_barrier %v : !ttg.memdesc<1xi64, #shared1, #smem, mutable>
%v = ttg.local_alloc %v : (tensor<128x128xf16, #mma>) -> !ttg.memdesc<128x128xf16, #shared, #smem>
ttng.fence_async_shared {bCluster = false}
ttng.async_tma_copy_local_to_global %v[%v, %v] %v : !tt.tensordesc<tensor<128x128xf16, #shared>>, !ttg.memdesc<128x128xf16, #shared, #smem>
ttng.async_tma_store_wait {pendings = 0 : i32}
"""  # noqa: E501

TRITON_INDEX = """\
%v = ttg.memdesc_index %v[%v] : !ttg.memdesc<3x128x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<128x64xf16, #shared, #smem, mutable>
%v = ttg.memdesc_index %v[%v] : !ttg.memdesc<3x1xi64, #shared1, #smem, mutable> -> !ttg.memdesc<1xi64, #shared1, #smem, mutable>
%v = ttg.memdesc_index %v[%v] : !ttg.memdesc<3x64x128xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x128xf16, #shared, #smem, mutable>
"""  # noqa: E501


def _seq(text: str) -> tuple[list, set]:
    lines = [ln for ln in op_lines(text) if re.match(r"(%v(:\d+)? = )?(ttg|ttng)\.", ln)
             and "local_dealloc" not in ln]
    return [ln for ln in lines if "memdesc_index" not in ln], \
        {ln for ln in lines if "memdesc_index" in ln}


def _tma_matmul(stages=3):
    a = TensorDescriptor.from_tensor(np.zeros((256, 256), np.float16), [128, 64])
    b = TensorDescriptor.from_tensor(np.zeros((256, 256), np.float16), [64, 128])
    c = TensorDescriptor.from_tensor(np.zeros((256, 256), np.float16), [128, 128])
    return wb.compile(tma_matmul, a, b, c, 256, BM=128, BN=128, BK=64, target="cuda:90",
                      num_stages=stages)


def test_tma_matmul_ttgir_is_tritons_pipelined_form():
    k = _tma_matmul()
    seq, index = _seq(k.asm["ttgir"])
    assert seq == TRITON_PIPELINED.splitlines()
    assert index == set(TRITON_INDEX.splitlines())


def _loop_body(text: str) -> list:
    """The op lines of the innermost scf.for holding a warp_group_dot."""
    lines = [re.sub(r"\s*loc\(.*\)$", "", ln) for ln in text.splitlines()]
    start = max(i for i, ln in enumerate(lines) if "scf.for" in ln and
                any("warp_group_dot " in x for x in lines[i:i + 60]))
    depth, out = 0, []
    for ln in lines[start + 1:]:
        if ln.strip() == "}" and depth == 0:
            break
        depth += ln.count("{") - ln.count("}")
        out.append(ln.strip())
    return out


@functools.lru_cache(maxsize=8)
def _persistent(stages, warps=4, bm=64, bn=32, bk=32, m=200, n=136, k=200, sms=3):
    descs = [TensorDescriptor.from_tensor(np.zeros(s, np.float16), blk) for s, blk in
             (((m, k), [bm, bk]), ((n, k), [bn, bk]), ((m, n), [bm, bn]))]
    return wb.compile(matmul_persistent_tma_kernel, *descs, m, n, k, BLOCK_SIZE_M=bm,
                      BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, NUM_SMS=sms,
                      target="cuda:90", num_warps=warps, num_stages=stages)


def test_persistent_k_loop_is_pipelined_with_one_barrier_per_iteration():
    text = _persistent(3, warps=8, bm=128, bn=256, bk=64).asm["ttgir"]
    body = _loop_body(text)
    kinds = [re.sub(r"^%[\w#:]+ = ", "", ln).split(" ")[0] for ln in body]
    ops = [x for x in kinds if x.startswith(("ttng.", "gpu."))]
    assert ops == ["ttng.wait_barrier", "ttng.warp_group_dot", "ttng.warp_group_dot_wait",
                   "gpu.barrier", "ttng.barrier_expect", "ttng.async_tma_copy_global_to_local",
                   "ttng.async_tma_copy_global_to_local"], ops
    assert "isAsync = true" in next(ln for ln in body if "warp_group_dot " in ln)
    assert "ttg.memdesc_trans" in kinds  # b.T read through a transposed view of the slot
    assert "ttg.local_load" not in text and "tt.trans" not in text
    assert text.count("ttng.inval_barrier") == 3 and text.count("ttng.init_barrier") == 3
    assert "!ttg.memdesc<3x256x64xf16, #shared, #smem, mutable>" in text


def _interpret(module, grid, args) -> None:
    func = functions(module)[0]
    Launcher(compile_function(func, module))(grid, args)


def _run_persistent(module, m, n, k, sms):
    rng = np.random.default_rng()
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    # a host descriptor is the array and its sizes and strides (elements)
    args = [parg(a), m, k, k, 1, parg(b), n, k, k, 1, parg(c), m, n, n, 1, m, n, k]
    _interpret(module, (sms, 1, 1), args)
    return a, b, c


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_pipelined_persistent_ttgir_computes_the_matmul(stages):
    m, n, k, sms = 200, 136, 200, 3  # ragged M and K: the TMA boxes zero-fill past the end
    module = parse_module(_persistent(stages, m=m, n=n, k=k, sms=sms).asm["ttgir"])
    assert ("ttng.wait_barrier" in str([o.name for o in module.walk()])) is True
    a, b, c = _run_persistent(module, m, n, k, sms)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c.astype(np.float64), want, atol=2e-2 * np.sqrt(k), rtol=1e-2)


def test_a_wait_on_the_wrong_phase_is_caught():
    module = parse_module(_persistent(3).asm["ttgir"])
    wait = next(op for op in module.walk() if op.name == "ttng.wait_barrier"
                and op.parent_op().name == "scf.for")
    one = Operation("arith.constant", [], [wait.operands[1].type], {"value": 1})
    wait.parent.insert_before(wait, one)
    wait.set_operand(1, one.result)  # parity 1 for the first use of each slot: never done
    with pytest.raises(InterpreterError, match="never completes"):
        _run_persistent(module, 200, 136, 200, 3)


@wb.jit
def shifted_loads(a_desc, b_desc, c_desc, idx_ptr, K, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        off = tl.load(idx_ptr + k)  # a coordinate read from memory in the loop
        a = a_desc.load([0, off])
        b = b_desc.load([k * BK, 0])
        acc = tl.dot(a, b, acc)
    c_desc.store([0, 0], acc.to(tl.float16))


def test_data_dependent_coordinates_are_not_pipelined_and_said_so():
    a = TensorDescriptor.from_tensor(np.zeros((128, 256), np.float16), [128, 64])
    b = TensorDescriptor.from_tensor(np.zeros((256, 128), np.float16), [64, 128])
    c = TensorDescriptor.from_tensor(np.zeros((128, 128), np.float16), [128, 128])
    k = wb.compile(shifted_loads, a, b, c, "*i32", 256, BM=128, BN=128, BK=64,
                   target="cuda:90")
    assert any("descriptor load of `a`" in n and "tt.load" in n for n in k.extra["notes"]), \
        k.extra["notes"]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
def test_tutorial_tile_has_no_spills():
    # 128x256x64 tiles, 8 warps, 3 stages (tutorial 09's config): Triton 3.6 gets 0 spills
    meta = _persistent(3, warps=8, bm=128, bn=256, bk=64, m=512, n=512, k=512).metadata
    assert meta.n_spills == 0 and meta.n_regs <= 255


@wb.jit
def flat_persistent(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                    BK: tl.constexpr, NUM_SMS: tl.constexpr):
    """Tutorial 09's persistent form with ``flatten=True`` (row-major tile order)."""
    start = tl.program_id(0)
    npn = tl.cdiv(N, BN)
    for tile in tl.range(start, tl.cdiv(M, BM) * npn, NUM_SMS, flatten=True):
        pm = tile // npn
        pn = tile % npn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            a = a_desc.load([pm * BM, ki * BK])
            b = b_desc.load([pn * BN, ki * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


@functools.lru_cache(maxsize=8)
def _flat(stages, m, n, k, bm=64, bn=32, bk=32, sms=3):
    descs = [TensorDescriptor.from_tensor(np.zeros(s, np.float16), blk) for s, blk in
             (((m, k), [bm, bk]), ((n, k), [bn, bk]), ((m, n), [bm, bn]))]
    return wb.compile(flat_persistent, *descs, m, n, k, BM=bm, BN=bn, BK=bk, NUM_SMS=sms,
                      target="cuda:90", num_warps=4, num_stages=stages)


def test_flattened_nest_is_one_pipelined_loop_as_tritons():
    text = _flat(3, 200, 136, 200).asm["ttgir"]
    body = _loop_body(text)
    ops = [re.sub(r"^%[\w#:]+ = ", "", ln).split(" ")[0] for ln in body]
    ops = [x for x in ops if x.startswith(("ttng.", "gpu.", "scf."))]
    # Triton's flattened loop: wait, async wgmma, wait 1, refill, then the epilogue if with
    # a wait 0 and the TMA store
    assert ops[:7] == ["ttng.wait_barrier", "ttng.warp_group_dot", "ttng.warp_group_dot_wait",
                       "gpu.barrier", "ttng.barrier_expect",
                       "ttng.async_tma_copy_global_to_local",
                       "ttng.async_tma_copy_global_to_local"], ops
    assert "scf.if" in ops and "ttng.async_tma_copy_local_to_global" in ops
    epi = body[max(i for i, ln in enumerate(body) if "scf.if" in ln):]
    assert "{pendings = 0 : i32}" in epi[1]
    assert any("arith.select" in ln and "tensor<64x32xf32" in ln for ln in body)
    after = text[text.index(body[-1]):]
    assert "ttng.warp_group_dot_wait" in after and "ttng.inval_barrier" in after


@pytest.mark.parametrize("stages, k", [(1, 200), (2, 200), (3, 200), (4, 200), (3, 32),
                                       (3, 16)])
def test_flattened_pipelined_ttgir_computes_the_matmul(stages, k):
    m, n, sms = 200, 136, 3  # 4 x 5 tiles over 3 programs; k = 32, 16: one K step a tile
    module = parse_module(_flat(stages, m, n, k).asm["ttgir"])
    assert not any(inner.name == "scf.for" for op in module.walk() if op.name == "scf.for"
                   for inner in op.walk() if inner is not op)
    a, b, c = _run_persistent(module, m, n, k, sms)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c.astype(np.float64), want, atol=2e-2 * np.sqrt(k), rtol=1e-2)
