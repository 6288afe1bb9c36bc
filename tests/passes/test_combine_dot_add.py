"""triton-combine: ``x + dot(a, b, 0)`` becomes ``dot(a, b, x)`` (either side, float and
integer) when the dot's result has no other use; left alone otherwise. The fused form computes
what the unfused one computes (attention's ``acc * alpha + tl.dot(p, v)`` on the CPU
backend against numpy)."""
from __future__ import annotations

import numpy as np

import workbench as wb
import workbench.language as tl
from tests.filecheck_util import check
from tests.passes.util import kernel, run
from workbench.passes import get_pass

F = "tensor<16x16xf32>"
H = "tensor<16x16xf16>"
DOT = f"{H} * {H} -> {F}"


def _body(extra: str, add: str = "%s = arith.addf %x, %d : " + F) -> str:
    return f"""
        %z = arith.constant dense<0.000000e+00> : {F}
        %one = arith.constant dense<1.000000e+00> : {F}
        %ah = arith.constant dense<2.000000e+00> : {H}
        %x = tt.splat %f : f32 -> {F}
        %d = tt.dot %ah, %ah, %z, inputPrecision = tf32 : {DOT}
        {add}
        {extra}
        %r = tt.make_range {{end = 16 : i32, start = 0 : i32}} : tensor<16xi32>
        %c = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
        %e = tt.expand_dims %c {{axis = 1 : i32}} : tensor<16x!tt.ptr<f32>> -> tensor<16x1x!tt.ptr<f32>>
        %b = tt.broadcast %e : tensor<16x1x!tt.ptr<f32>> -> tensor<16x16x!tt.ptr<f32>>
        tt.store %b, %s : tensor<16x16x!tt.ptr<f32>>
    """  # noqa: E501


def test_add_of_a_zero_accumulator_dot_folds_into_the_dot():
    out = run([get_pass("triton-combine")], kernel(_body("")))
    check(out, f"""
CHECK: %x = tt.splat %f
CHECK-NEXT: %d = tt.dot %ah, %ah, %x, inputPrecision = tf32 : {DOT}
CHECK-NOT: arith.addf
CHECK: tt.store %b, %d
""")


def test_dot_on_the_left_of_the_add_folds_too():
    out = run([get_pass("triton-combine")],
              kernel(_body("", "%s = arith.addf %d, %x : " + F)))
    check(out, f"""
CHECK: %d = tt.dot %ah, %ah, %x, inputPrecision = tf32 : {DOT}
CHECK-NOT: arith.addf
""")


def test_dot_with_a_second_use_is_left_alone():
    text = _body(f"%u = arith.mulf %d, %d : {F}")
    text += "        tt.store %b, %u : tensor<16x16x!tt.ptr<f32>>\n"
    out = run([get_pass("triton-combine")], kernel(text))
    assert "%s = arith.addf %x, %d" in out and "tt.dot %ah, %ah, %z" in out


def test_dot_with_a_non_zero_accumulator_is_left_alone():
    out = run([get_pass("triton-combine")],
              kernel(_body("").replace("%ah, %ah, %z", "%ah, %ah, %one")))
    assert "%s = arith.addf %x, %d" in out and "tt.dot %ah, %ah, %one" in out


def test_float_add_of_a_dot_limiting_imprecise_accumulation_is_left_alone():
    text = _body("").replace("inputPrecision = tf32 :",
                             "inputPrecision = tf32 {maxNumImpreciseAcc = 32 : i32} :")
    out = run([get_pass("triton-combine")], kernel(text))
    assert "arith.addf %x, %d" in out


def test_integer_add_folds():
    i = "tensor<16x16xi32>"
    i8 = "tensor<16x16xi8>"
    text = f"""
        %z = arith.constant dense<0> : {i}
        %a = arith.constant dense<3> : {i8}
        %x = tt.splat %n : i32 -> {i}
        %d = tt.dot %a, %a, %z : {i8} * {i8} -> {i}
        %s = arith.addi %d, %x : {i}
        %c = tt.splat %p : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
        %e = tt.expand_dims %c {{axis = 1 : i32}} : tensor<16x!tt.ptr<f32>> -> tensor<16x1x!tt.ptr<f32>>
        %b = tt.broadcast %e : tensor<16x1x!tt.ptr<f32>> -> tensor<16x16x!tt.ptr<f32>>
        %v = arith.sitofp %s : {i} to {F}
        tt.store %b, %v : tensor<16x16x!tt.ptr<f32>>
    """  # noqa: E501
    out = run([get_pass("triton-combine")], kernel(text))
    check(out, f"""
CHECK: %d = tt.dot %a, %a, %x : {i8} * {i8} -> {i}
CHECK-NOT: arith.addi
CHECK: arith.sitofp %d
""")


@wb.jit
def rescale_plus_dot(a_ptr, b_ptr, c_ptr, alpha, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    acc = tl.load(c_ptr + r[:, None] * N + r[None, :])
    for _ in range(2):
        acc = acc * alpha + tl.dot(a, b)
    tl.store(c_ptr + r[:, None] * N + r[None, :], acc)


def test_fused_accumulator_computes_the_sum_on_the_cpu():
    rng = np.random.default_rng()
    n = 16
    a, b = (rng.standard_normal((n, n)).astype(np.float16) for _ in range(2))
    c0 = rng.standard_normal((n, n)).astype(np.float32)
    alpha = float(rng.uniform(0.5, 1.5))
    c = c0.copy()
    rescale_plus_dot[(1,)](a, b, c, alpha, N=n)
    ab = a.astype(np.float64) @ b.astype(np.float64)
    want = (c0 * alpha + ab) * alpha + ab
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-2)
    ttir = wb.compile(rescale_plus_dot, "*fp16", "*fp16", "*fp32", "fp32", N=n,
                      target="cpu").asm["ttir"]
    body = ttir[ttir.index("scf.for"):ttir.index("scf.yield")]
    assert "tt.dot" in body and "arith.addf" not in body
