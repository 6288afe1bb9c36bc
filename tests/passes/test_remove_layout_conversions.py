"""tritongpu-remove-layout-conversions after tritongpu-coalesce: the final ttgir of the
reference kernels matches Triton 3.6's (shared/reference/triton-3.6-ir/ir_*.txt), conversions
that must stay stay, and the rewritten programs compute the same values (interpreter runs of
the ttgir against numpy)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.filecheck_util import check
from tests.passes.test_coalesce import (
    ADD,
    B1,
    B4,
    ROWSUM,
    SOFTMAX,
    TILE16,
    TRANSPOSED,
    compile_ttgir,
)
from workbench.backends.base import PointerArg
from workbench.backends.interpreter import interpret
from workbench.ir.parser import parse_module
from workbench.passes import ConvertToTTGIR, PassManager
from workbench.passes.coalesce import Coalesce
from workbench.passes.remove_layout_conversions import RemoveLayoutConversions


def final(text: str, num_warps: int = 4) -> str:
    return compile_ttgir(text, [Coalesce(), RemoveLayoutConversions()], num_warps)


def test_vector_add_is_triton_s_final_ttgir():
    # ir_add.txt: one #blocked with 4 fp32 per thread, no conversion; every op in it
    check(final(ADD), f"""
CHECK: #blocked = {B4}
CHECK-NOT: #blocked1
CHECK: %c1024_i32 = arith.constant 1024 : i32
CHECK-NEXT: %pid = tt.get_program_id x : i32
CHECK-NEXT: %offs = arith.muli %pid, %c1024_i32 : i32
CHECK-NEXT: %offs_0 = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : tensor<1024xi32, #blocked>
CHECK-NEXT: %offs_1 = tt.splat %offs : i32 -> tensor<1024xi32, #blocked>
CHECK-NEXT: %offs_2 = arith.addi %offs_1, %offs_0 : tensor<1024xi32, #blocked>
CHECK-NEXT: %mask = tt.splat %n_elements : i32 -> tensor<1024xi32, #blocked>
CHECK-NEXT: %mask_0 = arith.cmpi slt, %offs_2, %mask : tensor<1024xi32, #blocked>
CHECK-NEXT: %x = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
CHECK-NEXT: %x_0 = tt.addptr %x, %offs_2 : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
CHECK-NEXT: %x_1 = tt.load %x_0, %mask_0 : tensor<1024x!tt.ptr<f32>, #blocked>
CHECK-NEXT: %y = tt.splat %y_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
CHECK-NEXT: %y_0 = tt.addptr %y, %offs_2 : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
CHECK-NEXT: %y_1 = tt.load %y_0, %mask_0 : tensor<1024x!tt.ptr<f32>, #blocked>
CHECK-NEXT: %0 = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
CHECK-NEXT: %1 = tt.addptr %0, %offs_2 : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
CHECK-NEXT: %2 = arith.addf %x_1, %y_1 : tensor<1024xf32, #blocked>
CHECK-NEXT: tt.store %1, %2, %mask_0 : tensor<1024x!tt.ptr<f32>, #blocked>
CHECK-NEXT: tt.return
CHECK-NOT: ttg.convert_layout
""")  # noqa: E501


def test_softmax_keeps_one_element_per_thread():
    out = final(SOFTMAX)
    check(out, f"""
CHECK: #blocked = {B1}
CHECK-NOT: #blocked1
CHECK: %x_4 = tt.load %x_3, %mask_0, %x : tensor<1024x!tt.ptr<f32>, #blocked>
CHECK: "tt.reduce"(%x_4) <{{axis = 0 : i32}}>
CHECK: math.exp
CHECK: tt.store %3, %5, %mask_0 : tensor<1024x!tt.ptr<f32>, #blocked>
""")
    assert "ttg.convert_layout" not in out


def test_rowsum_is_triton_s_final_ttgir():
    # ir_rowsum.txt: the load's 1x4 layout everywhere in 2-D, the reduce in its slice, the
    # 64-element store in a 1-D layout fed by the one conversion Triton keeps too
    check(final(ROWSUM), """
CHECK: #blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
CHECK-NEXT: #blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
CHECK-NOT: #blocked2
CHECK: arith.constant dense<128> : tensor<64x1xi32, #blocked>
CHECK-NEXT: %om = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #blocked1>
CHECK-NEXT: %[[R:.*]] = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
CHECK-NEXT: tt.expand_dims %[[R]] {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xi32, #blocked>
CHECK-NEXT: arith.muli {{.*}} : tensor<64x1xi32, #blocked>
CHECK-NEXT: tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x1x!tt.ptr<f32>, #blocked>
CHECK-NEXT: tt.addptr {{.*}} : tensor<64x1x!tt.ptr<f32>, #blocked>, tensor<64x1xi32, #blocked>
CHECK-NEXT: tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
CHECK-NEXT: tt.expand_dims {{.*}} {axis = 0 : i32} : tensor<128xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x128xi32, #blocked>
CHECK-NEXT: tt.broadcast {{.*}} : tensor<64x1x!tt.ptr<f32>, #blocked> -> tensor<64x128x!tt.ptr<f32>, #blocked>
CHECK-NEXT: tt.broadcast {{.*}} : tensor<1x128xi32, #blocked> -> tensor<64x128xi32, #blocked>
CHECK-NEXT: tt.addptr {{.*}} : tensor<64x128x!tt.ptr<f32>, #blocked>, tensor<64x128xi32, #blocked>
CHECK-NEXT: %[[X:.*]] = tt.load {{.*}} : tensor<64x128x!tt.ptr<f32>, #blocked>
CHECK-NEXT: %s = "tt.reduce"(%[[X]]) <{axis = 1 : i32}>
CHECK: }) : (tensor<64x128xf32, #blocked>) -> tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
CHECK-NEXT: %[[OP:.*]] = tt.splat %o_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #blocked1>
CHECK-NEXT: %[[OA:.*]] = tt.addptr %[[OP]], %om : tensor<64x!tt.ptr<f32>, #blocked1>, tensor<64xi32, #blocked1>
CHECK-NEXT: %[[V:.*]] = ttg.convert_layout %s : tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64xf32, #blocked1>
CHECK-NEXT: tt.store %[[OA]], %[[V]] : tensor<64x!tt.ptr<f32>, #blocked1>
CHECK-NOT: ttg.convert_layout
""")  # noqa: E501


def test_fp16_tile_is_one_1x8_layout_without_conversions():
    out = final(TILE16)
    check(out, """
CHECK: #blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
CHECK-NOT: #blocked1
CHECK: tt.load {{.*}} : tensor<64x64x!tt.ptr<f16>, #blocked>
CHECK: arith.mulf {{.*}} : tensor<64x64xf16, #blocked>
CHECK: tt.store {{.*}} : tensor<64x64x!tt.ptr<f16>, #blocked>
""")  # noqa: E501
    assert "ttg.convert_layout" not in out


def test_column_major_tile_keeps_its_own_order():
    out = final(TRANSPOSED)
    check(out, """
CHECK: #blocked = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
CHECK-NOT: #blocked1
""")  # noqa: E501
    assert "ttg.convert_layout" not in out


# x[r, c] + y[c, r]: the two loads want different orders; one conversion must stay
CONFLICT = """\
module {
  tt.func public @xt(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %o_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %c64r = arith.constant dense<64> : tensor<64x1xi32>
    %c64c = arith.constant dense<64> : tensor<1x64xi32>
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %rows = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %cols = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %rs = arith.muli %rows, %c64r : tensor<64x1xi32>
    %cs = arith.muli %cols, %c64c : tensor<1x64xi32>
    %a = tt.broadcast %rs : tensor<64x1xi32> -> tensor<64x64xi32>
    %b = tt.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
    %rm = arith.addi %a, %b : tensor<64x64xi32>
    %a2 = tt.broadcast %rows : tensor<64x1xi32> -> tensor<64x64xi32>
    %b2 = tt.broadcast %cs : tensor<1x64xi32> -> tensor<64x64xi32>
    %cm = arith.addi %a2, %b2 : tensor<64x64xi32>
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
    %xp = tt.addptr %xs, %rm : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xi32>
    %x = tt.load %xp : tensor<64x64x!tt.ptr<f32>>
    %ys = tt.splat %y_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
    %yp = tt.addptr %ys, %cm : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xi32>
    %y = tt.load %yp : tensor<64x64x!tt.ptr<f32>>
    %s = arith.addf %x, %y : tensor<64x64xf32>
    %os = tt.splat %o_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
    %op = tt.addptr %os, %rm : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xi32>
    tt.store %op, %s : tensor<64x64x!tt.ptr<f32>>
    tt.return
  }
}
"""  # noqa: E501


def test_conflicting_layouts_keep_exactly_one_conversion():
    out = final(CONFLICT)
    check(out, """
CHECK: #blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
CHECK-NEXT: #blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
CHECK: %x = tt.load {{.*}} : tensor<64x64x!tt.ptr<f32>, #blocked>
CHECK: %y = tt.load {{.*}} : tensor<64x64x!tt.ptr<f32>, #blocked1>
CHECK-NEXT: %[[C:.*]] = ttg.convert_layout %y : tensor<64x64xf32, #blocked1> -> tensor<64x64xf32, #blocked>
CHECK-NEXT: %s = arith.addf %x, %[[C]] : tensor<64x64xf32, #blocked>
CHECK: tt.store {{.*}}, %s : tensor<64x64x!tt.ptr<f32>, #blocked>
""")  # noqa: E501
    assert out.count("ttg.convert_layout") == 1


LOOP = """\
module {
  tt.func public @colsum(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %o_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32) attributes {noinline = false} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c512 = arith.constant dense<512> : tensor<512xi32>
    %z = arith.constant dense<0.000000e+00> : tensor<512xf32>
    %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
    %xs = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>>
    %p0 = tt.addptr %xs, %r : tensor<512x!tt.ptr<f32>>, tensor<512xi32>
    %res, %pend = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z, %p = %p0) -> (tensor<512xf32>, tensor<512x!tt.ptr<f32>>) : i32 {
      %v = tt.load %p : tensor<512x!tt.ptr<f32>>
      %acc2 = arith.addf %acc, %v : tensor<512xf32>
      %p2 = tt.addptr %p, %c512 : tensor<512x!tt.ptr<f32>>, tensor<512xi32>
      scf.yield %acc2, %p2 : tensor<512xf32>, tensor<512x!tt.ptr<f32>>
    }
    %os = tt.splat %o_ptr : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>>
    %op = tt.addptr %os, %r : tensor<512x!tt.ptr<f32>>, tensor<512xi32>
    tt.store %op, %res : tensor<512x!tt.ptr<f32>>
    tt.return
  }
}
"""  # noqa: E501


def test_loop_carries_accumulator_and_pointer_in_the_coalesced_layout():
    # the accumulator takes the load's layout through the yield; the pointer advanced by a
    # constant is carried in it too: no conversion inside (or outside) the loop
    out = final(LOOP)
    check(out, f"""
CHECK: #blocked = {B4}
CHECK-NOT: #blocked1
CHECK: %res:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z, %p = %p0) -> (tensor<512xf32, #blocked>, tensor<512x!tt.ptr<f32>, #blocked>) : i32 {{
CHECK-NEXT: %v = tt.load %p : tensor<512x!tt.ptr<f32>, #blocked>
CHECK-NEXT: %acc2 = arith.addf %acc, %v : tensor<512xf32, #blocked>
CHECK-NEXT: %p2 = tt.addptr %p, %c512 : tensor<512x!tt.ptr<f32>, #blocked>, tensor<512xi32, #blocked>
CHECK-NEXT: scf.yield %acc2, %p2
CHECK: tt.store %op, %res#0 : tensor<512x!tt.ptr<f32>, #blocked>
""")  # noqa: E501
    assert "ttg.convert_layout" not in out


# --- the rewritten programs compute the same values ----------------------------------------

def _parg(a: np.ndarray) -> PointerArg:
    addr = a.ctypes.data
    return PointerArg(addr, addr, addr + a.nbytes, a.itemsize, a)


def _run(text: str, grid, args, passes=True):
    m = parse_module(text)
    ps = [ConvertToTTGIR(num_warps=4)] + ([Coalesce(), RemoveLayoutConversions()] if passes
                                          else [])
    PassManager(ps, verify=True).run(m)
    interpret(m, grid, [_parg(a) if isinstance(a, np.ndarray) else a for a in args])


@pytest.fixture
def rng():
    return np.random.default_rng(5)


def test_values_add_softmax(rng):
    n = 2500
    x, y = rng.random(3072, dtype=np.float32), rng.random(3072, dtype=np.float32)
    o = np.full(3072, np.nan, np.float32)
    _run(ADD, (3,), [x, y, o, n])
    np.testing.assert_array_equal(o[:n], x[:n] + y[:n])
    assert np.isnan(o[n:]).all()
    rows, cols = 3, 1000
    a = rng.standard_normal((rows, 1003), dtype=np.float32)
    out = np.full((rows, 1001), np.nan, np.float32)
    _run(SOFTMAX, (rows,), [out, a, 1003, 1001, cols])
    e = np.exp(a[:, :cols] - a[:, :cols].max(axis=1, keepdims=True))
    np.testing.assert_allclose(out[:, :cols], e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_values_rowsum_tile_conflict_loop(rng):
    x = rng.random((64, 128), dtype=np.float32)
    o = np.full(64, np.nan, np.float32)
    _run(ROWSUM, (1,), [x, o])
    np.testing.assert_allclose(o, x.sum(axis=1), rtol=1e-5)
    h = rng.random((64, 64)).astype(np.float16)
    ho = np.zeros((64, 80), np.float16)
    _run(TILE16, (1,), [h, ho, 80])
    np.testing.assert_array_equal(ho[:, :64], h * np.float16(2))
    xa, ya = rng.random((64, 64), dtype=np.float32), rng.random((64, 64), dtype=np.float32)
    oa = np.full((64, 64), np.nan, np.float32)
    _run(CONFLICT, (1,), [xa, ya, oa])
    np.testing.assert_array_equal(oa, xa + ya.T)
    la = rng.random((5, 512), dtype=np.float32)
    lo = np.full(512, np.nan, np.float32)
    _run(LOOP, (1,), [la, lo, 5])
    np.testing.assert_allclose(lo, la.sum(axis=0), rtol=1e-5)


# --- end to end: the CUDA backend's ttgir pipeline, PTX and ptxas -------------------------

def _cuda(text: str, target: str):
    from workbench.backends.cuda import CudaBackend
    from workbench.config import CompileContext, Options, Target
    be = CudaBackend(Target.parse(target))
    res = be.compile(parse_module(text), None, Options(num_warps=4), CompileContext())
    return be, {s.name: s.text for s in res.stages}


def test_vector_add_ptx_uses_128_bit_accesses():
    _, st = _cuda(ADD, "cuda:90")
    assert "ttg.convert_layout" not in st["ttgir"] and "sizePerThread = [4]" in st["ttgir"]
    ptx = st["ptx"]
    assert ptx.count("ld.global.v4.b32") == 4  # 2 loads x 2 repetitions of the 512-wide tile
    assert ptx.count("st.global.v4.b32") == 2


def test_softmax_with_a_runtime_stride_stays_scalar_in_ptx():
    _, st = _cuda(SOFTMAX, "cuda:90")
    assert "ld.global.v4" not in st["ptx"] and "sizePerThread = [1]" in st["ttgir"]


@pytest.mark.parametrize("name,target", [
    ("ADD", "cuda:80"), ("SOFTMAX", "cuda:90"), ("ROWSUM", "cuda:90"), ("TILE16", "cuda:80"),
    ("TILE16", "cuda:90"), ("CONFLICT", "cuda:90"), ("LOOP", "cuda:90")])
def test_kernels_assemble_with_ptxas(name, target):
    be, st = _cuda(globals()[name], target)
    if name == "TILE16":  # 8 halves per thread: one 128-bit load and store per row chunk
        assert "ld.global.v4.b32" in st["ptx"] and "st.global.v4.b32" in st["ptx"]
    if not be.ptxas:
        pytest.skip("ptxas not installed")
    assert "cubin" in st
