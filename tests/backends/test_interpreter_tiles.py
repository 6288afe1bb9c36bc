"""Interpreter tile ops on hand-built ttir: reductions over both axes (fast path and combine
regions), softmax, scans, dot precision, shape ops, control flow, atomics, print, assert."""
from __future__ import annotations

import numpy as np
import pytest

from tests.ir_kit import FILE, K, poisoned, ptr
from workbench.backends.interpreter import DeviceAssertionError
from workbench.ir.types import TensorType, f16, f32, i1, i32

M, N = 16, 32


def tile_offsets(k, m, n, stride):
    """offs[i, j] = i * stride + j as tensor<m x n x i32>."""
    rm = k.bin("arith.muli", k.arange(0, m), k.splat(stride, (m,)))
    return k.bin("arith.addi", k.bcast(k.expand(rm, 1), (m, n)),
                 k.bcast(k.expand(k.arange(0, n), 0), (m, n)))


def add_combine(name):
    return lambda k, a, b: [k.bin(name, a[0], b[0])]


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("name", ["arith.addf", "arith.maxnumf"])
def test_reduce_2d_both_axes(axis, name):
    rng = np.random.default_rng()
    x = rng.standard_normal((M, N)).astype(np.float32)
    k = K("red", [("x", ptr(f32)), ("o", ptr(f32)), ("s", i32)])
    xp, o, s = k.args
    v = k.load(k.addptr(xp, tile_offsets(k, M, N, s)))
    r, = k.reduce([v], axis, add_combine(name))
    k.store(k.addptr(o, k.arange(0, N if axis == 0 else M)), r)
    out = poisoned(N if axis == 0 else M, np.float32)
    k.interpret((1,), x, out, N)
    ref = x.sum(axis) if name == "arith.addf" else x.max(axis)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_reduce_combine_region_argmax_tie_break_left_and_fp16_sum_in_fp16():
    rng = np.random.default_rng()
    x = rng.integers(0, 5, (M, N)).astype(np.float32)  # many ties
    k = K("argmax", [("x", ptr(f32)), ("o", ptr(i32))])
    xp, o = k.args
    v = k.load(k.addptr(xp, tile_offsets(k, M, N, k.const(N, i32))))
    idx = k.bcast(k.expand(k.arange(0, N), 0), (M, N))

    def combine(k, a, b):
        gt = k.cmp("arith.cmpf", "ogt", a[0], b[0])
        eq = k.cmp("arith.cmpf", "oeq", a[0], b[0])
        lt = k.cmp("arith.cmpi", "slt", a[1], b[1])
        take_a = k.bin("arith.ori", gt, k.bin("arith.andi", eq, lt))
        return [k.op("arith.select", [take_a, a[0], b[0]], f32),
                k.op("arith.select", [take_a, a[1], b[1]], i32)]
    _, am = k.reduce([v, idx], 1, combine)
    k.store(k.addptr(o, k.arange(0, M)), am)
    out = poisoned(M, np.int32)
    k.interpret((1,), x, out)
    np.testing.assert_array_equal(out, x.argmax(1))

    h = np.full(1024, 1.0, np.float16)
    h[0] = 2048  # in fp16, 2048 + 1 stays 2048 but a tree adds the ones first
    k = K("hsum", [("x", ptr(f16)), ("o", ptr(f16))])
    xp, o = k.args
    s, = k.reduce([k.load(k.addptr(xp, k.arange(0, 1024)))], 0, add_combine("arith.addf"))
    k.store(o, s)
    out = poisoned(1, np.float16)
    k.interpret((1,), h, out)
    # pairwise tree in fp16: exact value of the tree order
    t = h.copy()
    while t.size > 1:
        t = (t[: t.size // 2] + t[t.size // 2:]).astype(np.float16)
    assert out[0] == t[0]


@pytest.mark.parametrize("batch", [0, 1 << 16])
def test_softmax_rows(batch):
    rng = np.random.default_rng()
    rows, cols, B = 37, 100, 128
    x = rng.standard_normal((rows, cols)).astype(np.float32) * 3
    k = K("softmax", [("x", ptr(f32)), ("o", ptr(f32)), ("stride", i32), ("n", i32)])
    xp, o, stride, n = k.args
    row = k.pid(0)
    base = k.bin("arith.muli", row, stride)
    cols_r = k.arange(0, B)
    mask = k.cmp("arith.cmpi", "slt", cols_r, k.splat(n, (B,)))
    offs = k.bin("arith.addi", k.splat(base, (B,)), cols_r)
    v = k.load(k.addptr(xp, offs), mask, k.const(float("-inf"), TensorType((B,), f32)))
    mx, = k.reduce([v], 0, add_combine("arith.maxnumf"))
    e = k.op("math.exp", [k.bin("arith.subf", v, k.splat(mx, (B,)))], v.type)
    s, = k.reduce([e], 0, add_combine("arith.addf"))
    k.store(k.addptr(o, offs), k.bin("arith.divf", e, k.splat(s, (B,))), mask)
    out = poisoned((rows, cols), np.float32)
    k.interpret((rows,), x, out, cols, cols, batch_elems=batch)
    ex = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, ex / ex.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_cumsum_and_cumprod_2d(reverse):
    rng = np.random.default_rng()
    x = rng.integers(-3, 4, (M, N)).astype(np.int32)
    k = K("scan", [("x", ptr(i32)), ("o", ptr(i32)), ("p", ptr(i32))])
    xp, o, p = k.args
    offs = tile_offsets(k, M, N, k.const(N, i32))
    v = k.load(k.addptr(xp, offs))
    cs, = k.scan([v], 1, add_combine("arith.addi"), reverse)
    cp, = k.scan([v], 0, add_combine("arith.muli"), reverse)
    k.store(k.addptr(o, offs), cs)
    k.store(k.addptr(p, offs), cp)
    out, prod = poisoned((M, N), np.int32), poisoned((M, N), np.int32)
    k.interpret((1,), x, out, prod)
    if reverse:
        np.testing.assert_array_equal(out, np.cumsum(x[:, ::-1], 1)[:, ::-1])
        np.testing.assert_array_equal(prod, np.cumprod(x[::-1], 0, dtype=np.int32)[::-1])
    else:
        np.testing.assert_array_equal(out, np.cumsum(x, 1))
        np.testing.assert_array_equal(prod, np.cumprod(x, 0, dtype=np.int32))


def dot_kernel(t, prec):
    k = K("dot", [("a", ptr(t)), ("b", ptr(t)), ("c", ptr(f32))])
    a, b, c = k.args
    av = k.load(k.addptr(a, tile_offsets(k, 16, 32, k.const(32, i32))))
    bv = k.load(k.addptr(b, tile_offsets(k, 32, 16, k.const(16, i32))))
    acc = k.load(k.addptr(c, tile_offsets(k, 16, 16, k.const(16, i32))))
    attrs = {"inputPrecision": prec} if prec else {}
    r = k.op("tt.dot", [av, bv, acc], acc.type, **attrs)
    k.store(k.addptr(c, tile_offsets(k, 16, 16, k.const(16, i32))), r)
    return k


def tf32(x):
    """What the tensor core reads of an fp32 operand: the 13 low mantissa bits dropped."""
    b = x.astype(np.float32).view(np.uint32)
    return (b & np.uint32(0xFFFFE000)).view(np.float32)


@pytest.mark.parametrize("prec", [None, "ieee"])
def test_dot_fp32_tf32_default_and_ieee(prec):
    rng = np.random.default_rng()
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 16)).astype(np.float32)
    c = rng.standard_normal((16, 16)).astype(np.float32)
    c0 = c.copy()
    dot_kernel(f32, prec).interpret((1,), a, b, c)
    if prec is None:
        ref = c0.astype(np.float64) + tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
        full = c0.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
        assert np.abs(c - full).max() > 1e-4  # tf32 rounding shows
    else:
        ref = c0.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)


def test_dot_fp16_accumulates_in_fp32():
    rng = np.random.default_rng()
    a = rng.standard_normal((16, 32)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    c = np.zeros((16, 16), np.float32)
    dot_kernel(f16, None).interpret((1,), a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5,
                               atol=1e-5)


def test_trans_reshape_join_split():
    rng = np.random.default_rng()
    x = rng.standard_normal((8, 4)).astype(np.float32)
    k = K("shapes", [("x", ptr(f32)), ("t", ptr(f32)), ("j", ptr(f32)), ("s", ptr(f32))])
    xp, tp, jp, sp = k.args
    v = k.load(k.addptr(xp, tile_offsets(k, 8, 4, k.const(4, i32))))
    t = k.op("tt.trans", [v], TensorType((4, 8), f32), order=[1, 0])
    k.store(k.addptr(tp, tile_offsets(k, 4, 8, k.const(8, i32))), t)
    flat = k.op("tt.reshape", [v], TensorType((32,), f32))
    neg = k.op("arith.negf", [flat], flat.type) if False else k.bin(
        "arith.subf", k.const(0.0, flat.type), flat)
    j = k.op("tt.join", [flat, neg], TensorType((32, 2), f32))
    k.store(k.addptr(jp, tile_offsets(k, 32, 2, k.const(2, i32))), j)
    lo, hi = k.b.create("tt.split", [j], [flat.type, flat.type]).results
    k.store(k.addptr(sp, k.arange(0, 32)), k.bin("arith.addf", lo,
                                                 k.bin("arith.mulf", hi, hi)))
    t_out, j_out, s_out = poisoned((4, 8), np.float32), poisoned((32, 2), np.float32), \
        poisoned(32, np.float32)
    k.interpret((1,), x, t_out, j_out, s_out)
    np.testing.assert_array_equal(t_out, x.T)
    np.testing.assert_array_equal(j_out, np.stack([x.ravel(), -x.ravel()], -1))
    np.testing.assert_array_equal(s_out, x.ravel() + x.ravel() * x.ravel())


@pytest.mark.parametrize("batch", [0, 1 << 16])
def test_scf_for_and_if(batch):
    """o[pid*B + r] = sum_{i<n} (i odd ? x[i*B + r] : -x[...]) over a loop with a uniform
    bound, and a final scf.if on a uniform scalar argument."""
    rng = np.random.default_rng()
    B, n, P = 32, 5, 3
    x = rng.standard_normal(n * B).astype(np.float32)
    k = K("loop", [("x", ptr(f32)), ("o", ptr(f32)), ("n", i32), ("flag", i32)])
    xp, o, nn, flag = k.args
    r = k.arange(0, B)
    zero = k.const(0.0, TensorType((B,), f32))

    def body(k, iv, iters):
        v = k.load(k.addptr(xp, k.bin("arith.addi", k.splat(k.bin("arith.muli", iv,
                                                                   k.const(B, i32)), (B,)), r)))
        odd = k.cmp("arith.cmpi", "eq", k.bin("arith.remsi", iv, k.const(2, i32)),
                    k.const(1, i32))
        w, = k.if_(odd, lambda k: [v], lambda k: [k.bin("arith.subf", zero, v)], [v.type])
        return [k.bin("arith.addf", iters[0], w)]
    acc, = k.for_(k.const(0, i32), nn, k.const(1, i32), [zero], body)
    cond = k.cmp("arith.cmpi", "ne", flag, k.const(0, i32))
    res, = k.if_(cond, lambda k: [k.bin("arith.mulf", acc, k.const(2.0, acc.type))],
                 lambda k: [acc], [acc.type])
    pidv = k.splat(k.bin("arith.muli", k.pid(), k.const(B, i32)), (B,))
    k.store(k.addptr(o, k.bin("arith.addi", pidv, r)), res)
    for flagv in (0, 1):
        out = poisoned(P * B, np.float32)
        launcher = k.interpret((P,), x, out, n, flagv, batch_elems=batch)
        xr = x.reshape(n, B).astype(np.float64)
        ref = sum(xr[i] if i % 2 else -xr[i] for i in range(n)) * (2 if flagv else 1)
        # fp32 sums with cancellation: the error bound is n * eps * sum |x|, not relative
        bound = n * np.finfo(np.float32).eps * np.abs(xr).sum(axis=0) * (2 if flagv else 1)
        np.testing.assert_array_less(np.abs(out - np.tile(ref, P)), np.tile(bound, P) + 1e-30)
        assert launcher.last_batch == (P if batch else 1)


def test_atomic_add_with_duplicates_returns_old_values_in_order():
    rng = np.random.default_rng()
    bins = rng.integers(0, 4, 64).astype(np.int32)
    k = K("hist", [("b", ptr(i32)), ("h", ptr(i32)), ("old", ptr(i32))])
    bp, hp, op_ = k.args
    r = k.arange(0, 64)
    bv = k.load(k.addptr(bp, r))
    one = k.const(1, TensorType((64,), i32))
    old = k.op("tt.atomic_rmw", [k.addptr(hp, bv), one], one.type, atomic_rmw_op="add",
               sem="acq_rel", scope="gpu")
    k.store(k.addptr(op_, r), old)
    h = np.zeros(4, np.int32)
    olds = poisoned(64, np.int32)
    k.interpret((2,), bins, h, olds)
    np.testing.assert_array_equal(h, 2 * np.bincount(bins, minlength=4))
    seen = np.zeros(4, int)
    exp = []
    for b in bins:  # program 1 ran after program 0
        exp.append(seen[b] + np.bincount(bins, minlength=4)[b])
        seen[b] += 1
    np.testing.assert_array_equal(olds, exp)


def test_atomic_cas_and_float_max():
    k = K("cas", [("x", ptr(i32)), ("f", ptr(f32)), ("o", ptr(i32))])
    xp, fp, o = k.args
    r = k.arange(0, 8)
    t = TensorType((8,), i32)
    old = k.op("tt.atomic_cas", [k.addptr(xp, r), k.const(5, t), k.const(9, t)], t,
               sem="acq_rel", scope="gpu")
    k.store(k.addptr(o, r), old)
    ft = TensorType((8,), f32)
    vals = k.cast("arith.sitofp", k.bin("arith.subi", r, k.const(4, t)), f32)
    k.op("tt.atomic_rmw", [k.addptr(fp, k.const(0, t)), vals], ft, atomic_rmw_op="max",
         sem="acq_rel", scope="gpu")
    x = np.array([5, 1, 5, 2, 5, 5, 0, 7], np.int32)
    x0 = x.copy()
    f = np.array([-10.0], np.float32)
    out = poisoned(8, np.int32)
    k.interpret((1,), x, f, out)
    np.testing.assert_array_equal(out, x0)
    np.testing.assert_array_equal(x, np.where(x0 == 5, 9, x0))
    assert f[0] == 3.0


def test_device_print_once_per_program(capsys):
    k = K("pr", [("x", ptr(i32))])
    xp, = k.args
    v = k.load(k.addptr(xp, k.arange(0, 4)))
    k.b.create("tt.print", [k.pid(), v], [], {"prefix": " x: ", "hex": False,
                                               "isSigned": [1, 1]})
    x = np.random.default_rng().integers(-50, 50, 4).astype(np.int32)
    k.interpret((3,), x)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3
    for p, line in enumerate(lines):
        assert line == f"pid ({p}, 0, 0)  x: {p} {np.array2string(x)}"


def test_device_assert_names_program_and_line():
    k = K("as", [("x", ptr(i32))])
    xp, = k.args
    v = k.load(k.addptr(xp, k.bin("arith.addi", k.arange(0, 4), k.splat(k.bin(
        "arith.muli", k.pid(), k.const(4, i32)), (4,)))))
    k.at(12, 9)
    ok = k.cmp("arith.cmpi", "sge", v, k.const(0, TensorType((4,), i32)))
    k.b.create("tt.assert", [ok], [], {"message": "x must be non-negative"})
    x = np.arange(16, dtype=np.int32)
    x[9] = -1
    for batch in (0, 1 << 16):
        with pytest.raises(DeviceAssertionError) as ei:
            k.interpret((4,), x, batch_elems=batch)
        assert ei.value.program_id == (2, 0, 0) and ei.value.loc.line == 12
        assert f"{FILE}:12:9" in str(ei.value) and "x must be non-negative" in str(ei.value)


def test_local_alloc_without_init_is_poisoned_nan():
    from workbench.ir.types import MemDescType
    k = K("smem", [("o", ptr(f32))])
    o, = k.args
    t = TensorType((8,), f32)
    buf = k.op("ttg.local_alloc", [], MemDescType((8,), f32))
    v = k.op("ttg.local_load", [buf], t)
    k.store(k.addptr(o, k.arange(0, 8)), v)
    out = np.zeros(8, np.float32)
    k.interpret((1,), out)
    assert np.isnan(out).all()


def test_bool_pointers_use_one_byte_and_select_with_scalar_condition():
    k = K("b", [("m", ptr(i1)), ("o", ptr(f32)), ("flag", i1)])
    mp, o, flag = k.args
    r = k.arange(0, 16)
    m = k.load(k.addptr(mp, r))
    t = TensorType((16,), f32)
    a = k.op("arith.select", [m, k.const(1.0, t), k.const(2.0, t)], t)
    b = k.op("arith.select", [flag, a, k.const(5.0, t)], t)
    k.store(k.addptr(o, r), b)
    mask = np.random.default_rng().integers(0, 2, 16).astype(np.bool_)
    for fl in (True, False):
        out = poisoned(16, np.float32)
        k.interpret((1,), mask, out, fl)
        np.testing.assert_array_equal(out, np.where(mask, 1.0, 2.0) if fl else 5.0)
