"""CPU backend kernels built from hand-written ttir, compared with numpy (fresh random inputs,
NaN/garbage-poisoned outputs)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.ir_kit import K, ptr, run
from workbench.ir.types import TensorType, bf16, f16, f32, f64, i1, i8, i32, i64

rng = np.random.default_rng()


def _vector_add(BLOCK):
    k = K("add", [("x_ptr", ptr(f32)), ("y_ptr", ptr(f32)), ("out_ptr", ptr(f32)), ("n", i32)])
    x, y, o, n = k.args
    pid = k.at(3).pid(0)
    start = k.at(4).bin("arith.muli", pid, k.const(BLOCK, i32))
    offs = k.bin("arith.addi", k.splat(start, (BLOCK,)), k.arange(0, BLOCK))
    mask = k.at(5).cmp("arith.cmpi", "slt", offs, k.splat(n, (BLOCK,)))
    a = k.at(6).load(k.addptr(x, offs), mask)
    b = k.load(k.addptr(y, offs), mask)
    k.at(7).store(k.addptr(o, offs), k.bin("arith.addf", a, b), mask)
    return k.ret().compile()


@pytest.mark.parametrize("n", [1, 100, 1024, 5000])
def test_vector_add_tail_mask(n):
    res = _vector_add(256)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.full(n + 7, np.nan, np.float32)  # poisoned, with guard elements past n
    run(res, (n + 255) // 256, x, y, out, n)
    np.testing.assert_array_equal(out[:n], x + y)
    assert np.isnan(out[n:]).all()


def test_empty_grid_makes_no_call():
    res = _vector_add(64)
    x = np.zeros(4, np.float32)
    out = np.full(4, np.nan, np.float32)
    run(res, (0, 1, 1), x, x, out, 4)
    run(res, (3, 0, 1), x, x, out, 4)
    assert np.isnan(out).all()


def test_broadcast_2d_outer_sum():
    # out[i, j] = a[i] * stride_scale + b[j], via expand_dims + broadcast, strided output
    M, N = 16, 32
    k = K("outer", [("a", ptr(f32)), ("b", ptr(f32)), ("o", ptr(f32)), ("stride", i32)])
    a, b, o, stride = k.args
    ri, rj = k.arange(0, M), k.arange(0, N)
    va = k.load(k.addptr(a, ri))
    vb = k.load(k.addptr(b, rj))
    col = k.broadcast(k.expand(va, 1), (M, N))
    row = k.broadcast(k.expand(vb, 0), (M, N))
    s = k.bin("arith.addf", col, row)
    ioff = k.bin("arith.muli", k.expand(ri, 1), k.splat(stride, (M, 1)))
    off = k.bin("arith.addi", k.broadcast(ioff, (M, N)), k.broadcast(k.expand(rj, 0), (M, N)))
    k.store(k.addptr(o, off), s)
    res = k.ret().compile()
    av = rng.standard_normal(M).astype(np.float32)
    bv = rng.standard_normal(N).astype(np.float32)
    out = np.full((M, 40), np.nan, np.float32)
    run(res, 1, av, bv, out, 40)
    np.testing.assert_array_equal(out[:, :N], av[:, None] + bv[None, :])
    assert np.isnan(out[:, N:]).all()


def _load_2d(k, p, M, N, stride):
    ri, rj = k.arange(0, M), k.arange(0, N)
    ioff = k.bin("arith.muli", k.expand(ri, 1), k.splat(stride, (M, 1)))
    off = k.bin("arith.addi", k.broadcast(ioff, (M, N)), k.broadcast(k.expand(rj, 0), (M, N)))
    return k.load(k.addptr(p, off)), ri, rj


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("combine,ref", [("arith.addf", np.sum), ("arith.maxnumf", np.max)])
def test_reduce_2d(axis, combine, ref):
    M, N = 8, 64
    k = K("red", [("x", ptr(f32)), ("o", ptr(f32)), ("stride", i32)])
    x, o, stride = k.args
    v, ri, rj = _load_2d(k, x, M, N, stride)
    r = k.reduce(v, axis, combine)
    k.store(k.addptr(o, rj if axis == 0 else ri), r)
    res = k.ret().compile()
    xv = rng.standard_normal((M, N + 3)).astype(np.float32)
    out = np.full(N if axis == 0 else M, np.nan, np.float32)
    run(res, 1, xv, out, N + 3)
    np.testing.assert_allclose(out, ref(xv[:, :N], axis=axis), rtol=1e-5, atol=1e-5)


def test_reduce_1d_gives_scalar_and_int_max():
    N = 128
    k = K("red1", [("x", ptr(i32)), ("o", ptr(i32))])
    x, o = k.args
    v = k.load(k.addptr(x, k.arange(0, N)))
    s = k.reduce(v, 0, "arith.maxsi")
    assert not s.type.is_tensor
    t = k.reduce(v, 0, "arith.addi")
    k.store(o, s)
    k.store(k.addptr(o, k.const(1, i32)), t)
    res = k.ret().compile()
    xv = rng.integers(-1000, 1000, N).astype(np.int32)
    out = np.full(2, -7, np.int32)
    run(res, 1, xv, out)
    assert out[0] == xv.max() and out[1] == xv.sum()


def test_softmax_rows_non_power_of_two():
    BLOCK = 128
    k = K("softmax", [("x", ptr(f32)), ("o", ptr(f32)), ("stride", i32), ("ncols", i32)])
    x, o, stride, ncols = k.args
    row = k.pid(0)
    base = k.bin("arith.muli", row, stride)
    cols = k.arange(0, BLOCK)
    mask = k.cmp("arith.cmpi", "slt", cols, k.splat(ncols, (BLOCK,)))
    offs = k.bin("arith.addi", k.splat(base, (BLOCK,)), cols)
    ninf = k.const(float("-inf"), TensorType((BLOCK,), f32))
    v = k.load(k.addptr(x, offs), mask, ninf)
    m = k.reduce(v, 0, "arith.maxnumf")
    z = k.bin("arith.subf", v, k.splat(m, (BLOCK,)))
    num = k.unary("math.exp", z)
    den = k.reduce(num, 0, "arith.addf")
    y = k.bin("arith.divf", num, k.splat(den, (BLOCK,)))
    k.store(k.addptr(o, offs), y, mask)
    res = k.ret().compile()
    R, C = 37, 100
    xv = rng.standard_normal((R, C)).astype(np.float32) * 4
    out = np.full((R, C), np.nan, np.float32)
    run(res, R, xv, out, C, C)
    e = np.exp(xv - xv.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("t,np_t", [(i32, np.int32), (i64, np.int64), (i8, np.int8)])
def test_int_div_rem_c_semantics(t, np_t):
    N = 256
    k = K("divrem", [("a", ptr(t)), ("b", ptr(t)), ("q", ptr(t)), ("r", ptr(t))])
    a, b, q, r = k.args
    offs = k.arange(0, N)
    av, bv = k.load(k.addptr(a, offs)), k.load(k.addptr(b, offs))
    k.store(k.addptr(q, offs), k.bin("arith.divsi", av, bv))
    k.store(k.addptr(r, offs), k.bin("arith.remsi", av, bv))
    res = k.ret().compile()
    hi = np.iinfo(np_t).max
    x = rng.integers(-hi, hi, N).astype(np_t)
    y = rng.integers(-50, 50, N).astype(np_t)
    y[y == 0] = 3
    x[:4] = [-7, 7, -7, 7]
    y[:4] = [2, -2, -2, 2]
    qo = np.full(N, 99, np_t)
    ro = np.full(N, 99, np_t)
    run(res, 1, x, y, qo, ro)
    # exact C truncating division on Python ints
    ref_q = np.array([(abs(a_) // abs(b_)) * (1 if (a_ < 0) == (b_ < 0) else -1)
                      for a_, b_ in zip(x.tolist(), y.tolist(), strict=True)], np_t)
    np.testing.assert_array_equal(qo, ref_q)
    np.testing.assert_array_equal(ro, (x - ref_q * y).astype(np_t))
    assert list(qo[:4]) == [-3, -3, 3, 3] and list(ro[:4]) == [-1, 1, -1, 1]


def test_unsigned_div_and_shifts():
    N = 64
    k = K("udiv", [("a", ptr(i32)), ("b", ptr(i32)), ("q", ptr(i32)), ("s", ptr(i32))])
    a, b, q, s = k.args
    offs = k.arange(0, N)
    av, bv = k.load(k.addptr(a, offs)), k.load(k.addptr(b, offs))
    k.store(k.addptr(q, offs), k.bin("arith.divui", av, bv))
    sh = k.bin("arith.andi", bv, k.const(31, TensorType((N,), i32)))
    k.store(k.addptr(s, offs), k.bin("arith.shrsi", av, sh))
    res = k.ret().compile()
    x = rng.integers(-2**31, 2**31 - 1, N).astype(np.int32)
    y = rng.integers(1, 2**31 - 1, N).astype(np.int32)
    qo, so = np.zeros(N, np.int32), np.zeros(N, np.int32)
    run(res, 1, x, y, qo, so)
    np.testing.assert_array_equal(qo.view(np.uint32), x.view(np.uint32) // y.view(np.uint32))
    np.testing.assert_array_equal(so, x >> (y & 31))


def _cast_kernel(src_t, dst_t, op):
    N = 128
    k = K("cast", [("x", ptr(src_t)), ("o", ptr(dst_t))])
    x, o = k.args
    offs = k.arange(0, N)
    v = k.load(k.addptr(x, offs))
    k.store(k.addptr(o, offs), k.unary(op, v, TensorType((N,), dst_t)))
    return k.ret().compile(), N


def _bf16_bits(a32):
    """Reference f32 -> bf16 (round to nearest even) as uint16 bits."""
    b = a32.view(np.uint32).astype(np.uint64)
    return (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF).astype(np.uint16)


def test_casts_int_float():
    res, N = _cast_kernel(i32, f32, "arith.sitofp")
    x = rng.integers(-10**6, 10**6, N).astype(np.int32)
    out = np.full(N, np.nan, np.float32)
    run(res, 1, x, out)
    np.testing.assert_array_equal(out, x.astype(np.float32))
    res, N = _cast_kernel(f32, i32, "arith.fptosi")
    xf = (rng.standard_normal(N) * 1000).astype(np.float32)
    oi = np.full(N, 12345, np.int32)
    run(res, 1, xf, oi)
    np.testing.assert_array_equal(oi, np.trunc(xf).astype(np.int32))
    res, N = _cast_kernel(i8, i64, "arith.extsi")
    x8 = rng.integers(-128, 127, N).astype(np.int8)
    o64 = np.zeros(N, np.int64)
    run(res, 1, x8, o64)
    np.testing.assert_array_equal(o64, x8.astype(np.int64))


def test_casts_f16_f64():
    res, N = _cast_kernel(f32, f16, "arith.truncf")
    x = (rng.standard_normal(128) * 100).astype(np.float32)
    out = np.full(N, np.nan, np.float16)
    run(res, 1, x, out)
    np.testing.assert_array_equal(out, x.astype(np.float16))
    res, N = _cast_kernel(f16, f32, "arith.extf")
    h = rng.standard_normal(N).astype(np.float16)
    o = np.full(N, np.nan, np.float32)
    run(res, 1, h, o)
    np.testing.assert_array_equal(o, h.astype(np.float32))
    res, N = _cast_kernel(f32, f64, "arith.extf")
    o64 = np.full(N, np.nan, np.float64)
    run(res, 1, x, o64)
    np.testing.assert_array_equal(o64, x.astype(np.float64))


def test_casts_bf16_round_trip():
    res, N = _cast_kernel(f32, bf16, "arith.truncf")
    x = (rng.standard_normal(128) * 100).astype(np.float32)
    x[0], x[1] = np.float32(1.00390625), np.float32(1.01171875)  # exact ties -> even
    out = np.full(N, 0xFFFF, np.uint16)
    run(res, 1, x, out)
    np.testing.assert_array_equal(out, _bf16_bits(x))
    res, N = _cast_kernel(bf16, f32, "arith.extf")
    o = np.full(N, np.nan, np.float32)
    run(res, 1, out, o)
    np.testing.assert_array_equal(o, (out.astype(np.uint32) << 16).view(np.float32))


def test_bf16_arithmetic_rounds_each_op():
    N = 64
    k = K("bfadd", [("x", ptr(bf16)), ("y", ptr(bf16)), ("o", ptr(bf16))])
    x, y, o = k.args
    offs = k.arange(0, N)
    s = k.bin("arith.addf", k.load(k.addptr(x, offs)), k.load(k.addptr(y, offs)))
    k.store(k.addptr(o, offs), s)
    res = k.ret().compile()
    xa = _bf16_bits(rng.standard_normal(N).astype(np.float32))
    ya = _bf16_bits(rng.standard_normal(N).astype(np.float32))
    out = np.zeros(N, np.uint16)
    run(res, 1, xa, ya, out)
    f = (xa.astype(np.uint32) << 16).view(np.float32) + (ya.astype(np.uint32) << 16).view(
        np.float32)
    np.testing.assert_array_equal(out, _bf16_bits(f))


def test_bool_pointers_and_select():
    N = 128
    k = K("boolsel", [("c", ptr(i1)), ("x", ptr(f32)), ("o", ptr(f32)), ("ob", ptr(i1))])
    c, x, o, ob = k.args
    offs = k.arange(0, N)
    cv = k.load(k.addptr(c, offs))
    xv = k.load(k.addptr(x, offs))
    neg = k.unary("math.absf", xv)
    k.store(k.addptr(o, offs), k.op("arith.select", [cv, xv, neg], xv.type))
    pos = k.cmp("arith.cmpf", "ogt", xv, k.const(0.0, TensorType((N,), f32)))
    k.store(k.addptr(ob, offs), pos)
    res = k.ret().compile()
    cond = rng.random(N) < 0.5
    xa = rng.standard_normal(N).astype(np.float32)
    out = np.full(N, np.nan, np.float32)
    outb = np.ones(N + 1, np.bool_)
    outb[-1] = True
    run(res, 1, cond, xa, out, outb[:N])
    np.testing.assert_array_equal(out, np.where(cond, xa, np.abs(xa)))
    np.testing.assert_array_equal(outb[:N], xa > 0)
    assert outb[:N].view(np.uint8).max() <= 1 and outb[-1]


def test_3d_grid_program_ids_and_num_programs():
    k = K("ids", [("o", ptr(i32))])
    (o,) = k.args
    px, py, pz = k.pid(0), k.pid(1), k.pid(2)
    nx, ny, nz = k.nprog(0), k.nprog(1), k.nprog(2)
    lin = k.bin("arith.addi", k.bin("arith.muli", k.bin("arith.addi", k.bin(
        "arith.muli", pz, ny), py), nx), px)
    base = k.bin("arith.muli", lin, k.const(4, i32))
    offs = k.bin("arith.addi", k.splat(base, (4,)), k.arange(0, 4))
    vals = [px, py, pz, k.bin("arith.addi", k.bin("arith.muli", k.bin("arith.muli", nx, ny),
                                                  k.const(1000, i32)), nz)]
    # write (px, py, pz, nx*ny*1000+nz) with selects on the lane index
    lane = k.arange(0, 4)
    v = k.splat(vals[3], (4,))
    for j in (2, 1, 0):
        is_j = k.cmp("arith.cmpi", "eq", lane, k.const(j, TensorType((4,), i32)))
        v = k.op("arith.select", [is_j, k.splat(vals[j], (4,)), v], v.type)
    k.store(k.addptr(o, offs), v)
    res = k.ret().compile()
    gx, gy, gz = 5, 3, 4
    out = np.full((gz, gy, gx, 4), -1, np.int32)
    run(res, (gx, gy, gz), out)
    z, y, x = np.meshgrid(np.arange(gz), np.arange(gy), np.arange(gx), indexing="ij")
    np.testing.assert_array_equal(out[..., 0], x)
    np.testing.assert_array_equal(out[..., 1], y)
    np.testing.assert_array_equal(out[..., 2], z)
    assert (out[..., 3] == gx * gy * 1000 + gz).all()


def test_math_functions_and_scalar_load():
    N = 256
    k = K("math", [("x", ptr(f32)), ("s", ptr(f32)), ("o", ptr(f32))])
    x, s, o = k.args
    offs = k.arange(0, N)
    xv = k.load(k.addptr(x, offs))
    sv = k.load(s)  # scalar load
    ex = k.unary("math.exp", xv)
    lg = k.unary("math.log", k.unary("math.absf", xv))
    sq = k.unary("math.rsqrt", k.unary("math.exp2", xv))
    t = k.bin("arith.addf", k.bin("arith.mulf", ex, k.splat(sv, (N,))),
              k.bin("arith.subf", lg, sq))
    k.store(k.addptr(o, offs), t)
    res = k.ret().compile()
    xa = rng.standard_normal(N).astype(np.float32)
    sa = np.array([rng.standard_normal()], np.float32)
    out = np.full(N, np.nan, np.float32)
    run(res, 1, xa, sa, out)
    ref = np.exp(xa) * sa[0] + (np.log(np.abs(xa)) - 1 / np.sqrt(np.exp2(xa)))
    np.testing.assert_allclose(out, ref, rtol=2e-5, atol=1e-5)


def test_maxnumf_ignores_nan():
    N = 64
    k = K("mx", [("x", ptr(f32)), ("y", ptr(f32)), ("o", ptr(f32))])
    x, y, o = k.args
    offs = k.arange(0, N)
    m = k.bin("arith.maxnumf", k.load(k.addptr(x, offs)), k.load(k.addptr(y, offs)))
    k.store(k.addptr(o, offs), m)
    res = k.ret().compile()
    xa = rng.standard_normal(N).astype(np.float32)
    ya = rng.standard_normal(N).astype(np.float32)
    xa[::3] = np.nan
    out = np.full(N, -1, np.float32)
    run(res, 1, xa, ya, out)
    np.testing.assert_array_equal(out, np.fmax(xa, ya))


def test_large_tile_2_pow_20_uses_heap_scratch():
    N = 1 << 20
    k = K("big", [("x", ptr(f32)), ("o", ptr(f32))])
    x, o = k.args
    offs = k.arange(0, N)
    v = k.load(k.addptr(x, offs))
    e = k.unary("math.exp", v)
    s = k.reduce(e, 0, "arith.addf")  # e used twice -> materialised in scratch
    k.store(k.addptr(o, offs), k.bin("arith.divf", e, k.splat(s, (N,))))
    res = k.ret().compile()
    assert res.extra["scratch_bytes"] >= 2 * 4 * N
    xa = rng.standard_normal(N).astype(np.float32)
    out = np.full(N, np.nan, np.float32)
    run(res, 1, xa, out)
    e = np.exp(xa.astype(np.float64))
    np.testing.assert_allclose(out, e / e.sum(), rtol=1e-4)


def test_many_programs_split_across_workers():
    res = _vector_add(16)
    n = 16 * 4096 - 5
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    run(res, (n + 15) // 16, x, y, out, n)
    np.testing.assert_array_equal(out, x + y)
