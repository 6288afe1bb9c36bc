"""canonicalize: folding (C integer semantics, wrap-around, float rounding), identities,
shape-op simplification, constant hoisting and dedup."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.filecheck_util import check
from tests.passes.util import kernel, run
from workbench.ir.types import IntType
from workbench.passes import Canonicalize
from workbench.passes.fold import fold_binary, fold_cast, fold_cmp, round_float


def canon(body):
    return run([Canonicalize()], kernel(body))


def test_integer_division_truncates_and_remainder_takes_dividend_sign():
    out = canon("""
        %a = arith.constant -7 : i32
        %b = arith.constant 2 : i32
        %q = arith.divsi %a, %b : i32
        %r = arith.remsi %a, %b : i32
        %s = arith.addi %q, %n : i32
        %t = arith.addi %r, %n : i32
        tt.store %p, %f : !tt.ptr<f32>
        %u = arith.muli %s, %t : i32
        %v = tt.addptr %p, %u : !tt.ptr<f32>, i32
        tt.store %v, %f : !tt.ptr<f32>
    """)
    check(out, """
CHECK: %c-3_i32 = arith.constant -3 : i32
CHECK-NEXT: %c-1_i32 = arith.constant -1 : i32
CHECK-NEXT: %s = arith.addi %c-3_i32, %n : i32
CHECK-NEXT: %t = arith.addi %c-1_i32, %n : i32
CHECK-NOT: arith.divsi
CHECK-NOT: arith.remsi
""")


def test_wrap_around_and_unsigned_ops():
    out = canon("""
        %a = arith.constant 2147483647 : i32
        %b = arith.constant 1 : i32
        %c = arith.addi %a, %b : i32
        %d = arith.constant -1 : i32
        %e = arith.divui %d, %a : i32
        %g = arith.shrui %d, %b : i32
        %h = arith.shli %a, %b : i32
        %v1 = tt.addptr %p, %c : !tt.ptr<f32>, i32
        tt.store %v1, %f : !tt.ptr<f32>
        %v2 = tt.addptr %p, %e : !tt.ptr<f32>, i32
        tt.store %v2, %f : !tt.ptr<f32>
        %v3 = tt.addptr %p, %g : !tt.ptr<f32>, i32
        tt.store %v3, %f : !tt.ptr<f32>
        %v4 = tt.addptr %p, %h : !tt.ptr<f32>, i32
        tt.store %v4, %f : !tt.ptr<f32>
    """)
    # INT_MAX + 1 wraps to INT_MIN; 0xFFFFFFFF /u INT_MAX = 2; -1 >>u 1 = INT_MAX;
    # INT_MAX << 1 = -2.
    check(out, """
CHECK-DAG: %[[MIN:.*]] = arith.constant -2147483648 : i32
CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i32
CHECK-DAG: %[[MAX:.*]] = arith.constant 2147483647 : i32
CHECK-DAG: %[[M2:.*]] = arith.constant -2 : i32
CHECK: %v1 = tt.addptr %p, %[[MIN]]
CHECK: %v2 = tt.addptr %p, %[[TWO]]
CHECK: %v3 = tt.addptr %p, %[[MAX]]
CHECK: %v4 = tt.addptr %p, %[[M2]]
""")


def test_division_by_zero_is_not_folded():
    out = canon("""
        %a = arith.constant 7 : i32
        %z = arith.constant 0 : i32
        %q = arith.divsi %a, %z : i32
        %v = tt.addptr %p, %q : !tt.ptr<f32>, i32
        tt.store %v, %f : !tt.ptr<f32>
    """)
    check(out, "CHECK: %q = arith.divsi %a, %z : i32\n")


def test_float_folding_rounds_to_the_type_and_compares():
    out = canon("""
        %a = arith.constant 1.000000e-01 : f32
        %b = arith.constant 2.000000e-01 : f32
        %c = arith.addf %a, %b : f32
        %nan = arith.constant 0x7FC00000 : f32
        %lt = arith.cmpf olt, %nan, %a : f32
        %ult = arith.cmpf ult, %nan, %a : f32
        %s = arith.select %lt, %c, %f : i1, f32
        %t = arith.select %ult, %c, %f : i1, f32
        %u = arith.addf %s, %t : f32
        tt.store %p, %u : !tt.ptr<f32>
    """)
    # float32(0.1) + float32(0.2) = 0.300000012 (prints 3.000000e-01); olt with NaN is false,
    # so %s is %f; ult with NaN is true, so %t is the folded constant.
    check(out, """
CHECK: %[[C:.*]] = arith.constant 3.000000e-01 : f32
CHECK-NEXT: %u = arith.addf %f, %[[C]] : f32
CHECK-NEXT: tt.store %p, %u
""")


def test_identities():
    out = canon("""
        %z = arith.constant 0 : i32
        %o = arith.constant 1 : i32
        %a = arith.addi %n, %z : i32
        %b = arith.muli %a, %o : i32
        %c = arith.muli %b, %z : i32
        %d = arith.subi %m, %m : i32
        %e = arith.addi %c, %d : i32
        %g = arith.addi %b, %e : i32
        %fz = arith.constant -0.000000e+00 : f32
        %fo = arith.constant 1.000000e+00 : f32
        %h = arith.addf %f, %fz : f32
        %i = arith.mulf %fo, %h : f32
        %pz = arith.constant 0.000000e+00 : f32
        %j = arith.addf %i, %pz : f32
        %v = tt.addptr %p, %g : !tt.ptr<f32>, i32
        tt.store %v, %j : !tt.ptr<f32>
    """)
    # x+0, x*1, x*0, x-x and float x + -0.0, 1.0*x fold; float x + (+0.0) must stay (-0 + 0 = +0).
    check(out, """
CHECK: %pz = arith.constant 0.000000e+00 : f32
CHECK-NEXT: %j = arith.addf %f, %pz : f32
CHECK-NEXT: %v = tt.addptr %p, %n : !tt.ptr<f32>, i32
CHECK-NEXT: tt.store %v, %j
""")


def test_splat_broadcast_expand_dims_of_constants_and_splats():
    out = canon("""
        %c = arith.constant 3 : i32
        %s = tt.splat %c : i32 -> tensor<4xi32>
        %e = tt.expand_dims %s {axis = 0 : i32} : tensor<4xi32> -> tensor<1x4xi32>
        %b = tt.broadcast %e : tensor<1x4xi32> -> tensor<8x4xi32>
        %sn = tt.splat %n : i32 -> tensor<4xi32>
        %en = tt.expand_dims %sn {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
        %bn = tt.broadcast %en : tensor<4x1xi32> -> tensor<4x8xi32>
        %t = tt.trans %bn {order = array<i32: 1, 0>} : tensor<4x8xi32> -> tensor<8x4xi32>
        %sum = arith.addi %b, %t : tensor<8x4xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<8x4x!tt.ptr<f32>>
        %pp = tt.addptr %ps, %sum : tensor<8x4x!tt.ptr<f32>>, tensor<8x4xi32>
        %fs = tt.splat %f : f32 -> tensor<8x4xf32>
        tt.store %pp, %fs : tensor<8x4x!tt.ptr<f32>>
    """)
    check(out, """
CHECK: %cst = arith.constant dense<3> : tensor<8x4xi32>
CHECK-NEXT: %bn = tt.splat %n : i32 -> tensor<4x8xi32>
CHECK-NEXT: %t = tt.trans %bn
CHECK-NEXT: %sum = arith.addi %cst, %t : tensor<8x4xi32>
CHECK-NOT: tt.expand_dims
CHECK-NOT: tt.broadcast
""")


def test_select_with_constant_condition_cmp_folding_and_addptr_zero():
    out = canon("""
        %a = arith.constant 5 : i32
        %b = arith.constant 9 : i32
        %lt = arith.cmpi slt, %a, %b : i32
        %ugt = arith.cmpi ugt, %n, %n : i32
        %s = arith.select %lt, %n, %m : i1, i32
        %t = arith.select %ugt, %n, %m : i1, i32
        %z = arith.constant dense<0> : tensor<4xi32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
        %pz = tt.addptr %ps, %z : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
        %u = arith.addi %s, %t : i32
        %fs = tt.splat %f : f32 -> tensor<4xf32>
        tt.store %pz, %fs : tensor<4x!tt.ptr<f32>>
        %q = tt.addptr %p, %u : !tt.ptr<f32>, i32
        tt.store %q, %f : !tt.ptr<f32>
    """)
    check(out, """
CHECK: %ps = tt.splat %p
CHECK-NEXT: %u = arith.addi %n, %m : i32
CHECK-NEXT: %fs = tt.splat %f
CHECK-NEXT: tt.store %ps, %fs
CHECK-NOT: arith.cmpi
CHECK-NOT: arith.select
""")


def test_constants_are_hoisted_and_deduplicated_across_regions():
    out = canon("""
        %c0 = arith.constant 0 : i32
        %c1 = arith.constant 1 : i32
        scf.for %i = %c0 to %n step %c1 : i32 {
          %k = arith.constant 4 : i32
          %one = arith.constant 1 : i32
          %a = arith.addi %i, %k : i32
          %b = arith.muli %a, %one : i32
          %v = tt.addptr %p, %b : !tt.ptr<f32>, i32
          tt.store %v, %f : !tt.ptr<f32>
          scf.yield
        }
    """)
    check(out, """
CHECK: tt.func public @k
CHECK-NEXT: %c0 = arith.constant 0 : i32
CHECK-NEXT: %c1 = arith.constant 1 : i32
CHECK-NEXT: %k = arith.constant 4 : i32
CHECK-NEXT: scf.for %i = %c0 to %n step %c1 : i32 {
CHECK-NEXT: %a = arith.addi %i, %k : i32
CHECK-NEXT: %v = tt.addptr %p, %a
""")


def test_reduce_region_constants_stay_inside_and_dead_ops_go():
    out = canon("""
        %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
        %unused = arith.addi %r, %r : tensor<8xi32>
        %s = "tt.reduce"(%r) <{axis = 0 : i32}> ({
        ^bb0(%a: i32, %b: i32):
          %two = arith.constant 2 : i32
          %x = arith.muli %a, %two : i32
          %y = arith.addi %x, %b : i32
          tt.reduce.return %y : i32
        }) : (tensor<8xi32>) -> i32
        %v = tt.addptr %p, %s : !tt.ptr<f32>, i32
        tt.store %v, %f : !tt.ptr<f32>
    """)
    check(out, """
CHECK: %r = tt.make_range
CHECK-NEXT: %s = "tt.reduce"(%r)
CHECK-NEXT: ^bb0(%a: i32, %b: i32):
CHECK-NEXT: %two = arith.constant 2 : i32
CHECK-NEXT: %x = arith.muli %a, %two
CHECK-NOT: %unused
""")


# fold.py against numpy's fixed-width arithmetic ------------------------------------------

_NPI = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([8, 16, 32, 64]), st.integers(), st.integers(),
       st.sampled_from(["addi", "subi", "muli", "andi", "ori", "xori", "maxsi", "minsi"]))
def test_integer_folds_match_numpy_wraparound(width, a, b, op):
    t = _NPI[width]
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    a, b = max(lo, min(hi, a)), max(lo, min(hi, b))
    x, y = np.array([a], t), np.array([b], t)
    with np.errstate(over="ignore"):
        want = {"addi": x + y, "subi": x - y, "muli": x * y, "andi": x & y, "ori": x | y,
                "xori": x ^ y, "maxsi": np.maximum(x, y), "minsi": np.minimum(x, y)}[op]
    assert fold_binary(op, a, b, IntType(width)) == int(want[0])


@settings(max_examples=150, deadline=None)
@given(st.integers(-(1 << 31), (1 << 31) - 1), st.integers(-(1 << 31), (1 << 31) - 1))
def test_signed_division_is_c_truncation(a, b):
    q = fold_binary("divsi", a, b, IntType(32))
    r = fold_binary("remsi", a, b, IntType(32))
    if b == 0 or (a == -(1 << 31) and b == -1):
        assert q is None and r is None
        return
    assert q == int(np.trunc(np.float64(a) / np.float64(b))) or abs(a) > (1 << 52)
    assert q * b + r == a and abs(r) < abs(b) and (r == 0 or (r < 0) == (a < 0))


@pytest.mark.parametrize("pred,a,b,want", [
    ("slt", -1, 0, True), ("ult", -1, 0, False), ("sge", 3, 3, True), ("ne", 1, 2, True),
    ("uge", 0, -1, False)])
def test_cmpi_signed_and_unsigned(pred, a, b, want):
    assert fold_cmp("arith.cmpi", pred, a, b, IntType(32)) is want


def test_casts_and_rounding():
    from workbench.ir.types import f16, f32, i8, i32, i64
    assert fold_cast("extsi", -1, i8, i32) == -1
    assert fold_cast("extui", -1, i8, i32) == 255
    assert fold_cast("trunci", 300, i32, i8) == 44
    assert fold_cast("fptosi", -2.7, f32, i32) == -2
    assert fold_cast("fptosi", 3e10, f32, i32) is None
    assert fold_cast("uitofp", -1, i32, f32) == 4294967296.0
    assert fold_cast("truncf", 1.0009765625 + 2 ** -12, f32, f16) == 1.0009765625
    assert fold_cast("sitofp", (1 << 24) + 1, i64, f32) == float(1 << 24)
    assert round_float(1.00390625, "bf16") == 1.0  # ties to even
    assert round_float(1.01171875, "bf16") == 1.015625


def test_product_of_products_with_constants_folds_the_constants():
    out = canon("""
        %a = arith.constant 6 : i32
        %b = arith.constant 7 : i32
        %x = arith.muli %n, %a : i32
        %y = arith.muli %x, %b : i32
        %t = arith.constant dense<3> : tensor<4xi32>
        %s = tt.splat %m : i32 -> tensor<4xi32>
        %u = arith.muli %s, %t : tensor<4xi32>
        %w = arith.muli %u, %t : tensor<4xi32>
        %v = tt.addptr %p, %y : !tt.ptr<f32>, i32
        tt.store %v, %f : !tt.ptr<f32>
        %ps = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
        %q = tt.addptr %ps, %w : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
        %g = tt.load %q : tensor<4x!tt.ptr<f32>>
        tt.store %q, %g : tensor<4x!tt.ptr<f32>>
    """)
    # scalars: n * 6 * 7 -> n * 42 (MLIR's MulIMulIConstant); tensors are left as they are
    check(out, """
CHECK: %c42_i32 = arith.constant 42 : i32
CHECK: %y = arith.muli %n, %c42_i32 : i32
CHECK-NEXT: %s = tt.splat %m
CHECK-NEXT: %u = arith.muli %s, %t
CHECK-NEXT: %w = arith.muli %u, %t
""")


#: (inner, outer) forms of two chained addi/subi with a constant each; x is %n
_ADD_SUB_FORMS = [
    ("arith.addi %n, %c0", "arith.addi %i, %c1"), ("arith.addi %c0, %n", "arith.addi %c1, %i"),
    ("arith.subi %n, %c0", "arith.addi %i, %c1"), ("arith.subi %c0, %n", "arith.addi %i, %c1"),
    ("arith.addi %n, %c0", "arith.subi %i, %c1"), ("arith.addi %n, %c0", "arith.subi %c1, %i"),
    ("arith.subi %n, %c0", "arith.subi %i, %c1"), ("arith.subi %c0, %n", "arith.subi %i, %c1"),
    ("arith.subi %n, %c0", "arith.subi %c1, %i"), ("arith.subi %c0, %n", "arith.subi %c1, %i"),
]


def _eval(form: str, x: int, c0: int, c1: int, i: int = 0) -> int:
    name, a, b = form.replace(",", "").split()
    env = {"%n": x, "%c0": c0, "%c1": c1, "%i": i}
    va, vb = env[a], env[b]
    return (va + vb if name == "arith.addi" else va - vb) % 2**32


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(_ADD_SUB_FORMS), st.integers(-2**31, 2**31 - 1),
       st.integers(-2**31, 2**31 - 1), st.integers(-2**31, 2**31 - 1))
def test_chained_add_sub_with_constants_fold_into_one_op(form, c0, c1, x):
    # (x + c0) - c1 -> x + (c0 - c1) and the other forms of MLIR's arith canonicalization,
    # wrapping at 32 bits; the result must equal the chain for a random x
    inner, outer = form
    out = canon(f"""
        %c0 = arith.constant {c0} : i32
        %c1 = arith.constant {c1} : i32
        %i = {inner} : i32
        %y = {outer} : i32
        %v = tt.addptr %p, %y : !tt.ptr<f32>, i32
        tt.store %v, %f : !tt.ptr<f32>
    """)
    ops = [ln.split("=", 1)[1].strip() for ln in out.splitlines()
           if "arith.addi" in ln or "arith.subi" in ln]
    assert len(ops) <= 1, out
    want = _eval(outer, x, c0, c1, _eval(inner, x, c0, c1))
    if not ops:  # the constants cancelled: the address is %n itself
        assert "tt.addptr %p, %n" in out and want == x % 2**32
        return
    consts = {ln.split()[0]: int(ln.split()[3]) for ln in out.splitlines()
              if "arith.constant" in ln and ": i32" in ln}
    name, a, b = ops[0].split(":")[0].replace(",", "").split()
    va = x if a == "%n" else consts[a]
    vb = x if b == "%n" else consts[b]
    got = (va + vb if name == "arith.addi" else va - vb) % 2**32
    assert got == want
