"""convert-triton-to-tritongpu: default blocked layouts, slices for reduce/expand_dims,
module attributes, conversions where layouts disagree (compare Triton 3.6's ir_*.txt)."""
from __future__ import annotations

import pytest

from tests.filecheck_util import check
from tests.passes.util import kernel, run
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module
from workbench.ir.verifier import verify
from workbench.passes import CSE, DCE, Canonicalize, ConvertToTTGIR, convert_to_ttgir

B1D_4W = ("#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], "
          "order = [0]}>")

ADD = """
    %c1024_i32 = arith.constant 1024 : i32
    %pid = tt.get_program_id x : i32
    %offs = arith.muli %pid, %c1024_i32 : i32
    %offs_0 = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %offs_1 = tt.splat %offs : i32 -> tensor<1024xi32>
    %offs_2 = arith.addi %offs_1, %offs_0 : tensor<1024xi32>
    %mask = tt.splat %n : i32 -> tensor<1024xi32>
    %mask_3 = arith.cmpi slt, %offs_2, %mask : tensor<1024xi32>
    %x = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %x_4 = tt.addptr %x, %offs_2 : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %x_5 = tt.load %x_4, %mask_3 : tensor<1024x!tt.ptr<f32>>
    %2 = arith.addf %x_5, %x_5 : tensor<1024xf32>
    tt.store %x_4, %2, %mask_3 : tensor<1024x!tt.ptr<f32>>
"""


def test_vector_add_1d_1024_with_4_warps_and_module_attributes():
    out = run([ConvertToTTGIR(num_warps=4, target="cuda:90")], kernel(ADD))
    check(out, f"""
CHECK: #blocked = {B1D_4W}
CHECK-NEXT: module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}} {{
CHECK: %c1024_i32 = arith.constant 1024 : i32
CHECK-NEXT: %pid = tt.get_program_id x : i32
CHECK-NEXT: %offs = arith.muli %pid, %c1024_i32 : i32
CHECK-NEXT: %offs_0 = tt.make_range {{end = 1024 : i32, start = 0 : i32}} : tensor<1024xi32, #blocked>
CHECK-NEXT: %offs_1 = tt.splat %offs : i32 -> tensor<1024xi32, #blocked>
CHECK-NEXT: %offs_2 = arith.addi %offs_1, %offs_0 : tensor<1024xi32, #blocked>
CHECK-NEXT: %mask = tt.splat %n : i32 -> tensor<1024xi32, #blocked>
CHECK-NEXT: %mask_3 = arith.cmpi slt, %offs_2, %mask : tensor<1024xi32, #blocked>
CHECK-NEXT: %x = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #blocked>
CHECK-NEXT: %x_4 = tt.addptr %x, %offs_2 : tensor<1024x!tt.ptr<f32>, #blocked>, tensor<1024xi32, #blocked>
CHECK-NEXT: %x_5 = tt.load %x_4, %mask_3 : tensor<1024x!tt.ptr<f32>, #blocked>
CHECK-NEXT: %0 = arith.addf %x_5, %x_5 : tensor<1024xf32, #blocked>
CHECK-NEXT: tt.store %x_4, %0, %mask_3 : tensor<1024x!tt.ptr<f32>, #blocked>
CHECK-NOT: ttg.convert_layout
""")  # noqa: E501


TILE_2D = """
    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %e = tt.expand_dims %r {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
    %b = tt.broadcast %e : tensor<1x128xi32> -> tensor<64x128xi32>
    %s = tt.splat %p : !tt.ptr<f32> -> tensor<64x128x!tt.ptr<f32>>
    %a = tt.addptr %s, %b : tensor<64x128x!tt.ptr<f32>>, tensor<64x128xi32>
    %x = tt.load %a : tensor<64x128x!tt.ptr<f32>>
    tt.store %a, %x : tensor<64x128x!tt.ptr<f32>>
"""


@pytest.mark.parametrize("warps,tpw,wpc", [(4, "[1, 32]", "[1, 4]"), (8, "[1, 32]", "[2, 4]")])
def test_2d_64x128_default_layouts(warps, tpw, wpc):
    out = run([ConvertToTTGIR(num_warps=warps)], kernel(TILE_2D))
    check(out, f"""
CHECK: #blocked = #ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, order = [1, 0]}}>
CHECK-NOT: #blocked1
CHECK: "ttg.num-warps" = {warps} : i32
CHECK: %r = tt.make_range {{end = 128 : i32, start = 0 : i32}} : tensor<128xi32, #ttg.slice<{{dim = 0, parent = #blocked}}>>
CHECK-NEXT: %e = tt.expand_dims %r {{axis = 0 : i32}} : tensor<128xi32, #ttg.slice<{{dim = 0, parent = #blocked}}>> -> tensor<1x128xi32, #blocked>
CHECK-NEXT: %b = tt.broadcast %e : tensor<1x128xi32, #blocked> -> tensor<64x128xi32, #blocked>
CHECK: %x = tt.load %a : tensor<64x128x!tt.ptr<f32>, #blocked>
CHECK-NOT: ttg.convert_layout
""")  # noqa: E501


ROWSUM = """
    %om = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %x = tt.expand_dims %om {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %cst = arith.constant dense<128> : tensor<64x1xi32>
    %x_1 = arith.muli %x, %cst : tensor<64x1xi32>
    %x_2 = tt.splat %p : !tt.ptr<f32> -> tensor<64x1x!tt.ptr<f32>>
    %x_3 = tt.addptr %x_2, %x_1 : tensor<64x1x!tt.ptr<f32>>, tensor<64x1xi32>
    %x_4 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %x_5 = tt.expand_dims %x_4 {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
    %x_6 = tt.broadcast %x_3 : tensor<64x1x!tt.ptr<f32>> -> tensor<64x128x!tt.ptr<f32>>
    %x_7 = tt.broadcast %x_5 : tensor<1x128xi32> -> tensor<64x128xi32>
    %x_8 = tt.addptr %x_6, %x_7 : tensor<64x128x!tt.ptr<f32>>, tensor<64x128xi32>
    %x_9 = tt.load %x_8 : tensor<64x128x!tt.ptr<f32>>
    %s = "tt.reduce"(%x_9) <{axis = 1 : i32}> ({
    ^bb0(%s_10: f32, %s_11: f32):
      %s_12 = arith.addf %s_10, %s_11 : f32
      tt.reduce.return %s_12 : f32
    }) : (tensor<64x128xf32>) -> tensor<64xf32>
    %0 = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %1 = tt.addptr %0, %om : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.store %1, %s : tensor<64x!tt.ptr<f32>>
"""


def test_rowsum_reads_like_tritons_ttgir():
    """Same structure as /work/shared/reference/triton-3.6-ir/ir_rowsum.txt (modulo the
    coalesced sizePerThread): the 64-range used by expand_dims is rematerialised in the slice
    layout, the reduce yields a slice of its input layout, and one convert_layout feeds the
    1-D store."""
    out = run([ConvertToTTGIR(num_warps=4)], kernel(ROWSUM))
    check(out, f"""
CHECK: #blocked = {B1D_4W}
CHECK-NEXT: #blocked1 = #ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}}>
CHECK: %om = tt.make_range {{end = 64 : i32, start = 0 : i32}} : tensor<64xi32, #blocked>
CHECK-NEXT: %om_0 = tt.make_range {{end = 64 : i32, start = 0 : i32}} : tensor<64xi32, #ttg.slice<{{dim = 1, parent = #blocked1}}>>
CHECK-NEXT: %x = tt.expand_dims %om_0 {{axis = 1 : i32}} : tensor<64xi32, #ttg.slice<{{dim = 1, parent = #blocked1}}>> -> tensor<64x1xi32, #blocked1>
CHECK-NEXT: %cst = arith.constant dense<128> : tensor<64x1xi32, #blocked1>
CHECK-NEXT: %x_1 = arith.muli %x, %cst : tensor<64x1xi32, #blocked1>
CHECK: %x_6 = tt.broadcast %x_3 : tensor<64x1x!tt.ptr<f32>, #blocked1> -> tensor<64x128x!tt.ptr<f32>, #blocked1>
CHECK: %s = "tt.reduce"(%x_9) <{{axis = 1 : i32}}> ({{
CHECK: }}) : (tensor<64x128xf32, #blocked1>) -> tensor<64xf32, #ttg.slice<{{dim = 1, parent = #blocked1}}>>
CHECK-NEXT: %0 = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>, #blocked>
CHECK-NEXT: %1 = tt.addptr %0, %om : tensor<64x!tt.ptr<f32>, #blocked>, tensor<64xi32, #blocked>
CHECK-NEXT: %2 = ttg.convert_layout %s : tensor<64xf32, #ttg.slice<{{dim = 1, parent = #blocked1}}>> -> tensor<64xf32, #blocked>
CHECK-NEXT: tt.store %1, %2 : tensor<64x!tt.ptr<f32>, #blocked>
""")  # noqa: E501


def test_softmax_1d_reduce_gives_a_scalar_without_encoding():
    out = run([ConvertToTTGIR(num_warps=4)], kernel("""
        %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
        %s = tt.splat %p : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
        %a = tt.addptr %s, %r : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
        %x = tt.load %a : tensor<1024x!tt.ptr<f32>>
        %mx = "tt.reduce"(%x) <{axis = 0 : i32}> ({
        ^bb0(%u: f32, %v: f32):
          %w = arith.maxnumf %u, %v : f32
          tt.reduce.return %w : f32
        }) : (tensor<1024xf32>) -> f32
        %b = tt.splat %mx : f32 -> tensor<1024xf32>
        %y = arith.subf %x, %b : tensor<1024xf32>
        %z = math.exp %y : tensor<1024xf32>
        tt.store %a, %z : tensor<1024x!tt.ptr<f32>>
    """))
    check(out, f"""
CHECK: #blocked = {B1D_4W}
CHECK: }}) : (tensor<1024xf32, #blocked>) -> f32
CHECK-NEXT: %b = tt.splat %mx : f32 -> tensor<1024xf32, #blocked>
CHECK-NEXT: %y = arith.subf %x, %b : tensor<1024xf32, #blocked>
CHECK-NEXT: %z = math.exp %y : tensor<1024xf32, #blocked>
CHECK-NOT: ttg.convert_layout
""")


def test_expand_dims_of_a_reduce_gives_the_parent_and_mismatches_get_converted():
    out = run([ConvertToTTGIR(num_warps=4)], kernel(TILE_2D.replace(
        "    tt.store %a, %x : tensor<64x128x!tt.ptr<f32>>", "") + """
        %mx = "tt.reduce"(%x) <{axis = 1 : i32}> ({
        ^bb0(%u: f32, %v: f32):
          %w = arith.maxnumf %u, %v : f32
          tt.reduce.return %w : f32
        }) : (tensor<64x128xf32>) -> tensor<64xf32>
        %me = tt.expand_dims %mx {axis = 1 : i32} : tensor<64xf32> -> tensor<64x1xf32>
        %mb = tt.broadcast %me : tensor<64x1xf32> -> tensor<64x128xf32>
        %d = arith.subf %x, %mb : tensor<64x128xf32>
        tt.store %a, %d : tensor<64x128x!tt.ptr<f32>>
        %q = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
        %pq = tt.addptr %ps, %q : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
        %l = tt.load %pq : tensor<64x!tt.ptr<f32>>
        %t = arith.addf %mx, %l : tensor<64xf32>
        tt.store %pq, %t : tensor<64x!tt.ptr<f32>>
    """))
    check(out, """
CHECK: #blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
CHECK-NEXT: #blocked1 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
CHECK: -> tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
CHECK-NEXT: %me = tt.expand_dims %mx {axis = 1 : i32} : tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x1xf32, #blocked>
CHECK-NEXT: %mb = tt.broadcast %me : tensor<64x1xf32, #blocked> -> tensor<64x128xf32, #blocked>
CHECK-NEXT: %d = arith.subf %x, %mb : tensor<64x128xf32, #blocked>
CHECK: %l = tt.load %pq : tensor<64x!tt.ptr<f32>, #blocked1>
CHECK-NEXT: %0 = ttg.convert_layout %mx : tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64xf32, #blocked1>
CHECK-NEXT: %t = arith.addf %0, %l : tensor<64xf32, #blocked1>
""")  # noqa: E501


def test_loop_carried_tiles_and_dot_layouts():
    out = run([ConvertToTTGIR(num_warps=4)], kernel("""
        %c0 = arith.constant 0 : i32
        %c1 = arith.constant 1 : i32
        %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
        %a = arith.constant dense<1.000000e+00> : tensor<32x16xf32>
        %b = arith.constant dense<1.000000e+00> : tensor<16x32xf32>
        %acc = scf.for %i = %c0 to %n step %c1 iter_args(%c = %z) -> (tensor<32x32xf32>) : i32 {
          %d = tt.dot %a, %b, %c : tensor<32x16xf32> * tensor<16x32xf32> -> tensor<32x32xf32>
          scf.yield %d : tensor<32x32xf32>
        }
        %s = tt.splat %p : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>>
        tt.store %s, %acc : tensor<32x32x!tt.ptr<f32>>
    """))
    # Triton's TritonDotPattern: 32*32 / 128 threads = 8 elements per thread -> sizePerThread
    # [2, 2]; operands in #ttg.dot_op of it.
    check(out, """
CHECK: #blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
CHECK-NEXT: #blocked1 = #ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
CHECK: %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #blocked>
CHECK-NEXT: %a = arith.constant dense<1.000000e+00> : tensor<32x16xf32, #ttg.dot_op<{opIdx = 0, parent = #blocked1}>>
CHECK-NEXT: %b = arith.constant dense<1.000000e+00> : tensor<16x32xf32, #ttg.dot_op<{opIdx = 1, parent = #blocked1}>>
CHECK-NEXT: %acc = scf.for %i = %c0 to %n step %c1 iter_args(%c = %z) -> (tensor<32x32xf32, #blocked>) : i32 {
CHECK-NEXT: %0 = ttg.convert_layout %c : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
CHECK-NEXT: %d = tt.dot %a, %b, %0
CHECK-NEXT: %1 = ttg.convert_layout %d : tensor<32x32xf32, #blocked1> -> tensor<32x32xf32, #blocked>
CHECK-NEXT: scf.yield %1 : tensor<32x32xf32, #blocked>
""")  # noqa: E501


def test_full_pipeline_output_verifies_and_round_trips():
    m = parse_module(kernel(ROWSUM))
    for p in (Canonicalize(), CSE(), DCE()):
        p.run(m, None)
    convert_to_ttgir(m, num_warps=8, target="cuda:80")
    verify(m)
    text = print_module(m)
    assert print_module(parse_module(text)) == text
    assert 'ttg.target = "cuda:80"' in text and '"ttg.num-warps" = 8 : i32' in text


def test_values_from_outside_a_loop_are_converted_once_before_it():
    out = run([ConvertToTTGIR(num_warps=4)], kernel(TILE_2D.replace(
        "    tt.store %a, %x : tensor<64x128x!tt.ptr<f32>>", "") + """
        %sum = "tt.reduce"(%x) <{axis = 1 : i32}> ({
        ^bb0(%u: f32, %v: f32):
          %w = arith.addf %u, %v : f32
          tt.reduce.return %w : f32
        }) : (tensor<64x128xf32>) -> tensor<64xf32>
        %z = arith.constant dense<0.000000e+00> : tensor<64xf32>
        %c0 = arith.constant 0 : i32
        %c1 = arith.constant 1 : i32
        %acc = scf.for %i = %c0 to %n step %c1 iter_args(%c = %z) -> (tensor<64xf32>) : i32 {
          %d = arith.addf %c, %sum : tensor<64xf32>
          scf.yield %d : tensor<64xf32>
        }
        %q = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
        %pq = tt.addptr %ps, %q : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
        tt.store %pq, %acc : tensor<64x!tt.ptr<f32>>
    """))
    check(out, """
CHECK: -> tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
CHECK-NEXT: %0 = ttg.convert_layout %sum : tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64xf32, #blocked1>
CHECK: scf.for
CHECK-NEXT: %d = arith.addf %c, %0 : tensor<64xf32, #blocked1>
CHECK-NEXT: scf.yield %d
""")  # noqa: E501
