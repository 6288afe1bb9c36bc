"""CPU backend: tt.scan (cumsum/cumprod, reverse, any axis, multi-operand combine regions),
tt.join/tt.split/tt.cat and tt.histogram on hand-built ttir vs numpy."""
from __future__ import annotations

import numpy as np
import pytest

from tests.ir_kit import K, ptr, run
from workbench.ir.builder import Builder
from workbench.ir.types import TensorType, f32, i1, i32

rng = np.random.default_rng()


def offsets(k, shape):
    """Row-major linear offsets of a tile of ``shape`` (1-D, 2-D or 3-D), i32."""
    strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
    total = None
    for d, (n, s) in enumerate(zip(shape, strides, strict=True)):
        r = k.bin("arith.muli", k.arange(0, n), k.const(s, TensorType((n,), i32)))
        for a in range(len(shape)):
            if a != d:
                r = k.expand(r, a)
        r = k.broadcast(r, shape)
        total = r if total is None else k.bin("arith.addi", total, r)
    return total


def scan(k, srcs, axis, combine, reverse=False):
    types = [s.type for s in srcs]
    op = k.b.create("tt.scan", list(srcs), types, {"axis": axis, "reverse": reverse}, regions=1)
    blk = op.regions[0].add_block([t.element for t in types] * 2)
    saved = k.b
    k.b = Builder(blk, loc=saved.loc)
    n = len(srcs)
    outs = combine(k, list(blk.args[:n]), list(blk.args[n:]))
    k.b.create("tt.scan.return", outs, [])
    k.b = saved
    return op.results


def _scan_kernel(shape, t, axis, reverse, name):
    k = K("scan", [("x", ptr(t)), ("o", ptr(t))])
    xp, o = k.args
    off = offsets(k, shape)
    x = k.load(k.addptr(xp, off))
    r, = scan(k, [x], axis, lambda k, a, b: [k.bin(name, a[0], b[0])], reverse)
    k.store(k.addptr(o, off), r)
    return k.ret().compile()


def _np_scan(x, axis, reverse, f):
    if reverse:
        return np.flip(f(np.flip(x, axis), axis=axis), axis)
    return f(x, axis=axis)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape,axis", [((100,), 0), ((16, 33), 0), ((16, 33), 1),
                                        ((4, 8, 16), 1), ((4, 8, 16), 2)])
def test_int_cumsum_and_cumprod_any_axis(shape, axis, reverse):
    x = rng.integers(-5, 6, shape).astype(np.int32)
    for name, f in (("arith.addi", np.cumsum), ("arith.muli", np.cumprod)):
        res = _scan_kernel(shape, i32, axis, reverse, name)
        out = np.full(shape, -999, np.int32)
        run(res, 1, x, out)
        np.testing.assert_array_equal(out, _np_scan(x, axis, reverse, f).astype(np.int32))


@pytest.mark.parametrize("axis", [0, 1])
def test_float_cumsum_close_to_numpy(axis):
    shape = (32, 64)
    x = rng.standard_normal(shape).astype(np.float32)
    res = _scan_kernel(shape, f32, axis, False, "arith.addf")
    out = np.full(shape, np.nan, np.float32)
    run(res, 3, x, out)
    np.testing.assert_allclose(out, np.cumsum(x, axis, dtype=np.float64), rtol=1e-4, atol=1e-4)


def test_multi_operand_scan_running_argmax():
    # (value, index) pairs: running max with the index of its first occurrence
    n = 128
    k = K("runarg", [("x", ptr(f32)), ("v", ptr(f32)), ("i", ptr(i32))])
    xp, vp, ip = k.args
    r = k.arange(0, n)
    x = k.load(k.addptr(xp, r))

    def combine(k, a, b):
        take_b = k.cmp("arith.cmpf", "ogt", b[0], a[0])
        return [k.op("arith.select", [take_b, b[0], a[0]], f32),
                k.op("arith.select", [take_b, b[1], a[1]], i32)]
    v, i = scan(k, [x, r], 0, combine)
    k.store(k.addptr(vp, r), v)
    k.store(k.addptr(ip, r), i)
    res = k.ret().compile()
    x = rng.integers(0, 20, n).astype(np.float32)
    vo, io = np.full(n, np.nan, np.float32), np.full(n, -1, np.int32)
    run(res, 1, x, vo, io)
    np.testing.assert_array_equal(vo, np.maximum.accumulate(x))
    np.testing.assert_array_equal(io, [int(np.argmax(x[:j + 1])) for j in range(n)])


def test_join_split_cat():
    n = 32
    k = K("jsc", [("x", ptr(f32)), ("j", ptr(f32)), ("s", ptr(f32)), ("c", ptr(f32))])
    xp, jp, sp, cp = k.args
    r = k.arange(0, n)
    x = k.load(k.addptr(xp, r))
    neg = k.bin("arith.subf", k.const(0.0, x.type), x)
    j = k.op("tt.join", [x, neg], TensorType((n, 2), f32))
    k.store(k.addptr(jp, offsets(k, (n, 2))), j)
    # split a lazily computed join (x * 2, x + 1) and combine the halves
    j2 = k.op("tt.join", [k.bin("arith.mulf", x, k.const(2.0, x.type)),
                          k.bin("arith.addf", x, k.const(1.0, x.type))], TensorType((n, 2), f32))
    op = k.b.create("tt.split", [j2], [x.type, x.type])
    a, b = op.results
    k.store(k.addptr(sp, r), k.bin("arith.subf", a, b))
    c = k.op("tt.cat", [x, neg], TensorType((2 * n,), f32))
    k.store(k.addptr(cp, k.arange(0, 2 * n)), c)
    res = k.ret().compile()
    xs = rng.standard_normal(n).astype(np.float32)
    jo, so, co = (np.full(s, np.nan, np.float32) for s in ((n, 2), n, 2 * n))
    run(res, 1, xs, jo, so, co)
    np.testing.assert_array_equal(jo, np.stack([xs, -xs], -1))
    np.testing.assert_array_equal(so, xs * 2 - (xs + 1))
    np.testing.assert_array_equal(co, np.concatenate([xs, -xs]))


def test_split_of_2d_join_and_cat_2d():
    M, N = 8, 16
    k = K("j2", [("x", ptr(i32)), ("a", ptr(i32)), ("b", ptr(i32)), ("c", ptr(i32))])
    xp, ap, bp, cp = k.args
    off = offsets(k, (M, N))
    x = k.load(k.addptr(xp, off))
    t = TensorType((M, N), i32)
    j = k.op("tt.join", [x, k.bin("arith.muli", x, x)], TensorType((M, N, 2), i32))
    op = k.b.create("tt.split", [j], [t, t])
    k.store(k.addptr(ap, off), op.results[1])
    k.store(k.addptr(bp, off), op.results[0])
    k.store(k.addptr(cp, offsets(k, (2 * M, N))), k.op("tt.cat", [x, op.results[1]],
                                                          TensorType((2 * M, N), i32)))
    res = k.ret().compile()
    xs = rng.integers(-100, 100, (M, N)).astype(np.int32)
    a, b = np.full((M, N), -1, np.int32), np.full((M, N), -1, np.int32)
    c = np.full((2 * M, N), -1, np.int32)
    run(res, 1, xs, a, b, c)
    np.testing.assert_array_equal(a, xs * xs)
    np.testing.assert_array_equal(b, xs)
    np.testing.assert_array_equal(c, np.concatenate([xs, xs * xs]))


@pytest.mark.parametrize("masked", [False, True])
def test_histogram_counts_in_range_values(masked):
    n, nbins = 256, 16
    k = K("hist", [("x", ptr(i32)), ("m", ptr(i1)), ("h", ptr(i32))])
    xp, mp, hp = k.args
    r = k.arange(0, n)
    x = k.load(k.addptr(xp, r))
    ops = [x] + ([k.load(k.addptr(mp, r))] if masked else [])
    h = k.op("tt.histogram", ops, TensorType((nbins,), i32))
    k.store(k.addptr(hp, k.arange(0, nbins)), h)
    res = k.ret().compile()
    xs = rng.integers(-3, nbins + 3, n).astype(np.int32)
    mask = rng.random(n) < 0.6 if masked else np.ones(n, bool)
    out = np.full(nbins, -1, np.int32)
    run(res, 2, xs, mask, out)
    v = xs[mask]
    v = v[(v >= 0) & (v < nbins)]
    np.testing.assert_array_equal(out, np.bincount(v, minlength=nbins))
