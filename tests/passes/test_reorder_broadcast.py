"""triton-reorder-broadcast on hand-written ttir: elementwise ops move before splats and
broadcasts, expand_dims/broadcast chains simplify, and what must stay stays."""
from __future__ import annotations

from tests.filecheck_util import check
from tests.passes.util import kernel, run
from workbench.passes.reorder_broadcast import ReorderBroadcast


def reorder(body: str) -> str:
    return run([ReorderBroadcast()], kernel(body))


def test_elementwise_of_splats_is_a_splat_of_the_scalar_op():
    out = reorder("""
        %a = tt.splat %n : i32 -> tensor<16xi32>
        %b = tt.splat %m : i32 -> tensor<16xi32>
        %c = arith.addi %a, %b : tensor<16xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
        %q = tt.addptr %ps, %c : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
        %x = tt.load %q : tensor<16x!tt.ptr<f32>>
        tt.store %q, %x : tensor<16x!tt.ptr<f32>>
    """)
    # addi, then addptr, each on scalars; one splat of the pointer is left
    check(out, """
CHECK: %[[S:.*]] = arith.addi %n, %m : i32
CHECK-NEXT: %[[P:.*]] = tt.addptr %p, %[[S]] : !tt.ptr<f32>, i32
CHECK-NEXT: %q = tt.splat %[[P]] : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
CHECK-NEXT: %x = tt.load %q
CHECK-NOT: tensor<16xi32>
""")


def test_splat_constants_become_scalar_constants_at_the_top():
    out = reorder("""
        %two = arith.constant dense<2.000000e+00> : tensor<16xf32>
        %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
        %a = tt.splat %f : f32 -> tensor<16xf32>
        %c = arith.mulf %a, %two : tensor<16xf32>
        %e = math.exp %c : tensor<16xf32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
        %q = tt.addptr %ps, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
        tt.store %q, %e : tensor<16x!tt.ptr<f32>>
    """)
    check(out, """
CHECK: %[[K:.*]] = arith.constant 2.000000e+00 : f32
CHECK-NEXT: %r = tt.make_range
CHECK-NEXT: %[[M:.*]] = arith.mulf %f, %[[K]] : f32
CHECK-NEXT: %[[E:.*]] = math.exp %[[M]] : f32
CHECK-NEXT: %e = tt.splat %[[E]] : f32 -> tensor<16xf32>
CHECK-NOT: dense<2.0
""")


def test_elementwise_of_a_broadcast_runs_on_the_small_tensor():
    out = reorder("""
        %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
        %e = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
        %b = tt.broadcast %e : tensor<1x16xi32> -> tensor<8x16xi32>
        %s = tt.splat %n : i32 -> tensor<8x16xi32>
        %three = arith.constant dense<3> : tensor<8x16xi32>
        %c = arith.addi %b, %s : tensor<8x16xi32>
        %d = arith.muli %c, %three : tensor<8x16xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<8x16x!tt.ptr<f32>>
        %q = tt.addptr %ps, %d : tensor<8x16x!tt.ptr<f32>>, tensor<8x16xi32>
        %x = tt.load %q : tensor<8x16x!tt.ptr<f32>>
        tt.store %q, %x : tensor<8x16x!tt.ptr<f32>>
    """)
    check(out, """
CHECK: arith.constant dense<3> : tensor<1x16xi32>
CHECK: %e = tt.expand_dims %r
CHECK-NEXT: %[[S:.*]] = tt.splat %n : i32 -> tensor<1x16xi32>
CHECK-NEXT: %[[C:.*]] = arith.addi %e, %[[S]] : tensor<1x16xi32>
CHECK-NEXT: %[[D:.*]] = arith.muli %[[C]], %{{.*}} : tensor<1x16xi32>
CHECK-NEXT: %[[PS:.*]] = tt.splat %p : !tt.ptr<f32> -> tensor<1x16x!tt.ptr<f32>>
CHECK-NEXT: %[[Q:.*]] = tt.addptr %[[PS]], %[[D]] : tensor<1x16x!tt.ptr<f32>>, tensor<1x16xi32>
CHECK-NEXT: %q = tt.broadcast %[[Q]] : tensor<1x16x!tt.ptr<f32>> -> tensor<8x16x!tt.ptr<f32>>
CHECK-NEXT: %x = tt.load %q
""")


def test_broadcasts_from_different_shapes_stay():
    out = reorder("""
        %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
        %row = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
        %col = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
        %a = tt.broadcast %row : tensor<1x16xi32> -> tensor<16x16xi32>
        %b = tt.broadcast %col : tensor<16x1xi32> -> tensor<16x16xi32>
        %c = arith.addi %a, %b : tensor<16x16xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
        %q = tt.addptr %ps, %c : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
        %x = tt.load %q : tensor<16x16x!tt.ptr<f32>>
        tt.store %q, %x : tensor<16x16x!tt.ptr<f32>>
    """)
    check(out, """
CHECK: %c = arith.addi %a, %b : tensor<16x16xi32>
CHECK-NEXT: %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
CHECK-NEXT: %q = tt.addptr %ps, %c
""")


def test_expand_dims_and_broadcast_chains():
    out = reorder("""
        %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
        %s = tt.splat %n : i32 -> tensor<16xi32>
        %es = tt.expand_dims %s {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
        %e = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
        %b = tt.broadcast %e : tensor<1x16xi32> -> tensor<4x16xi32>
        %eb = tt.expand_dims %b {axis = 0 : i32} : tensor<4x16xi32> -> tensor<1x4x16xi32>
        %bb = tt.broadcast %eb : tensor<1x4x16xi32> -> tensor<2x4x16xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<2x4x16x!tt.ptr<f32>>
        %q = tt.addptr %ps, %bb : tensor<2x4x16x!tt.ptr<f32>>, tensor<2x4x16xi32>
        %x = tt.load %q : tensor<2x4x16x!tt.ptr<f32>>
        tt.store %q, %x : tensor<2x4x16x!tt.ptr<f32>>
        %ps2 = tt.splat %p : !tt.ptr<f32> -> tensor<16x1x!tt.ptr<f32>>
        %q2 = tt.addptr %ps2, %es : tensor<16x1x!tt.ptr<f32>>, tensor<16x1xi32>
        %y = tt.load %q2 : tensor<16x1x!tt.ptr<f32>>
        tt.store %q2, %y : tensor<16x1x!tt.ptr<f32>>
    """)
    # expand_dims(broadcast(e)) -> broadcast(expand_dims(e)), then broadcast(broadcast) is one
    # broadcast; the addptr of splats then of a broadcast moves before it
    check(out, """
CHECK: %[[E2:.*]] = tt.expand_dims %e {axis = 0 : i32} : tensor<1x16xi32> -> tensor<1x1x16xi32>
CHECK: %[[A:.*]] = tt.addptr %{{.*}}, %[[E2]] : tensor<1x1x16x!tt.ptr<f32>>, tensor<1x1x16xi32>
CHECK-NEXT: %q = tt.broadcast %[[A]] : tensor<1x1x16x!tt.ptr<f32>> -> tensor<2x4x16x!tt.ptr<f32>>
CHECK: %[[P2:.*]] = tt.addptr %p, %n : !tt.ptr<f32>, i32
CHECK-NEXT: %q2 = tt.splat %[[P2]] : !tt.ptr<f32> -> tensor<16x1x!tt.ptr<f32>>
CHECK-NOT: tensor<4x16xi32>
""")


def test_ops_with_side_effects_stay():
    out = reorder("""
        %a = tt.splat %f : f32 -> tensor<16xf32>
        %b = tt.extern_elementwise %a {libname = "", libpath = "", pure = false, symbol = "__nv_expf"} : (tensor<16xf32>) -> tensor<16xf32>
        %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
        %q = tt.addptr %ps, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
        tt.store %q, %b : tensor<16x!tt.ptr<f32>>
    """)  # noqa: E501
    assert "tt.extern_elementwise %a" in out and "(tensor<16xf32>) -> tensor<16xf32>" in out
