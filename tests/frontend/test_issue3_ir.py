"""The control flow, shape, block-pointer, math, random and debug language in ttir
(FileCheck): while -> scf.while, early return -> scf.if with the rest of the function in the
other branch, shape ops (join/split/interleave/cat/flip/sort), block pointers rewritten as
Triton's rewrite-tensor-pointer does, math ops, random, hints, debug ops; and the caret errors
of their misuse."""
import linecache

import pytest
from fe_helpers import const, filecheck, ptr, scalar, ttir

import workbench.language as tl
from workbench.errors import CompilationError, UnsupportedError
from workbench.language.core import jit_helper

THIS_FILE = __file__


def k_while(x_ptr, n):
    i = 0
    acc = tl.load(x_ptr)
    while i < n:
        acc = acc * 2.0
        i += 1
    tl.store(x_ptr, acc)


def test_while_is_scf_while_with_carried_values():
    filecheck(ttir(k_while, ptr("x_ptr"), scalar("n")), """
CHECK: %acc = tt.load %x_ptr
CHECK: %[[W:acc_[0-9]+]]:2 = scf.while (%acc_{{[0-9]+}} = %acc, %i = %c0_i32) : (f32, i32) -> (f32, i32) {
CHECK-NEXT: %[[C:[0-9]+]] = arith.cmpi slt, %i, %n : i32
CHECK-NEXT: scf.condition(%[[C]]) %acc_{{[0-9]+}}, %i : f32, i32
CHECK-NEXT: } do {
CHECK-NEXT: ^bb0(%acc_1: f32, %i: i32):
CHECK: arith.mulf
CHECK: arith.addi
CHECK: scf.yield
CHECK: tt.store %x_ptr, %[[W]]#0
""")  # noqa: E501


def k_early(x_ptr, n):
    pid = tl.program_id(0)
    if pid >= n:
        return
    tl.store(x_ptr + pid, 1.0)


def test_early_return_puts_the_rest_in_the_else_branch():
    filecheck(ttir(k_early, ptr("x_ptr"), scalar("n")), """
CHECK: %[[C:[0-9]+]] = arith.cmpi sge, %pid, %n : i32
CHECK-NEXT: scf.if %[[C]] {
CHECK-NEXT: } else {
CHECK: tt.store
CHECK-NEXT: }
CHECK-NEXT: tt.return
""")


def _sel(x):
    if x > 0:
        return x * 2, x
    return x - 1, x


sel = jit_helper(_sel)


def k_helper_return(x_ptr):
    a, b = sel(tl.load(x_ptr))
    tl.store(x_ptr, a + b)


def test_helper_early_return_values_are_if_results():
    filecheck(ttir(k_helper_return, ptr("x_ptr")), """
CHECK: %[[R:[0-9]+]]:2 = scf.if %{{[0-9]+}} -> (f32, f32) {
CHECK: %[[M:[0-9]+]] = arith.mulf
CHECK: scf.yield %[[M]], %0 : f32, f32
CHECK: } else {
CHECK: %[[S:[0-9]+]] = arith.subf
CHECK: scf.yield %[[S]], %0 : f32, f32
CHECK: arith.addf %[[R]]#0, %[[R]]#1
""")


def k_shapes(x_ptr, o_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    j = tl.join(x, x + 1.0)
    a, b = tl.split(j)
    i = tl.interleave(a, b)
    c = tl.cat(x, b, can_reorder=True)
    v = tl.view(i, 2, N)
    tl.store(o_ptr + tl.arange(0, 2 * N), i + c + tl.ravel(v))


def test_join_split_interleave_cat_view():
    filecheck(ttir(k_shapes, ptr("x_ptr"), ptr("o_ptr"), const("N", 8)), """
CHECK: %j_3 = tt.join %x_1, %j_2 : tensor<8xf32> -> tensor<8x2xf32>
CHECK: %outLHS, %outRHS = tt.split %j_3 : tensor<8x2xf32> -> tensor<8xf32>
CHECK: %i = tt.join %outLHS, %outRHS : tensor<8xf32> -> tensor<8x2xf32>
CHECK: %i_4 = tt.reshape %i : tensor<8x2xf32> -> tensor<16xf32>
CHECK: %c = tt.cat %x_1, %outRHS : tensor<8xf32> -> tensor<16xf32>
CHECK: %v = tt.reshape %i_4 allow_reorder : tensor<16xf32> -> tensor<2x8xf32>
CHECK: tt.reshape %v : tensor<2x8xf32> -> tensor<16xf32>
""")


def k_flip_sort(x_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    tl.store(x_ptr + r, tl.flip(x) + tl.sort(x, descending=True))


def test_flip_and_sort_are_built_from_reshape_split_join():
    text = ttir(k_flip_sort, ptr("x_ptr"), const("N", 8))
    filecheck(text, """
CHECK: tt.bitcast %x_1 : tensor<8xf32> -> tensor<8xi32>
CHECK: tt.reshape %{{.*}} : tensor<8xi32> -> tensor<2x2x2xi32>
CHECK: "tt.reduce"
CHECK: arith.xori
CHECK: tt.reshape %{{.*}} : tensor<2x2x2xi32> -> tensor<8xi32>
CHECK: tt.reshape %x_1 : tensor<8xf32> -> tensor<4x2x1xf32>
CHECK: tt.trans %{{.*}} {order = array<i32: 0, 2, 1>} : tensor<4x2x1xf32> -> tensor<4x1x2xf32>
CHECK: tt.split %{{.*}} : tensor<4x1x2xf32> -> tensor<4x1xf32>
CHECK: arith.cmpf ogt
CHECK: arith.xori
CHECK: arith.select
CHECK: tt.join
CHECK: arith.cmpf olt
""")
    # log2(8) = 3 stages with 1 + 2 + 3 compare-and-swap steps
    assert text.count("arith.cmpf ogt") + text.count("arith.cmpf olt") == 6


def k_bp(x_ptr, o_ptr, M, N, sm, BM: tl.constexpr, BN: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (M, N), (sm, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    v = tl.load(p, boundary_check=(0, 1), padding_option="nan")
    q = tl.make_block_ptr(o_ptr, (M, N), (sm, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    tl.store(tl.advance(q, (0, 0)), v, boundary_check=(1,))


def test_block_pointer_rewritten_to_int64_offsets_and_masks():
    filecheck(ttir(k_bp, ptr("x_ptr"), ptr("o_ptr"), scalar("M"), scalar("N"), scalar("sm"),
                   const("BM", 32), const("BN", 64)), """
CHECK: %p_{{[0-9]+}} = arith.extsi %M : i32 to i64
CHECK: %p_{{[0-9]+}} = arith.extsi %N : i32 to i64
CHECK: %p_{{[0-9]+}} = arith.extsi %sm : i32 to i64
CHECK: %v = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>>
CHECK-NEXT: tt.splat %p_{{[0-9]+}} : i64 -> tensor<32xi64>
CHECK-NEXT: %[[R:v_[0-9]+]] = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
CHECK-NEXT: arith.extsi %[[R]] : tensor<32xi32> to tensor<32xi64>
CHECK: tt.expand_dims %{{.*}} {axis = 1 : i32} : tensor<32xi64> -> tensor<32x1xi64>
CHECK: arith.muli %{{.*}} : tensor<32x1xi64>
CHECK: tt.addptr %{{.*}} : tensor<32x64x!tt.ptr<f32>>, tensor<32x64xi64>
CHECK: arith.cmpi sge, %{{.*}} : tensor<32x1xi64>
CHECK: arith.cmpi slt, %{{.*}} : tensor<32x1xi64>
CHECK: arith.cmpi sge, %{{.*}} : tensor<1x64xi64>
CHECK: arith.andi %{{.*}} : tensor<32x64xi1>
CHECK: %v_{{[0-9]+}} = tt.load %{{.*}}, %{{.*}}, %v{{(_[0-9]+)?}} : tensor<32x64x!tt.ptr<f32>>
CHECK: tt.store %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x64x!tt.ptr<f32>>
""")


def k_math(x_ptr, u_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    u = tl.load(u_ptr + r)
    y = tl.div_rn(x, 3.0) + tl.fdiv(x, 7.0) + tl.fdiv(x, 5.0, ieee_rounding=True)
    y = tl.clamp(y, -1.0, 1.0) + tl.math.sqrt_rn(x) + tl.math.floor(x) + tl.math.erf(x)
    h = tl.umulhi(u, 0x9E3779B9)
    z = tl.fma(x, y, 1.0)
    w = x.to(tl.float16, fp_downcast_rounding="rtz")
    tl.store(x_ptr + r, z + h.to(tl.float32) + w.to(tl.float32))


def test_math_ops():
    filecheck(ttir(k_math, ptr("x_ptr"), ptr("u_ptr", "*u32"), const("N", 16)), """
CHECK: %y_4 = tt.precise_divf %x_1, %y : tensor<16xf32>
CHECK: %y_6 = arith.divf %x_1, %y_5 : tensor<16xf32>
CHECK: %y_9 = tt.precise_divf %x_1, %y_8 : tensor<16xf32>
CHECK: tt.clampf %y_10, %y_12, %y_13, propagateNan = none
CHECK: tt.precise_sqrt %x_1
CHECK: math.floor %x_1
CHECK: math.erf %x_1
CHECK: %h = arith.constant dense<-1640531527> : tensor<16xi32>
CHECK-NEXT: %h_21 = tt.mulhiui %u_3, %h : tensor<16xi32>
CHECK: %z_22 = math.fma %x_1, %y_20, %z : tensor<16xf32>
CHECK: %w = tt.fp_to_fp %x_1, rounding = rtz : tensor<16xf32> -> tensor<16xf16>
CHECK: arith.uitofp %h_21
""")


def k_rand(seed, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o_ptr + offs, tl.rand(seed, offs))


def test_rand_is_philox_in_plain_ops():
    text = ttir(k_rand, scalar("seed", "i64"), ptr("o_ptr"), const("N", 16))
    assert text.count("tt.mulhiui") == 20  # 10 rounds x 2 high products
    filecheck(text, """
CHECK: %c0 = arith.constant dense<-845247145> : tensor<16xi32>
CHECK-NEXT: tt.mulhiui %c0
CHECK: tt.mulhiui
CHECK: arith.xori
CHECK: arith.muli
CHECK: arith.sitofp
CHECK: arith.mulf
CHECK: tt.store
""")


def k_hints(x_ptr, N: tl.constexpr):
    offs = tl.max_contiguous(tl.multiple_of(tl.arange(0, N) * 4, 16), 4)
    tl.store(x_ptr + offs, 1.0)


def test_hints_are_attributes():
    filecheck(ttir(k_hints, ptr("x_ptr"), const("N", 16)), """
CHECK: %offs_1 = arith.muli %offs, %offs_0 {tt.contiguity = dense<4> : tensor<1xi32>, tt.divisibility = dense<16> : tensor<1xi32>} : tensor<16xi32>
CHECK: tt.addptr %{{.*}}, %offs_1
""")  # noqa: E501


def k_assert(x_ptr, N: tl.constexpr):
    tl.static_assert(N >= 4, "N too small")
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_assert(x > 0.0, "x must be positive")
    assert N < 64, "N too large"


def test_device_assert_only_with_debug():
    assert "tt.assert" not in ttir(k_assert, ptr("x_ptr"), const("N", 8))
    filecheck(ttir(k_assert, ptr("x_ptr"), const("N", 8), debug=True),
              'CHECK: tt.assert %{{.*}}, "x must be positive" : tensor<8xi1>\n')


# errors ---------------------------------------------------------------------------------------
def e_bp_mask(x_ptr, N: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (N,), (1,), (0,), (N,), (0,))
    v = tl.load(p, mask=tl.arange(0, N) < 3)


def e_bp_store_dtype(x_ptr, N: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (N,), (1,), (0,), (N,), (0,))
    tl.store(p, tl.arange(0, N))


def e_sort_dim(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N)[:, None] + tl.arange(0, N)[None, :])
    y = tl.sort(x, dim=0)


def e_split(x_ptr, N: tl.constexpr):
    a, b = tl.split(tl.load(x_ptr + tl.arange(0, N)))


def e_cat(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    y = tl.cat(x, x)


def e_static_assert(x_ptr, N: tl.constexpr):
    tl.static_assert(N >= 64, "N too small")


def e_while_true(x_ptr, N: tl.constexpr):
    while N > 0:
        tl.store(x_ptr, 1.0)


def _mixed(x):
    if x > 0:
        return x
    return x.to(tl.int32)


mixed = jit_helper(_mixed)


def e_mixed_return(x_ptr):
    y = mixed(tl.load(x_ptr))


def e_while_type(x_ptr, n):
    acc = 0
    while n > 0:
        acc = tl.load(x_ptr)
        n -= 1


def e_return_value_one_path(x_ptr):
    y = half(tl.load(x_ptr))


def _half(x):
    if x > 0:
        return x


half = jit_helper(_half)

ERRORS = [
    (e_bp_mask, (ptr("x_ptr"), const("N", 8)), "tl.load(", 2, "cannot be specified for loading",
     "boundary_check"),
    (e_bp_store_dtype, (ptr("x_ptr"), const("N", 8)), "tl.store(", 2,
     "block element type (fp32) and value element type (int32) mismatch", "value.to(tl.float32)"),
    (e_sort_dim, (ptr("x_ptr"), const("N", 8)), "tl.sort(", 2,
     "only minor dimension is currently supported", "last dim"),
    (e_split, (ptr("x_ptr"), const("N", 8)), "tl.split(", 1, "last dim is 2", "tl.reshape"),
    (e_cat, (ptr("x_ptr"), const("N", 8)), "tl.cat(", 2, "may reorder", "can_reorder=True"),
    (e_static_assert, (ptr("x_ptr"), const("N", 8)), "tl.static_assert(", 1,
     "static_assert failed: N too small", None),
    (e_while_true, (ptr("x_ptr"), const("N", 8)), "N > 0", 1, "always true", "condition"),
    (e_mixed_return, (ptr("x_ptr"),), "mixed(", 1, "Return type mismatch: the then block",
     "same dtype"),
    (e_while_type, (ptr("x_ptr"), scalar("n")), "while", 2,
     "loop-carried variable 'acc' has initial type", "tl.zeros"),
]


@pytest.mark.parametrize("fn,spec,snippet,offset,reason,hint", ERRORS,
                         ids=[c[0].__name__ for c in ERRORS])
def test_language_errors_point_at_user_line(fn, spec, snippet, offset, reason, hint):
    with pytest.raises(CompilationError) as info:
        ttir(fn, *spec)
    e = info.value
    loc = e.loc.root()
    line = fn.__code__.co_firstlineno + offset
    src_line = linecache.getline(THIS_FILE, line)
    assert (loc.file, loc.line, loc.col) == (THIS_FILE, line, src_line.index(snippet) + 1)
    assert reason in e.reason, e.reason
    if hint is not None:
        assert hint in e.hint, e.hint
    assert "^" in str(e).splitlines()[2]


def test_return_on_one_path_only_yields_poison_on_the_other():
    # Triton ends the helper with ub.poison, and canonicalize folds the if to the value
    text = ttir(e_return_value_one_path, ptr("x_ptr"))
    assert "ub.poison" in text and "scf.if" in text


def test_break_in_while_is_rejected():
    def k(x_ptr, n):
        while n > 0:
            break
    with pytest.raises(UnsupportedError, match="break is not supported"):
        ttir(k, ptr("x_ptr"), scalar("n"))


def k_methods(x_ptr, N: tl.constexpr):
    idx = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + idx)
    y = x.T.ravel().sort().flip()
    tl.store(x_ptr + tl.arange(0, N * N), y)


def test_tensor_methods():
    filecheck(ttir(k_methods, ptr("x_ptr"), const("N", 4)), """
CHECK: %y = tt.trans %x_{{[0-9]+}} {order = array<i32: 1, 0>} : tensor<4x4xf32> -> tensor<4x4xf32>
CHECK: tt.reshape %y : tensor<4x4xf32> -> tensor<16xf32>
CHECK: tt.split
CHECK: tt.bitcast
CHECK: tt.store
""")
