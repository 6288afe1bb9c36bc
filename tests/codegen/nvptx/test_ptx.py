"""PTX for sm_80 and sm_90 of the sample kernels (hand-built ttgir,
:mod:`workbench.codegen.nvptx.samples`), checked as text and assembled by ptxas when it is
installed."""
from __future__ import annotations

import re

import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends import nvidia_tools
from workbench.codegen.nvptx import compile_ttgir, samples
from workbench.ir.types import bf16, f16, f32, i8, i32

PTXAS = nvidia_tools.find_tool("ptxas")

KERNELS = {
    "add": lambda: samples.vector_add(),
    "add_v4": lambda: samples.vector_add(vec=4, n_div16=True),
    "add_f16_v8": lambda: samples.vector_add(vec=8, n_div16=True, dtype=f16),
    "bcast": lambda: samples.broadcast_tile(),
    "sum_axis1": lambda: samples.reduce_2d(axis=1, kind="sum"),
    "max_axis0": lambda: samples.reduce_2d(axis=0, kind="max"),
    "sum_axis1_rowwarps": lambda: samples.reduce_2d(m=128, n=64, axis=1, num_warps=8),
    "softmax": lambda: samples.softmax(),
    "casts": lambda: samples.casts(),
    "casts_int": lambda: samples.casts(src=f32, chain=[("arith.fptosi", i32),
                                                       ("arith.trunci", i8),
                                                       ("arith.extsi", i32),
                                                       ("arith.sitofp", bf16)]),
}


def count(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx))


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_ptx_compiles_and_assembles(name, arch):
    out = compile_ttgir(KERNELS[name](), arch=arch)
    ptx = out.ptx
    target = "sm_90a" if arch == 90 else "sm_80"
    assert re.search(rf"^\.target {target}$", ptx, re.M), "no debug flag on .target"
    assert f".visible .entry {out.name}(" in ptx
    assert ".reqntid 128" in ptx or ".reqntid 256" in ptx
    assert re.search(r"^\s*\.loc\s+1 \d+ \d+", ptx, re.M), "PTX carries .loc lines"
    if PTXAS:
        cubin, report = nvidia_tools.assemble(ptx, arch, PTXAS)
        assert cubin[:4] == b"\x7fELF"
        assert report.n_regs and report.n_regs > 0
        assert report.n_spills == 0


def test_vector_add_structure_matches_triton():
    ptx = compile_ttgir(samples.vector_add(vec=4, n_div16=True), arch=90).ptx
    # reference: triton 3.6 add_kernel, 1024 fp32, 4 warps: 4 x ld.global.v4.b32, 2 x st
    assert count(ptx, r"@%p\d+ ld\.global\.v4\.b32") == 4
    assert count(ptx, r"@%p\d+ st\.global\.v4\.b32") == 2
    assert ".reqntid 128" in ptx
    assert "%tid.x" in ptx and "%ctaid.x" in ptx
    scalar = compile_ttgir(samples.vector_add(), arch=90).ptx
    # default layout (sizePerThread 1) and a mask of unknown alignment: scalar accesses,
    # 8 registers per thread
    assert count(scalar, r"ld\.global\.b32") == 16
    assert count(scalar, r"st\.global\.b32") == 8


def test_f16_vectors_pack_pairs():
    ptx = compile_ttgir(samples.vector_add(vec=8, n_div16=True, dtype=f16), arch=80).ptx
    assert count(ptx, r"ld\.global\.v4\.b32") == 2  # 8 halves = 16 bytes per access
    # "add.f16": fusable into fma (enable_fp_fusion, the default); ".rn": not fusable
    assert re.search(r"add(\.rn)?\.f16(x2)?\s", ptx)


def test_row_reduction_shuffles_and_cross_warp_barriers():
    out = compile_ttgir(samples.reduce_2d(axis=1, kind="sum"), arch=90)
    # default layout for 64x128 and 4 warps: threadsPerWarp [1, 32], warpsPerCTA [1, 4]:
    # 64 rows per thread, 5 butterfly rounds each; warps span the axis -> shared + barriers
    assert count(out.ptx, r"shfl\.sync\.bfly\.b32") == 64 * 5
    assert count(out.ptx, r"bar\.sync") >= 2
    assert out.shared == 64 * 4 * 4  # 64 rows x 4 warps x 4 bytes (convert reuses it)
    assert ".extern .shared .align 16 .b8 global_smem[];" in out.ptx


def test_column_reduction_stays_in_registers_when_warps_do_not_span_axis():
    out = compile_ttgir(samples.reduce_2d(axis=0, kind="max"), arch=90)
    # axis 0 has one thread per row and no warps: only in-thread combines, no shuffles
    assert count(out.ptx, r"shfl\.sync") == 0
    assert "max.f32" in out.ptx or "max.NaN.f32" in out.ptx


def test_softmax_uses_triton_math():
    out = compile_ttgir(samples.softmax(), arch=90)
    ptx = out.ptx
    assert count(ptx, r"shfl\.sync\.bfly\.b32") == 10   # max and sum: 5 rounds each
    # one inside each cross-warp reduction, one between the first's reads of its scratch and
    # the second's writes (both reuse the same bytes): membar places no other
    assert count(ptx, r"bar\.sync") == 3
    assert count(ptx, r"ex2\.approx\.f32") == 8         # exp = ex2(x * log2 e), 8 regs
    assert "0f3FB8AA3B" in ptx                           # log2(e) as an fp32 literal
    assert count(ptx, r"div\.full\.f32") == 8
    assert re.search(r"mov.b32\s+%r\d+, -8388608;", ptx) or "0fFF800000" in ptx  # other = -inf bits
    assert out.shared == 16


def test_casts_use_cvt():
    ptx = compile_ttgir(samples.casts(), arch=80).ptx
    assert "cvt.rn.f16.f32" in ptx
    assert "cvt.f32.f16" in ptx
    assert "cvt.rn.bf16.f32" in ptx
    assert "cvt.rzi.s32.f32" in ptx
    assert "cvt.rn.f32.s32" in ptx


def test_llir_has_kernel_metadata_and_debug_locations():
    out = compile_ttgir(samples.vector_add(), arch=90)
    assert "define ptx_kernel void @add_kernel(" in out.llir
    assert "reqntidx" in out.llir or '"nvvm.reqntid"="128"' in out.llir
    assert "!DILocation(" in out.llir
    assert "llvm.nvvm.read.ptx.sreg.tid.x" in out.llir


@pytest.mark.parametrize("arch", [80, 90])
def test_shared_addresses_are_32_bit_as_in_triton(arch):
    """Triton's data layout (``p3:32:32``: ``nvptx-short-ptr``) makes every shared-memory
    address one 32-bit register; the column reduction goes through shared memory."""
    out = compile_ttgir(samples.reduce_2d(axis=0, kind="max", m=64, n=64, num_warps=8),
                        arch=arch)
    assert re.search(r'target datalayout = "e-p3:32:32-p4:32:32-p5:32:32-', out.llir)
    shared = re.findall(r"(?:st|ld)\.shared[.\w]*\s+(?:\[(%\w+)|\S+, \[(%\w+))", out.ptx)
    assert shared
    regs = {a or b for a, b in shared}
    assert all(r.startswith("%r") and not r.startswith("%rd") for r in regs), regs


def _rows_sum_kernel(x_ptr, out_ptr, ld, n_steps, BM: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    ptrs = x_ptr + rm[:, None] * ld + rk[None, :]
    acc = tl.zeros((BM, BK), dtype=tl.float16)
    for _ in range(n_steps):
        acc += tl.load(ptrs)
        ptrs += BK
    tl.store(out_ptr + rm[:, None] * BK + rk[None, :], acc)


@pytest.mark.parametrize("arch", [80, 90])
def test_a_loop_of_run_time_trip_count_stays_rolled_as_in_triton(arch):
    """Triton's -O3 runs without the NVPTX cost model, which would unroll this small loop by
    its run-time trip count (two loads in the body, one in a remainder): one load, as
    Triton's PTX has."""
    ck = wb.compile(wb.jit(_rows_sum_kernel), "*fp16:16", "*fp16:16", "i32:16", "i32",
                    target=f"cuda:{arch}", num_warps=8, BM=32, BK=64)
    assert "llvm.loop.unroll.runtime.disable" in ck.asm["llir"]
    assert len(re.findall(r"ld\.global\.v4\.b32", ck.asm["ptx"])) == 1


def _fma_kernel(x_ptr, y_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.math.exp2(x * y - 1.5))


@pytest.mark.parametrize("fusion", [True, False])
def test_fp_fusion_option_and_exp2(fusion):
    """enable_fp_fusion (the default, as in Triton) lets x * y - c become fma.rn.f32; off, the
    multiply and the subtraction stay separate and unfusable (.rn); exp2 is Triton's
    ex2.approx.ftz.f32."""
    c = wb.compile(wb.jit(_fma_kernel), "*fp32:16", "*fp32:16", "*fp32:16", target="cuda:90",
                   BLOCK=128, enable_fp_fusion=fusion)
    ptx = c.asm["ptx"]
    assert ("fma.rn.f32" in ptx) == fusion
    assert ("mul.rn.f32" in ptx) == (not fusion)
    assert "ex2.approx.ftz.f32" in ptx
