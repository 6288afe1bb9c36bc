"""@jit(noinline=True): a private tt.func per specialisation reached by tt.call in ttir (the
text Triton 3.6 prints), run on every backend (which inline the call on their copy)."""
import numpy as np
import pytest
from fe_helpers import filecheck

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit(noinline=True)
def _fma1(a, b):
    return a * b + 1.0


@wb.jit(noinline=True)
def _put(p, v):
    tl.store(p, v)


@wb.jit(noinline=True)
def _two(x, y, K: tl.constexpr):
    return x + K, y * K


@wb.jit
def calls_kernel(x_ptr, o_ptr, q_ptr):
    pid = tl.program_id(0)
    a = tl.load(x_ptr + pid)
    _put(o_ptr + pid, _fma1(a, a))
    if pid % 2 == 0:  # a call inside a branch, and the same callee again
        s, t = _two(a, pid, 3)
        _put(q_ptr + pid, s + t)
    else:
        _put(q_ptr + pid, _fma1(a, 2.0))


def _expected(x):
    out = x * x + np.float32(1.0)
    pid = np.arange(x.size)
    q = np.where(pid % 2 == 0, (x + 3) + (pid * 3).astype(np.float32), x * np.float32(2) + 1)
    return out, q.astype(np.float32)


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_noinline_helpers_run(target):
    rng = np.random.default_rng()
    x = rng.standard_normal(10).astype(np.float32)
    o = np.full(10, np.nan, np.float32)
    q = np.full(10, np.nan, np.float32)
    k = wb.compile(calls_kernel, x, o, q, target=target)
    k[(10,)](x, o, q)
    want_o, want_q = _expected(x)
    np.testing.assert_allclose(o, want_o, rtol=1e-6)
    np.testing.assert_allclose(q, want_q, rtol=1e-6)


def test_ttir_has_private_functions_and_calls():
    text = wb.compile(calls_kernel, "*fp32", "*fp32", "*fp32", target="interpreter").asm["ttir"]
    mod = __name__
    filecheck(text, """
CHECK: tt.func public @calls_kernel(
CHECK: %[[R:.*]] = tt.call @MOD._fma1__fp32_fp32__(%[[A:.*]], %[[A]]) : (f32, f32) -> f32
CHECK: tt.call @MOD._put__Pfp32_fp32__(%{{.*}}, %[[R]]) : (!tt.ptr<f32>, f32) -> ()
CHECK: scf.if
CHECK: tt.call @"MOD._two__fp32_i32__(2,)cconstexpr_3_"(%[[A]], %{{.*}}) : (f32, i32) -> (f32, i32)
CHECK: } else {
CHECK: tt.call @"MOD._fma1__fp32__(1,)cconstexpr_2_d_0_"(%[[A]]) : (f32) -> f32
CHECK: tt.func private @MOD._fma1__fp32_fp32__(%a: f32, %b: f32) -> f32
CHECK-SAME: attributes {noinline = true} {
CHECK-NEXT: arith.constant 1.000000e+00 : f32
CHECK-NEXT: arith.mulf %a, %b : f32
CHECK-NEXT: arith.addf
CHECK-NEXT: tt.return %{{.*}} : f32
CHECK: tt.func private @MOD._put__Pfp32_fp32__(%p: !tt.ptr<f32>, %v: f32)
CHECK-SAME: attributes {noinline = true} {
CHECK-NEXT: tt.store %p, %v : !tt.ptr<f32>
CHECK-NEXT: tt.return
CHECK: tt.func private @"MOD._two__fp32_i32__(2,)cconstexpr_3_"(%x: f32, %y: i32) -> (f32, i32)
""".replace("MOD", mod))
    # one private function per specialisation (a constant argument is part of it, as in
    # Triton): _fma1 twice, _put once for its three calls, _two once
    assert text.count("tt.func private") == 4
    assert f'tt.func private @"{mod}._fma1__fp32__(1,)cconstexpr_2_d_0_"(%a: f32)' in text


def test_cuda_targets_compile_the_calls():
    k = wb.compile(calls_kernel, "*fp32", "*fp32", "*fp32", target="cuda:90")
    assert "tt.call" in k.asm["ttir"]
    assert "tt.call" not in k.asm["ttgir"]  # inlined before the ttgir passes
    assert "st.global" in k.asm["ptx"]


@wb.jit(noinline=True)
def _scale_tile(v, s):
    return v * s


@wb.jit
def tile_arg_kernel(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(x_ptr + offs, _scale_tile(tl.load(x_ptr + offs), 3.0))


def test_tile_argument_refused_on_cuda_as_triton():
    with pytest.raises(CompilationError) as e:
        wb.compile(tile_arg_kernel, "*fp32", N=32, target="cuda:90")
    msg = str(e.value)
    assert "marked noinline, but was called with non-scalar argument" in msg
    assert "_scale_tile(tl.load(x_ptr + offs), 3.0)" in msg


@pytest.mark.parametrize("target", ["interpreter", "cpu"])
def test_tile_argument_inlined_on_host_targets(target):
    """Triton's interpreter runs a noinline helper as a Python call, tiles and all."""
    x = np.random.default_rng().standard_normal(32).astype(np.float32)
    want = x * np.float32(3.0)
    k = wb.compile(tile_arg_kernel, x, N=32, target=target)
    assert "tt.call" not in k.asm["ttir"]
    k[(1,)](x)
    np.testing.assert_allclose(x, want, rtol=1e-6)
