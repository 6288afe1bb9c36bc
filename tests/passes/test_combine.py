"""triton-combine on hand-written ttir: each rewrite where it applies, and where one of its
conditions fails the IR stays as it was."""
from __future__ import annotations

from tests.filecheck_util import check
from tests.passes.util import kernel, run
from workbench.passes import DCE
from workbench.passes.combine import Combine

#: a 16x16 f32 tile %x loaded through %ptrs, and a second one %y
TILES = """
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %e = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %b = tt.broadcast %e : tensor<16x1xi32> -> tensor<16x16xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %ptrs = tt.addptr %ps, %b : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
    %x = tt.load %ptrs : tensor<16x16x!tt.ptr<f32>>
    %y = tt.load %ptrs : tensor<16x16x!tt.ptr<f32>>
"""


def combine(body: str) -> str:
    return run([Combine()], kernel(body))


def test_add_of_a_dot_with_zero_accumulator_becomes_the_dots_accumulator():
    out = combine(TILES + """
        %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
        %d = tt.dot %x, %x, %z : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
        %s = arith.addf %y, %d : tensor<16x16xf32>
        %t = arith.mulf %s, %s : tensor<16x16xf32>
        tt.store %ptrs, %t : tensor<16x16x!tt.ptr<f32>>
    """)
    check(out, """
CHECK: %y = tt.load
CHECK-NEXT: %d = tt.dot %x, %x, %y : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
CHECK-NEXT: %t = arith.mulf %d, %d
CHECK-NOT: arith.addf
CHECK-NOT: arith.constant
""")


def test_dot_on_the_left_and_integer_add():
    out = combine("""
        %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
        %e = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
        %b = tt.broadcast %e : tensor<16x1xi32> -> tensor<16x16xi32>
        %a8 = arith.trunci %b : tensor<16x16xi32> to tensor<16x16xi8>
        %z = arith.constant dense<0> : tensor<16x16xi32>
        %d = tt.dot %a8, %a8, %z : tensor<16x16xi8> * tensor<16x16xi8> -> tensor<16x16xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
        %s = arith.addi %d, %b : tensor<16x16xi32>
        %q = tt.addptr %ps, %s : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
        %v = tt.load %q : tensor<16x16x!tt.ptr<f32>>
        tt.store %q, %v : tensor<16x16x!tt.ptr<f32>>
    """)
    # the dot moves to where the add was (after %ps)
    check(out, """
CHECK: %ps = tt.splat %p
CHECK-NEXT: %d = tt.dot %a8, %a8, %b : tensor<16x16xi8> * tensor<16x16xi8> -> tensor<16x16xi32>
CHECK-NEXT: %q = tt.addptr %ps, %d
CHECK-NOT: arith.addi
""")


def test_dot_add_conditions():
    """Not combined: a dot with a second use, a non-zero accumulator, an imprecise fp8-style
    accumulation; and when the right operand is a dot that fails, the left one is not tried
    (as Triton)."""
    out = combine(TILES + """
        %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
        %one = arith.constant dense<1.000000e+00> : tensor<16x16xf32>
        %d1 = tt.dot %x, %x, %z : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
        %s1 = arith.addf %y, %d1 : tensor<16x16xf32>
        %u1 = arith.mulf %s1, %d1 : tensor<16x16xf32>
        %d2 = tt.dot %x, %x, %one : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
        %s2 = arith.addf %y, %d2 : tensor<16x16xf32>
        %d3 = tt.dot %x, %x, %z {maxNumImpreciseAcc = 32 : i32} : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
        %s3 = arith.addf %d3, %y : tensor<16x16xf32>
        %d4 = tt.dot %x, %y, %z : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
        %d5 = tt.dot %y, %y, %z : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
        %s4 = arith.addf %d4, %d5 : tensor<16x16xf32>
        %u5 = arith.addf %d5, %u1 : tensor<16x16xf32>
        %a = arith.addf %s2, %s3 : tensor<16x16xf32>
        %a2 = arith.addf %a, %s4 : tensor<16x16xf32>
        %a3 = arith.mulf %a2, %u5 : tensor<16x16xf32>
        tt.store %ptrs, %a3 : tensor<16x16x!tt.ptr<f32>>
    """)  # noqa: E501
    for name in ("%s1", "%s2", "%s3", "%s4"):
        assert f"{name} = arith.addf" in out, name
    assert out.count("tt.dot") == 5 and "tt.dot %x, %x, %y" not in out


def test_select_of_a_load_masked_by_the_same_condition_is_a_load_with_other():
    body = """
        %c = arith.cmpi slt, %n, %m : i32
        %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
        %ptrs = tt.addptr %ps, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
        %ms = tt.splat %c : i1 -> tensor<16xi1>
        %v = tt.load %ptrs, %ms evictionPolicy = evict_last : tensor<16x!tt.ptr<f32>>
        %o = tt.splat %f : f32 -> tensor<16xf32>
        STORE
        %s = arith.select %c, %v, %o : tensor<16xf32>
        tt.store %ptrs, %s : tensor<16x!tt.ptr<f32>>
    """
    out = combine(body.replace("STORE", ""))
    check(out, """
CHECK: %o = tt.splat %f
CHECK-NEXT: %s = tt.load %ptrs, %ms, %o evictionPolicy = evict_last : tensor<16x!tt.ptr<f32>>
CHECK-NEXT: tt.store %ptrs, %s
CHECK-NOT: arith.select
""")
    # a store between the load and the select: the load may not move past it
    kept = combine(body.replace("STORE", "tt.store %ptrs, %o : tensor<16x!tt.ptr<f32>>"))
    assert "arith.select %c, %v, %o" in kept
    # the select's condition is not the scalar the mask splats
    other = combine(body.replace("STORE", "").replace("arith.select %c", "arith.select %c2")
                    .replace("%o = tt.splat", "%c2 = arith.cmpi sgt, %n, %m : i32\n%o = tt.splat"))
    assert "arith.select %c2, %v, %o" in other


def test_addptr_of_addptr_adds_64_bit_offsets_and_keeps_hints():
    out = combine("""
        %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
        %w = arith.extsi %r : tensor<16xi32> to tensor<16xi64>
        %v = arith.muli %w, %w : tensor<16xi64>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
        %q1 = tt.addptr %ps, %w : tensor<16x!tt.ptr<f32>>, tensor<16xi64>
        %q2 = tt.addptr %q1, %v {tt.divisibility = dense<16> : tensor<1xi32>} : tensor<16x!tt.ptr<f32>>, tensor<16xi64>
        %x = tt.load %q2 : tensor<16x!tt.ptr<f32>>
        tt.store %q2, %x : tensor<16x!tt.ptr<f32>>
    """)  # noqa: E501
    check(out, """
CHECK: %ps = tt.splat %p
CHECK-NEXT: %[[S:.*]] = arith.addi %w, %v : tensor<16xi64>
CHECK-NEXT: %q2 = tt.addptr %ps, %[[S]] {tt.divisibility = dense<16> : tensor<1xi32>}
CHECK-NOT: %q1
""")


def test_addptr_of_addptr_with_32_bit_offsets_needs_constants_that_do_not_overflow():
    out = run([Combine(), DCE()], kernel("""
        %c3 = arith.constant 3 : i32
        %c4 = arith.constant 4 : i32
        %big = arith.constant 2147483647 : i32
        %a1 = tt.addptr %p, %c3 : !tt.ptr<f32>, i32
        %a2 = tt.addptr %a1, %c4 : !tt.ptr<f32>, i32
        tt.store %a2, %f : !tt.ptr<f32>
        %b1 = tt.addptr %p, %big : !tt.ptr<f32>, i32
        %b2 = tt.addptr %b1, %c4 : !tt.ptr<f32>, i32
        tt.store %b2, %f : !tt.ptr<f32>
        %n1 = tt.addptr %p, %n : !tt.ptr<f32>, i32
        %n2 = tt.addptr %n1, %c4 : !tt.ptr<f32>, i32
        tt.store %n2, %f : !tt.ptr<f32>
    """))
    check(out, """
CHECK: %c7_i32 = arith.constant 7 : i32
CHECK: %a2 = tt.addptr %p, %c7_i32 : !tt.ptr<f32>, i32
CHECK: %b1 = tt.addptr %p, %big
CHECK-NEXT: %b2 = tt.addptr %b1, %c4
CHECK: %n1 = tt.addptr %p, %n
CHECK-NEXT: %n2 = tt.addptr %n1, %c4
""")


MUL_REDUCE = """
    %rm = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %rk = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %rn = tt.make_range {end = NN : i32, start = 0 : i32} : tensor<NNxi32>
    %em = tt.expand_dims %rm {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %ek = tt.expand_dims %rk {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
    %bm = tt.broadcast %em : tensor<16x1xi32> -> tensor<16x8xi32>
    %bk = tt.broadcast %ek : tensor<1x8xi32> -> tensor<16x8xi32>
    %ia = arith.addi %bm, %bk : tensor<16x8xi32>
    %pa = tt.splat %p : !tt.ptr<f32> -> tensor<16x8x!tt.ptr<f32>>
    %qa = tt.addptr %pa, %ia : tensor<16x8x!tt.ptr<f32>>, tensor<16x8xi32>
    %x = tt.load %qa : tensor<16x8x!tt.ptr<f32>>
    %ek2 = tt.expand_dims %rk {axis = 1 : i32} : tensor<8xi32> -> tensor<8x1xi32>
    %en = tt.expand_dims %rn {axis = 0 : i32} : tensor<NNxi32> -> tensor<1xNNxi32>
    %bk2 = tt.broadcast %ek2 : tensor<8x1xi32> -> tensor<8xNNxi32>
    %bn = tt.broadcast %en : tensor<1xNNxi32> -> tensor<8xNNxi32>
    %ib = arith.addi %bk2, %bn : tensor<8xNNxi32>
    %pb = tt.splat %p : !tt.ptr<f32> -> tensor<8xNNx!tt.ptr<f32>>
    %qb = tt.addptr %pb, %ib : tensor<8xNNx!tt.ptr<f32>>, tensor<8xNNxi32>
    %y = tt.load %qb : tensor<8xNNx!tt.ptr<f32>>
    %x3 = tt.expand_dims %x {axis = 2 : i32} : tensor<16x8xf32> -> tensor<16x8x1xf32>
    %y3 = tt.expand_dims %y {axis = 0 : i32} : tensor<8xNNxf32> -> tensor<1x8xNNxf32>
    %xb = tt.broadcast %x3 : tensor<16x8x1xf32> -> tensor<16x8xNNxf32>
    %yb = tt.broadcast %y3 : tensor<1x8xNNxf32> -> tensor<16x8xNNxf32>
    %prod = arith.mulf %xb, %yb : tensor<16x8xNNxf32>
    %s = "tt.reduce"(%prod) <{axis = 1 : i32}> ({
    ^bb0(%u: f32, %v: f32):
      %w = arith.addf %u, %v : f32
      tt.reduce.return %w : f32
    }) : (tensor<16x8xNNxf32>) -> tensor<16xNNxf32>
    %ro = tt.splat %p : !tt.ptr<f32> -> tensor<16xNNx!tt.ptr<f32>>
    tt.store %ro, %s : tensor<16xNNx!tt.ptr<f32>>
"""


def test_sum_of_broadcast_product_is_a_tf32_dot():
    out = run([Combine(), DCE()], kernel(MUL_REDUCE.replace("NN", "16")))
    check(out, """
CHECK: %cst = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
CHECK: %x = tt.load %qa
CHECK: %y = tt.load %qb
CHECK-NEXT: %s = tt.dot %x, %y, %cst, inputPrecision = tf32 : tensor<16x8xf32> * tensor<8x16xf32> -> tensor<16x16xf32>
CHECK-NEXT: %ro = tt.splat
CHECK-NOT: tt.reduce
CHECK-NOT: arith.mulf
""")  # noqa: E501


def test_sum_of_broadcast_product_conditions():
    """N < 16 (Triton's condition); a product along a different axis (ours)."""
    narrow = run([Combine()], kernel(MUL_REDUCE.replace("NN", "8")))
    assert "tt.dot" not in narrow and '"tt.reduce"' in narrow
    text = MUL_REDUCE.replace("NN", "16").replace("<{axis = 1 : i32}>", "<{axis = 2 : i32}>")
    text = text.replace("-> tensor<16x16xf32>\n    %ro", "-> tensor<16x8xf32>\n    %ro")
    text = text.replace("tensor<16x16x!tt.ptr<f32>>\n    tt.store",
                        "tensor<16x8x!tt.ptr<f32>>\n    tt.store")
    text = text.replace("%ro = tt.splat %p : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>\n"
                        "    tt.store %ro, %s : tensor<16x16x!tt.ptr<f32>>",
                        "%ro = tt.splat %p : !tt.ptr<f32> -> tensor<16x8x!tt.ptr<f32>>\n"
                        "    tt.store %ro, %s : tensor<16x8x!tt.ptr<f32>>")
    other_axis = run([Combine()], kernel(text))
    assert "tt.dot" not in other_axis and '"tt.reduce"' in other_axis
    # fp16 operands (Triton's pass fails on them: it splats an fp32 zero into fp16)
    half = MUL_REDUCE.replace("NN", "16").replace("%x = tt.load %qa : tensor<16x8x!tt.ptr<f32>>",
                                                 "%x0 = tt.load %qa : tensor<16x8x!tt.ptr<f32>>\n"
                                                 "%x = arith.truncf %x0 : tensor<16x8xf32> to "
                                                 "tensor<16x8xf16>")
    half = half.replace("%y = tt.load %qb : tensor<8x16x!tt.ptr<f32>>",
                        "%y0 = tt.load %qb : tensor<8x16x!tt.ptr<f32>>\n"
                        "%y = arith.truncf %y0 : tensor<8x16xf32> to tensor<8x16xf16>")
    for shape in ("16x8", "8x16", "1x8x16", "16x8x1", "16x8x16", "16x16"):
        half = half.replace(f"tensor<{shape}xf32>", f"tensor<{shape}xf16>")
    half = half.replace("(%u: f32, %v: f32)", "(%u: f16, %v: f16)").replace(
        "arith.addf %u, %v : f32", "arith.addf %u, %v : f16").replace(
        "tt.reduce.return %w : f32", "tt.reduce.return %w : f16").replace(
        "tensor<16x16x!tt.ptr<f32>>", "tensor<16x16x!tt.ptr<f16>>").replace(
        "%ro = tt.splat %p : !tt.ptr<f32>", "%ro = tt.splat %h : !tt.ptr<f16>")
    half = half.replace("%x0 = tt.load %qa : tensor<16x8xf16>", "%x0 = tt.load %qa")
    fp16 = run([Combine()], kernel(half).replace("%f: f32)", "%f: f32, %h: !tt.ptr<f16>)"))
    assert "tt.dot" not in fp16 and '"tt.reduce"' in fp16 and "xf16>" in fp16


REDUCE_1D = """
    %rm = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
    %q = tt.addptr %ps, %rm : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    %x = tt.load %q : tensor<32x!tt.ptr<f32>>
    %t = tt.reshape %x : tensor<32xf32> -> tensor<4x8xf32>
    %flat = tt.reshape %t : tensor<4x8xf32> -> tensor<32xf32>
    %s = "tt.reduce"(%flat) <{axis = 0 : i32}> ({
    ^bb0(%u: f32, %v: f32):
      %w = arith.maxnumf %u, %v : f32
      tt.reduce.return %w : f32
    }) : (tensor<32xf32>) -> f32
    tt.store %p, %s : !tt.ptr<f32>
"""


def test_rank_1_reshape_read_only_by_reductions_may_reorder():
    out = combine(REDUCE_1D)
    assert "%flat = tt.reshape %t allow_reorder : tensor<4x8xf32> -> tensor<32xf32>" in out
    assert "%t = tt.reshape %x : tensor<32xf32> -> tensor<4x8xf32>" in out  # rank 2: kept
    stored = combine(REDUCE_1D.replace("tt.store %p, %s : !tt.ptr<f32>",
                                       "tt.store %p, %s : !tt.ptr<f32>\n"
                                       "tt.store %q, %flat : tensor<32x!tt.ptr<f32>>"))
    assert "%flat = tt.reshape %t : tensor<4x8xf32>" in stored


DESC = """
    %c1 = arith.constant 1 : i64
    %s = arith.extsi %m : i32 to i64
    %d = tt.make_tensor_descriptor %p, [%n, %m, %m], [%s, %s, %c1] : <f32>, <tensor<1x4x8xf32>>
    %v = tt.descriptor_load %d[%n, %m, %m] : !tt.tensordesc<tensor<1x4x8xf32>> -> tensor<1x4x8xf32>
    %r = tt.reshape %v : tensor<1x4x8xf32> -> tensor<RESHAPE>
    %o = tt.splat %p : !tt.ptr<f32> -> tensor<RESHAPE x!tt.ptr<f32>>
    tt.store %o, %r : tensor<RESHAPE x!tt.ptr<f32>>
"""


def test_reshape_dropping_leading_unit_dims_of_a_descriptor_load_is_a_rank_reduced_load():
    out = combine(DESC.replace("RESHAPE x", "4x8x").replace("RESHAPE", "4x8xf32"))
    check(out, """
CHECK: %r = tt.descriptor_load %d[%n, %m, %m] : !tt.tensordesc<tensor<1x4x8xf32>> -> tensor<4x8xf32>
CHECK-NOT: tt.reshape
""")  # noqa: E501
    # a reshape that reorders the kept dims is not a rank reduction
    kept = combine(DESC.replace("RESHAPE x", "8x4x").replace("RESHAPE", "8x4xf32"))
    assert "tt.reshape %v" in kept and "-> tensor<1x4x8xf32>" in kept
