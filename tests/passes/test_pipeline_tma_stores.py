"""The TMA-store step of tritongpu-pipeline (:mod:`workbench.passes.pipeline_tma_stores`): a
tensor-descriptor store in a loop of more than one stage writes one buffer allocated before
the loop and waits for the previous copy before writing it, as Triton 3.6's
``pipelineTMAStores``; stores outside loops, in loops of one stage and through descriptors
made in the loop keep the lowering that waits right after the copy. The PTX (sm_90) writes
the buffer with ``stmatrix`` after ``cp.async.bulk.wait_group.read 0`` and assembles."""
from __future__ import annotations

import re

import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.nvidia_tools import assemble, find_tool
from workbench.testing.examples import matmul_persistent_tma_kernel

from .test_tma_lowering import op_lines

DESC = "tensordesc<fp16[{}, {}]>"


def _persistent(bm=128, bn=256, bk=64, warps=8, stages=3):
    sig = (DESC.format(bm, bk), DESC.format(bn, bk), DESC.format(bm, bn), "i32", "i32", "i32")
    return wb.compile(matmul_persistent_tma_kernel, *sig, target="cuda:90", num_warps=warps,
                      num_stages=stages, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
                      GROUP_SIZE_M=8, NUM_SMS=132)


def _outer_body(ttgir: str) -> tuple[list, list, list]:
    """Op lines before the outer ``scf.for``, inside it after its inner loop, and after it."""
    lines = op_lines(ttgir)
    start = next(i for i, x in enumerate(lines) if x.startswith("scf.for"))
    close = max(i for i, x in enumerate(lines) if x.startswith("ttng.async_tma_store_wait")) - 1
    assert lines[close] == "}"
    return lines[:start], lines[start:close], lines[close:]


def test_persistent_matmul_store_uses_one_buffer_before_the_tile_loop():
    k = _persistent()
    before, body, after = _outer_body(k.asm["ttgir"])
    tile = "!ttg.memdesc<128x256xf16, #shared, #smem, mutable>"
    assert before[-1] == f"%v = ttg.local_alloc : () -> {tile}"
    tail = body[body.index("ttng.async_tma_store_wait {pendings = 0 : i32}"):]
    assert tail[:4] == [
        "ttng.async_tma_store_wait {pendings = 0 : i32}",
        f"ttg.local_store %v, %v : tensor<128x256xf16, #mma> -> {tile}",
        "ttng.fence_async_shared {bCluster = false}",
        "ttng.async_tma_copy_local_to_global %v[%v, %v] %v : !tt.tensordesc<tensor<128x256xf16, "
        f"#shared>>, {tile}"]
    assert tail[4:] == []                         # nothing waits after the copy in the loop
    assert after[1:3] == ["ttng.async_tma_store_wait {pendings = 0 : i32}",
                          f"ttg.local_dealloc %v : {tile}"]
    # the buffer lives over the whole loop: pipeline slots (3 x (128 + 256) x 64 fp16), the
    # 64 KiB output tile and 3 mbarriers; Triton 3.6 reports the same 213,016 bytes
    assert k.metadata.shared == 3 * (128 + 256) * 64 * 2 + 128 * 256 * 2 + 24
    assert f"ttg.shared = {k.metadata.shared} : i32" in k.asm["ttgir"]


def test_ptx_waits_for_the_previous_copy_then_writes_with_stmatrix():
    ptx = _persistent().asm["ptx"]
    wait = ptx.index("cp.async.bulk.wait_group.read 0")
    first_st = ptx.index("stmatrix.sync.aligned")
    store = ptx.index("cp.async.bulk.tensor.2d.global.shared::cta")
    assert wait < first_st < store
    assert ptx.count("cp.async.bulk.wait_group.read 0") == 2  # in the loop and after it
    ptxas = find_tool("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed (the sass extra): the PTX was not assembled")
    cubin, report = assemble(ptx, 90, ptxas)
    assert cubin and report.n_spills == 0


@wb.jit
def _two_stores(x_desc, y_desc, z_desc, n, B: tl.constexpr, STAGES: tl.constexpr):
    for i in tl.range(0, n, num_stages=STAGES):
        x = x_desc.load([i * B, 0])
        y_desc.store([i * B, 0], x + 1.0)
        if i % 2 == 0:
            y_desc.store([i * B, B], x * 2.0)     # same shape and type: the same buffer
        z_desc.store([i * B, 0], tl.sum(x, axis=1)[:, None] + tl.zeros((B, 2 * B), tl.float32))


def _two_stores_ttgir(stages: int) -> str:
    sig = (DESC.replace("fp16", "fp32").format(64, 64),) * 2 + \
          (DESC.replace("fp16", "fp32").format(64, 128), "i32")
    return wb.compile(_two_stores, *sig, target="cuda:90", num_warps=4, B=64,
                      STAGES=stages).asm["ttgir"]


def test_stores_of_one_shape_share_a_buffer_and_others_get_their_own():
    lines = op_lines(_two_stores_ttgir(3))
    loop = next(i for i, x in enumerate(lines) if x.startswith("scf.for"))
    allocs = [x for x in lines[:loop] if x.startswith("%v = ttg.local_alloc : ()")]
    assert [re.search(r"memdesc<(\w+)", a).group(1) for a in allocs] == ["64x64xf32",
                                                                         "64x128xf32"]
    body = lines[loop:]
    assert body.count("ttng.async_tma_store_wait {pendings = 0 : i32}") == 4  # 3 + after
    assert sum(x.startswith("ttg.local_store") for x in body) == 3
    assert sum(x.startswith("ttg.local_dealloc") for x in body) == 2
    assert not any(x.startswith("%v = ttg.local_alloc %v") for x in body)


def test_a_loop_of_one_stage_keeps_the_waiting_store():
    lines = op_lines(_two_stores_ttgir(1))
    assert not any(x.startswith("ttg.local_store") for x in lines)
    assert sum(x.startswith("%v = ttg.local_alloc %v") for x in lines) == 3


@wb.jit
def _store_outside_loop(x_desc, y_desc, n, B: tl.constexpr):
    acc = tl.zeros((B, B), tl.float32)
    for i in range(n):
        acc += x_desc.load([i * B, 0])
    y_desc.store([0, 0], acc)


@wb.jit
def _descriptor_made_in_loop(x_ptr, y_ptr, n, B: tl.constexpr):
    for i in range(n):
        yd = tl.make_tensor_descriptor(y_ptr, [(i + 1) * B, B], [B, 1], [B, B])  # per i
        yd.store([i * B, 0], tl.load(x_ptr + tl.arange(0, B)[:, None] * B
                                 + tl.arange(0, B)[None, :]))


def test_stores_outside_loops_and_through_descriptors_made_in_the_loop_are_left_alone():
    f32 = DESC.replace("fp16", "fp32").format(32, 32)
    a = wb.compile(_store_outside_loop, f32, f32, "i32", target="cuda:90", B=32).asm["ttgir"]
    b = wb.compile(_descriptor_made_in_loop, "*fp32:16", "*fp32:16", "i32", target="cuda:90",
                   B=32).asm["ttgir"]
    for text in (a, b):
        lines = op_lines(text)
        assert not any(x.startswith(("ttg.local_store", "ttg.local_dealloc")) for x in lines)
        i = next(i for i, x in enumerate(lines) if x.startswith("ttng.async_tma_copy_local"))
        assert lines[i + 1] == "ttng.async_tma_store_wait {pendings = 0 : i32}"


def test_persistent_matmul_agrees_with_triton():
    pytest.importorskip("triton", reason="Triton 3.6 (the triton extra) is the oracle here")
    sig = (DESC.format(128, 64), DESC.format(256, 64), DESC.format(128, 256), "i32", "i32",
           "i32")
    c = wb.compare(matmul_persistent_tma_kernel, *sig, target="cuda:90", num_warps=8,
                   num_stages=3, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64,
                   GROUP_SIZE_M=8, NUM_SMS=132)
    assert c.differences == []
    assert c.ours_shared == c.theirs_shared == 213016
    for text in (c.ours["ttgir"], c.theirs["ttgir"]):
        lines = op_lines(text)
        i = lines.index("ttng.async_tma_store_wait {pendings = 0 : i32}")
        assert lines[i + 1].startswith("ttg.local_store")
