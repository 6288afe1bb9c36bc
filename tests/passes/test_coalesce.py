"""tritongpu-coalesce: per load/store blocked layouts from AxisInfo, with conversions around
each memory op exactly as Triton's pass leaves them (compare Triton 3.6's ir_*.txt)."""
from __future__ import annotations

import pytest

from tests.filecheck_util import check
from workbench.ir.core import functions
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.ir.verifier import verify
from workbench.passes import ConvertToTTGIR, PassManager
from workbench.passes.axis_info import AxisInfoAnalysis
from workbench.passes.coalesce import (
    Coalesce,
    coalesced_encoding,
    elems_per_thread,
    order_from_contiguity,
)

# TTIR of the reference kernels as our frontend emits them (after canonicalize/cse/dce).
ADD = """\
module {
  tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %y_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %out_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n_elements: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %c1024_i32 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %offs = arith.muli %pid, %c1024_i32 : i32
    %offs_0 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %offs_1 = tt.splat %offs : i32 -> tensor<1024xi32>
    %offs_2 = arith.addi %offs_1, %offs_0 : tensor<1024xi32>
    %mask = tt.splat %n_elements : i32 -> tensor<1024xi32>
    %mask_0 = arith.cmpi slt, %offs_2, %mask : tensor<1024xi32>
    %x = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %x_0 = tt.addptr %x, %offs_2 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %x_1 = tt.load %x_0, %mask_0 : tensor<1024x!tt.ptr<f32>>
    %y = tt.splat %y_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %y_0 = tt.addptr %y, %offs_2 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %y_1 = tt.load %y_0, %mask_0 : tensor<1024x!tt.ptr<f32>>
    %0 = tt.splat %out_ptr : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %1 = tt.addptr %0, %offs_2 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %2 = arith.addf %x_1, %y_1 : tensor<1024xf32>
    tt.store %1, %2, %mask_0 : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}
"""  # noqa: E501

SOFTMAX = """\
module {
  tt.func public @softmax_kernel(%out_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %in_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %in_stride: i32, %out_stride: i32, %n_cols: i32) attributes {noinline = false} {
    %x = arith.constant dense<0xFF800000> : tensor<1024xf32>
    %row = tt.get_program_id x : i32
    %cols = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %mask = tt.splat %n_cols : i32 -> tensor<1024xi32>
    %mask_0 = arith.cmpi slt, %cols, %mask : tensor<1024xi32>
    %x_0 = arith.muli %row, %in_stride : i32
    %x_1 = tt.addptr %in_ptr, %x_0 : !tt.ptr<f32>, i32
    %x_2 = tt.splat %x_1 : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %x_3 = tt.addptr %x_2, %cols : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %x_4 = tt.load %x_3, %mask_0, %x : tensor<1024x!tt.ptr<f32>>
    %x_5 = "tt.reduce"(%x_4) <{axis = 0 : i32}> ({
    ^bb0(%x_6: f32, %x_7: f32):
      %x_8 = arith.maxnumf %x_6, %x_7 : f32
      tt.reduce.return %x_8 : f32
    }) : (tensor<1024xf32>) -> f32
    %x_9 = tt.splat %x_5 : f32 -> tensor<1024xf32>
    %x_10 = arith.subf %x_4, %x_9 : tensor<1024xf32>
    %num = math.exp %x_10 : tensor<1024xf32>
    %den = "tt.reduce"(%num) <{axis = 0 : i32}> ({
    ^bb0(%den_0: f32, %den_1: f32):
      %den_2 = arith.addf %den_0, %den_1 : f32
      tt.reduce.return %den_2 : f32
    }) : (tensor<1024xf32>) -> f32
    %0 = arith.muli %row, %out_stride : i32
    %1 = tt.addptr %out_ptr, %0 : !tt.ptr<f32>, i32
    %2 = tt.splat %1 : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %3 = tt.addptr %2, %cols : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %4 = tt.splat %den : f32 -> tensor<1024xf32>
    %5 = arith.divf %num, %4 : tensor<1024xf32>
    tt.store %3, %5, %mask_0 : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}
"""  # noqa: E501

ROWSUM = """\
module {
  tt.func public @rowsum(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %o_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %x = arith.constant dense<128> : tensor<64x1xi32>
    %om = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %x_0 = tt.expand_dims %om {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %x_1 = arith.muli %x_0, %x : tensor<64x1xi32>
    %x_2 = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x1x!tt.ptr<f32>>
    %x_3 = tt.addptr %x_2, %x_1 : tensor<64x1x!tt.ptr<f32>>, tensor<64x1xi32>
    %x_4 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %x_5 = tt.expand_dims %x_4 {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
    %x_6 = tt.broadcast %x_3 : tensor<64x1x!tt.ptr<f32>> -> tensor<64x128x!tt.ptr<f32>>
    %x_7 = tt.broadcast %x_5 : tensor<1x128xi32> -> tensor<64x128xi32>
    %x_8 = tt.addptr %x_6, %x_7 : tensor<64x128x!tt.ptr<f32>>, tensor<64x128xi32>
    %x_9 = tt.load %x_8 : tensor<64x128x!tt.ptr<f32>>
    %s = "tt.reduce"(%x_9) <{axis = 1 : i32}> ({
    ^bb0(%s_0: f32, %s_1: f32):
      %s_2 = arith.addf %s_0, %s_1 : f32
      tt.reduce.return %s_2 : f32
    }) : (tensor<64x128xf32>) -> tensor<64xf32>
    %0 = tt.splat %o_ptr : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %1 = tt.addptr %0, %om : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.store %1, %s : tensor<64x!tt.ptr<f32>>
    tt.return
  }
}
"""  # noqa: E501

TILE16 = """\
module {
  tt.func public @tile16(%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %o_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %ld: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %x = arith.constant dense<64> : tensor<64x1xi32>
    %cst = arith.constant dense<2.000000e+00> : tensor<64x64xf16>
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %r_0 = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %c = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %x_0 = arith.muli %r_0, %x : tensor<64x1xi32>
    %x_1 = tt.splat %x_ptr : !tt.ptr<f16> -> tensor<64x1x!tt.ptr<f16>>
    %x_2 = tt.addptr %x_1, %x_0 : tensor<64x1x!tt.ptr<f16>>, tensor<64x1xi32>
    %x_3 = tt.broadcast %x_2 : tensor<64x1x!tt.ptr<f16>> -> tensor<64x64x!tt.ptr<f16>>
    %x_4 = tt.broadcast %c : tensor<1x64xi32> -> tensor<64x64xi32>
    %x_5 = tt.addptr %x_3, %x_4 : tensor<64x64x!tt.ptr<f16>>, tensor<64x64xi32>
    %x_6 = tt.load %x_5 : tensor<64x64x!tt.ptr<f16>>
    %0 = tt.splat %ld : i32 -> tensor<64x1xi32>
    %1 = arith.muli %r_0, %0 : tensor<64x1xi32>
    %2 = tt.splat %o_ptr : !tt.ptr<f16> -> tensor<64x1x!tt.ptr<f16>>
    %3 = tt.addptr %2, %1 : tensor<64x1x!tt.ptr<f16>>, tensor<64x1xi32>
    %4 = tt.broadcast %3 : tensor<64x1x!tt.ptr<f16>> -> tensor<64x64x!tt.ptr<f16>>
    %5 = tt.addptr %4, %x_4 : tensor<64x64x!tt.ptr<f16>>, tensor<64x64xi32>
    %6 = arith.mulf %x_6, %cst : tensor<64x64xf16>
    tt.store %5, %6 : tensor<64x64x!tt.ptr<f16>>
    tt.return
  }
}
"""  # noqa: E501

B4 = "#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
B1 = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"


def compile_ttgir(text: str, passes=None, num_warps: int = 4) -> str:
    """Parse TTIR ``text``, run convert-triton-to-tritongpu + ``passes`` with verification
    after every pass, print without locations."""
    m = parse_module(text)
    verify(m)
    PassManager([ConvertToTTGIR(num_warps=num_warps)] + list(passes or [Coalesce()]),
                verify=True).run(m)
    return print_module(m, locations=False)


def test_vector_add_gets_4_fp32_per_thread_and_conversions_around_memory_ops():
    out = compile_ttgir(ADD)
    check(out, f"""
CHECK: #blocked = {B1}
CHECK-NEXT: #blocked1 = {B4}
CHECK: %x_0 = tt.addptr %x, %offs_2 : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
CHECK-NEXT: %[[P:.*]] = ttg.convert_layout %x_0 : tensor<1024x!tt.ptr<f32>, #blocked> -> tensor<1024x!tt.ptr<f32>, #blocked1>
CHECK-NEXT: %[[M:.*]] = ttg.convert_layout %mask_0 : tensor<1024xi1, #blocked> -> tensor<1024xi1, #blocked1>
CHECK-NEXT: %[[X:.*]] = tt.load %[[P]], %[[M]] : tensor<1024x!tt.ptr<f32>, #blocked1>
CHECK-NEXT: %[[XB:.*]] = ttg.convert_layout %[[X]] : tensor<1024xf32, #blocked1> -> tensor<1024xf32, #blocked>
CHECK: tt.load {{{{.*}}}} : tensor<1024x!tt.ptr<f32>, #blocked1>
CHECK-NEXT: %[[YB:.*]] = ttg.convert_layout
CHECK: %[[S:.*]] = arith.addf %[[XB]], %[[YB]] : tensor<1024xf32, #blocked>
CHECK-NEXT: %[[OP:.*]] = ttg.convert_layout %{{{{.*}}}} : tensor<1024x!tt.ptr<f32>, #blocked> -> tensor<1024x!tt.ptr<f32>, #blocked1>
CHECK-NEXT: %[[SV:.*]] = ttg.convert_layout %[[S]] : tensor<1024xf32, #blocked> -> tensor<1024xf32, #blocked1>
CHECK-NEXT: %[[OM:.*]] = ttg.convert_layout %mask_0 : tensor<1024xi1, #blocked> -> tensor<1024xi1, #blocked1>
CHECK-NEXT: tt.store %[[OP]], %[[SV]], %[[OM]] : tensor<1024x!tt.ptr<f32>, #blocked1>
""")  # noqa: E501


def test_softmax_with_a_runtime_stride_stays_scalar():
    out = compile_ttgir(SOFTMAX)
    check(out, f"""
CHECK: #blocked = {B1}
CHECK-NOT: #blocked1
CHECK-NOT: ttg.convert_layout
CHECK: tt.load %x_3, %mask_0, %x : tensor<1024x!tt.ptr<f32>, #blocked>
CHECK: tt.store %3, %5, %mask_0 : tensor<1024x!tt.ptr<f32>, #blocked>
""")


def test_memory_ops_of_one_slice_share_the_widest_width_but_stores_keep_their_own():
    # in_stride divisible by 16: the load may use 4; the store (out_stride unknown) may not,
    # and as a store it is capped at its own width (no gaps in warp writes)
    text = SOFTMAX.replace("%in_stride: i32,", "%in_stride: i32 {tt.divisibility = 16 : i32},")
    check(compile_ttgir(text), f"""
CHECK: #blocked = {B1}
CHECK-NEXT: #blocked1 = {B4}
CHECK: tt.load {{{{.*}}}} : tensor<1024x!tt.ptr<f32>, #blocked1>
CHECK: tt.store {{{{.*}}}} : tensor<1024x!tt.ptr<f32>, #blocked>
""")
    # the other way round: the load is not aligned, the store is; the load takes the width of
    # the store in its slice (Triton's multi-root slice rule), the store keeps its own 4
    text = SOFTMAX.replace("%out_stride: i32,", "%out_stride: i32 {tt.divisibility = 16 : i32},")
    check(compile_ttgir(text), f"""
CHECK: #blocked1 = {B4}
CHECK: tt.load {{{{.*}}}} : tensor<1024x!tt.ptr<f32>, #blocked1>
CHECK: tt.store {{{{.*}}}} : tensor<1024x!tt.ptr<f32>, #blocked1>
""")


def test_rowsum_load_gets_1x4_and_the_small_store_stays_1():
    out = compile_ttgir(ROWSUM)
    check(out, """
CHECK: #blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
CHECK-NEXT: #blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
CHECK-NEXT: #blocked2 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
CHECK: %[[P:.*]] = ttg.convert_layout %x_8 : tensor<64x128x!tt.ptr<f32>, #blocked> -> tensor<64x128x!tt.ptr<f32>, #blocked2>
CHECK-NEXT: %[[X:.*]] = tt.load %[[P]] : tensor<64x128x!tt.ptr<f32>, #blocked2>
CHECK-NEXT: %[[XB:.*]] = ttg.convert_layout %[[X]] : tensor<64x128xf32, #blocked2> -> tensor<64x128xf32, #blocked>
CHECK-NEXT: "tt.reduce"(%[[XB]])
CHECK: tt.store {{.*}} : tensor<64x!tt.ptr<f32>, #blocked1>
""")  # noqa: E501


def test_fp16_tile_gets_8_halves_per_thread():
    out = compile_ttgir(TILE16)
    check(out, """
CHECK: #blocked1 = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
CHECK: tt.load {{.*}} : tensor<64x64x!tt.ptr<f16>, #blocked1>
CHECK: tt.store {{.*}} : tensor<64x64x!tt.ptr<f16>, #blocked1>
""")  # noqa: E501


def _func(text):
    m = parse_module(text)
    ConvertToTTGIR(num_warps=4).run(m)
    f = functions(m)[0]
    return f, AxisInfoAnalysis(f), [op for op in f.walk() if op.name in ("tt.load", "tt.store")]


def test_encoding_api_and_caps():
    f, an, (load, store) = _func(ROWSUM)
    assert order_from_contiguity(an.get(load.operands[0]).contiguity) == (1, 0)
    assert elems_per_thread(an, load, (1, 0)) == 4
    enc = coalesced_encoding(an, load, 4)
    assert (enc.size_per_thread, enc.threads_per_warp, enc.warps_per_cta) == \
        ((1, 4), (1, 32), (4, 1))
    # 64 elements for 128 threads: capped at 1 per thread although 16 bytes are aligned
    assert elems_per_thread(an, store, (0,)) == 4
    assert coalesced_encoding(an, store, 4).size_per_thread == (1,)
    # 8 warps: 8192 / 256 = 32 elements per thread, still 4 (128 bits)
    enc8 = coalesced_encoding(an, load, 8)
    assert (enc8.size_per_thread, enc8.threads_per_warp, enc8.warps_per_cta) == \
        ((1, 4), (1, 32), (8, 1))


@pytest.mark.parametrize("contig,order", [((1,), (0,)), ((1, 1), (0, 1)), ((64, 1), (0, 1)),
                                          ((1, 64), (1, 0)), ((4, 4, 1), (0, 1, 2)),
                                          ((1, 4, 1), (1, 0, 2)), ((1, 1, 8), (2, 0, 1))])
def test_order_from_contiguity(contig, order):
    assert order_from_contiguity(contig) == order


def test_small_block_is_capped_by_elements_per_thread():
    # 256 fp32 with 4 warps: 2 elements per thread
    text = ADD.replace("1024", "256")
    check(compile_ttgir(text), """
CHECK: #blocked1 = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
""")  # noqa: E501


TRANSPOSED = """\
module {
  tt.func public @tr(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %c = arith.constant dense<64> : tensor<1x64xi32>
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %rows = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %cols = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %cs = arith.muli %cols, %c : tensor<1x64xi32>
    %a = tt.broadcast %rows : tensor<64x1xi32> -> tensor<64x64xi32>
    %b = tt.broadcast %cs : tensor<1x64xi32> -> tensor<64x64xi32>
    %o = arith.addi %a, %b : tensor<64x64xi32>
    %s = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<64x64x!tt.ptr<f32>>
    %p = tt.addptr %s, %o : tensor<64x64x!tt.ptr<f32>>, tensor<64x64xi32>
    %v = tt.load %p : tensor<64x64x!tt.ptr<f32>>
    tt.store %p, %v : tensor<64x64x!tt.ptr<f32>>
    tt.return
  }
}
"""  # noqa: E501


def test_column_major_access_orders_dim_0_first():
    check(compile_ttgir(TRANSPOSED), """
CHECK: #blocked1 = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
CHECK: tt.load {{.*}} : tensor<64x64x!tt.ptr<f32>, #blocked1>
CHECK: tt.store {{.*}} : tensor<64x64x!tt.ptr<f32>, #blocked1>
""")  # noqa: E501
