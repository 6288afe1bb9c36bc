"""CPU backend: scf.while (scalar and tile loop-carried values) and tt.dot numerics (TF32
emulation equal to the interpreter, fp16/bf16 -> fp32, int8 -> int32), vs numpy with fresh
random inputs and poisoned outputs."""
from __future__ import annotations

import numpy as np
import pytest

from tests.ir_kit import K, ptr, run
from workbench.backends.interpreter import InterpreterBackend
from workbench.config import CompileContext, Options, Target
from workbench.ir.builder import Builder
from workbench.ir.core import Value
from workbench.ir.types import TensorType, bf16, f16, f32, f64, i8, i32

rng = np.random.default_rng()


def build_while(k, inits, before, after):
    """scf.while with ``before(k, args) -> (cond, forwarded)`` and ``after(k, args) ->
    yields``; returns the results."""
    op = k.b.create("scf.while", list(inits), [], {}, regions=2)
    bblk = op.regions[0].add_block([v.type for v in inits])
    saved = k.b
    k.b = Builder(bblk, loc=saved.loc)
    cond, fwd = before(k, list(bblk.args))
    k.b.create("scf.condition", [cond] + list(fwd), [])
    fwd_types = [v.type for v in fwd]
    ablk = op.regions[1].add_block(fwd_types)
    k.b = Builder(ablk, loc=saved.loc)
    ys = after(k, list(ablk.args))
    k.b.create("scf.yield", list(ys), [])
    k.b = saved
    op.results = [Value(t, op, i) for i, t in enumerate(fwd_types)]
    return op.results


def test_while_scalar_collatz_steps_per_program():
    k = K("collatz", [("x", ptr(i32)), ("o", ptr(i32))])
    xp, o = k.args
    pid = k.pid()
    n0 = k.load(k.addptr(xp, pid))
    zero = k.const(0, i32)

    def before(k, a):
        n, steps = a
        return k.cmp("arith.cmpi", "sgt", n, k.const(1, i32)), [steps, n]

    def after(k, a):
        steps, n = a
        odd = k.cmp("arith.cmpi", "ne", k.bin("arith.andi", n, k.const(1, i32)), k.const(0, i32))
        up = k.bin("arith.addi", k.bin("arith.muli", n, k.const(3, i32)), k.const(1, i32))
        down = k.bin("arith.divsi", n, k.const(2, i32))
        nxt = k.op("arith.select", [odd, up, down], i32)
        return [nxt, k.bin("arith.addi", steps, k.const(1, i32))]
    steps, last = build_while(k, [n0, zero], before, after)
    k.store(k.addptr(o, pid), k.bin("arith.addi", k.bin("arith.muli", steps, k.const(10, i32)),
                                     last))
    res = k.ret().compile()
    x = rng.integers(1, 200, 37).astype(np.int32)
    out = np.full(37, -7, np.int32)
    run(res, 37, x, out)

    def ref(n):
        s = 0
        while n > 1:
            n = 3 * n + 1 if n % 2 else n // 2
            s += 1
        return 10 * s + n
    np.testing.assert_array_equal(out, [ref(int(v)) for v in x])


def test_while_tile_carried_doubles_until_sum_exceeds_limit_and_swaps():
    B = 64
    t = TensorType((B,), f32)
    k = K("dbl", [("x", ptr(f32)), ("o", ptr(f32)), ("p", ptr(f32)), ("c", ptr(i32)),
                  ("limit", f32)])
    xp, o, p, c, limit = k.args
    r = k.arange(0, B)
    x = k.load(k.addptr(xp, r))
    y = k.bin("arith.subf", k.const(0.0, t), x)

    def before(k, a):
        u, v, n = a
        s = k.reduce(k.op("math.absf", [u], t), 0)
        return k.cmp("arith.cmpf", "olt", s, limit), [u, v, n]

    def after(k, a):
        u, v, n = a
        two = k.const(2.0, t)
        # swap-and-scale: (u, v) <- (2 * v, u): reads both carried tiles
        return [k.bin("arith.mulf", v, two), u, k.bin("arith.addi", n, k.const(1, i32))]
    u, v, n = build_while(k, [x, y, k.const(0, i32)], before, after)
    k.store(k.addptr(o, r), u)
    k.store(k.addptr(p, r), v)
    k.store(c, n)
    res = k.ret().compile()
    xs = rng.standard_normal(B).astype(np.float32)
    lim = np.float32(1000.0)
    out, out2 = (np.full(B, np.nan, np.float32) for _ in range(2))
    cnt = np.full(1, -1, np.int32)
    run(res, 1, xs, out, out2, cnt, float(lim))
    u_, v_, n_ = xs.copy(), -xs, 0
    while np.abs(u_).sum(dtype=np.float32) < lim:
        u_, v_, n_ = (v_ * np.float32(2)).astype(np.float32), u_, n_ + 1
    assert cnt[0] == n_ and n_ > 3
    np.testing.assert_array_equal(out, u_)
    np.testing.assert_array_equal(out2, v_)


def test_while_zero_iterations_returns_inits():
    k = K("z", [("o", ptr(i32)), ("n", i32)])
    o, n = k.args

    def before(k, a):
        return k.cmp("arith.cmpi", "slt", a[0], n), [a[0]]

    def after(k, a):
        return [k.bin("arith.addi", a[0], k.const(3, i32))]
    r, = build_while(k, [k.const(5, i32)], before, after)
    k.store(o, r)
    res = k.ret().compile()
    out = np.zeros(1, np.int32)
    for lim, exp in ((0, 5), (5, 5), (6, 8), (100, 101)):
        run(res, 1, out, lim)
        assert out[0] == exp


# ---- tt.dot -------------------------------------------------------------------------------
def _dot_kernel(M, N, Kd, in_t, acc_t, out_t, prec="tf32", with_acc=True):
    k = K("dot", [("a", ptr(in_t)), ("b", ptr(in_t)), ("c", ptr(acc_t)), ("o", ptr(out_t))])
    ap, bp, cp, op_ = k.args

    def offs(m, n):
        rm = k.bin("arith.muli", k.arange(0, m), k.const(n, TensorType((m,), i32)))
        return k.bin("arith.addi", k.broadcast(k.expand(rm, 1), (m, n)),
                     k.broadcast(k.expand(k.arange(0, n), 0), (m, n)))
    a = k.load(k.addptr(ap, offs(M, Kd)))
    b = k.load(k.addptr(bp, offs(Kd, N)))
    if with_acc:
        c = k.load(k.addptr(cp, offs(M, N)))
    else:
        c = k.const(0, TensorType((M, N), acc_t))
    d = k.op("tt.dot", [a, b, c], TensorType((M, N), acc_t), inputPrecision=prec,
             maxNumImpreciseAcc=0)
    if out_t != acc_t:
        d = k.op("arith.truncf", [d], TensorType((M, N), out_t))
    k.store(k.addptr(op_, offs(M, N)), d)
    k.ret()
    return k


def _interp(k, *args):
    ctx = CompileContext()
    res = InterpreterBackend(Target.parse("interpreter")).compile(k.module, None, Options(), ctx)
    run(res, 1, *args)


@pytest.mark.parametrize("prec", ["tf32", "ieee"])
def test_dot_fp32_tf32_matches_interpreter_exactly(prec):
    M, N, Kd = 16, 32, 16
    k = _dot_kernel(M, N, Kd, f32, f32, f32, prec)
    res = k.compile()
    # 9-bit values: every product and sum is exact in fp32 whatever the order; row 0 holds
    # TF32 ties (which round away from zero) so the rounding shows
    a = (rng.integers(-2 ** 8, 2 ** 8, (M, Kd)) / 2 ** 3).astype(np.float32)
    b = (rng.integers(-2 ** 8, 2 ** 8, (Kd, N)) / 2 ** 3).astype(np.float32)
    a[0] = 0
    a[0, :3] = [1 + 2 ** -11, -(1 + 2 ** -11), 1 + 3 * 2 ** -11]
    c = rng.integers(-50, 50, (M, N)).astype(np.float32)
    out = np.full((M, N), np.nan, np.float32)
    ref = np.full((M, N), np.nan, np.float32)
    run(res, 1, a, b, c, out)
    _interp(k, a, b, c, ref)
    np.testing.assert_array_equal(out, ref)
    full = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    if prec == "tf32":
        assert np.abs(out - full).max() > 0  # the rounding shows
    else:
        np.testing.assert_allclose(out, full, rtol=1e-6)


def test_dot_fp32_random_tf32_close_to_interpreter():
    M, N, Kd = 32, 64, 64
    k = _dot_kernel(M, N, Kd, f32, f32, f32, "tf32")
    res = k.compile()
    a = rng.standard_normal((M, Kd)).astype(np.float32)
    b = rng.standard_normal((Kd, N)).astype(np.float32)
    c = rng.standard_normal((M, N)).astype(np.float32)
    out, ref = np.full((M, N), np.nan, np.float32), np.full((M, N), np.nan, np.float32)
    run(res, 1, a, b, c, out)
    _interp(k, a, b, c, ref)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    full = c + a.astype(np.float64) @ b
    assert np.abs(out - full).max() > 1e-4  # tf32, not full fp32


@pytest.mark.parametrize("in_t,np_t", [(f16, np.float16), (bf16, "bf16")])
def test_dot_half_inputs_accumulate_fp32(in_t, np_t):
    M, N, Kd = 16, 16, 32
    k = _dot_kernel(M, N, Kd, in_t, f32, f32)
    res = k.compile()
    a32 = rng.standard_normal((M, Kd)).astype(np.float32)
    b32 = rng.standard_normal((Kd, N)).astype(np.float32)
    if np_t == "bf16":
        def to_bits(x):
            u = x.view(np.uint32)
            return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        a, b = to_bits(a32), to_bits(b32)
        fa = (a.astype(np.uint32) << 16).view(np.float32)
        fb = (b.astype(np.uint32) << 16).view(np.float32)
    else:
        a, b = a32.astype(np.float16), b32.astype(np.float16)
        fa, fb = a.astype(np.float32), b.astype(np.float32)
    c = rng.standard_normal((M, N)).astype(np.float32)
    out = np.full((M, N), np.nan, np.float32)
    run(res, 1, a, b, c, out)
    np.testing.assert_allclose(out, c + fa.astype(np.float64) @ fb, rtol=1e-5, atol=1e-5)


def test_dot_fp16_out_fp16_and_int8_int32_and_f64():
    M, N, Kd = 16, 16, 32
    res = _dot_kernel(M, N, Kd, f16, f16, f16, with_acc=False).compile()
    a = rng.standard_normal((M, Kd)).astype(np.float16)
    b = rng.standard_normal((Kd, N)).astype(np.float16)
    out = np.full((M, N), np.nan, np.float16)
    run(res, 1, a, b, np.zeros((M, N), np.float16), out)
    exact = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
    np.testing.assert_allclose(out.astype(np.float32), exact.astype(np.float32), rtol=2e-3,
                               atol=2e-3)

    res = _dot_kernel(M, N, Kd, i8, i32, i32).compile()
    a = rng.integers(-128, 128, (M, Kd)).astype(np.int8)
    b = rng.integers(-128, 128, (Kd, N)).astype(np.int8)
    c = rng.integers(-2 ** 31, 2 ** 31 - 1, (M, N)).astype(np.int32)
    out = np.full((M, N), -1, np.int32)
    run(res, 1, a, b, c, out)
    ref = (c.astype(np.int64) + a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(out, ref)

    res = _dot_kernel(M, N, Kd, f64, f64, f64).compile()
    a, b, c = (rng.standard_normal(s) for s in ((M, Kd), (Kd, N), (M, N)))
    out = np.full((M, N), np.nan)
    run(res, 1, a, b, c, out)
    # a sum of Kd + 1 float64 terms: at most (Kd + 1) roundings of 2^-53 relative to the sum of
    # the terms' magnitudes (cancellation can make the relative error of the result larger)
    bound = (Kd + 1) * 2.0 ** -53 * (np.abs(c) + np.abs(a) @ np.abs(b))
    assert np.all(np.abs(out - (c + a @ b)) <= 2 * bound)


def test_dot_nan_and_inf_pass_through_tf32():
    M = N = Kd = 16
    res = _dot_kernel(M, N, Kd, f32, f32, f32).compile()
    a = np.ones((M, Kd), np.float32)
    b = np.ones((Kd, N), np.float32)
    a[0, 0] = np.inf
    a[1, 1] = np.nan
    out = np.zeros((M, N), np.float32)
    run(res, 1, a, b, np.zeros((M, N), np.float32), out)
    assert np.isposinf(out[0]).all() and np.isnan(out[1]).all()
    assert (out[2:] == Kd).all()


def test_dot_is_fast_enough():
    import time
    M = N = Kd = 128
    res = _dot_kernel(M, N, Kd, f32, f32, f32, "ieee").compile()
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((M, Kd), (Kd, N), (M, N)))
    out = np.zeros((M, N), np.float32)
    run(res, 1, a, b, c, out)
    t0 = time.perf_counter()
    for _ in range(5):
        run(res, 1, a, b, c, out)
    dt = (time.perf_counter() - t0) / 5
    np.testing.assert_allclose(out, c + a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    assert dt < 0.02, f"128^3 dot took {dt * 1e3:.1f} ms"
