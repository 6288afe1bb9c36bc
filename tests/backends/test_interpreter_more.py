"""More interpreter coverage on hand-built ttir: scf.while, pointers of unknown origin
(int_to_ptr), histogram/gather/cat, fma/clamp/mulhi, launch and compile errors, and a
property test of reductions over random shapes and dtypes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ir_kit import K, poisoned, ptr, ptr_arg
from workbench.backends.interpreter import InterpreterBackend, empty_poisoned
from workbench.errors import LaunchError, OutOfBoundsError, UnsupportedError
from workbench.ir.types import TensorType, f16, f32, f64, i32, i64


def test_scf_while_collatz_steps():
    """steps = number of Collatz steps of the scalar argument, computed in a while loop."""
    k = K("collatz", [("o", ptr(i32)), ("n0", i32)])
    o, n0 = k.args
    op = k.b.create("scf.while", [n0, k.const(0, i32)], [i32, i32], regions=2)
    before = op.regions[0].add_block([i32, i32])
    with k.b.at_end_of(before):
        n, c = before.args
        cont = k.cmp("arith.cmpi", "ne", n, k.const(1, i32))
        k.b.create("scf.condition", [cont, n, c], [])
    after = op.regions[1].add_block([i32, i32])
    with k.b.at_end_of(after):
        n, c = after.args
        even = k.cmp("arith.cmpi", "eq", k.bin("arith.andi", n, k.const(1, i32)),
                     k.const(0, i32))
        nxt, = k.if_(even, lambda k: [k.bin("arith.divsi", n, k.const(2, i32))],
                     lambda k: [k.bin("arith.addi", k.bin("arith.muli", n, k.const(3, i32)),
                                      k.const(1, i32))], [i32])
        k.b.create("scf.yield", [nxt, k.bin("arith.addi", c, k.const(1, i32))], [])
    k.store(o, op.results[1])

    def steps(n):
        c = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            c += 1
        return c
    for n in np.random.default_rng().integers(2, 10000, 3):
        out = np.zeros(1, np.int32)
        k.interpret((1,), out, int(n))
        assert out[0] == steps(int(n))


def test_int_to_ptr_pointer_of_unknown_origin_and_oob_names_nearest_array():
    k = K("raw", [("x", ptr(f32)), ("o", ptr(f32)), ("addr", i64)])
    x, o, addr = k.args
    r = k.arange(0, 8)
    p = k.op("tt.int_to_ptr", [addr], ptr(f32))
    v = k.load(k.addptr(p, r))
    k.store(k.addptr(o, r), v)
    xs = np.random.rand(8).astype(np.float32)
    out = poisoned(8, np.float32)
    k.interpret((1,), xs, out, ptr_arg(xs).address)
    np.testing.assert_array_equal(out, xs)
    with pytest.raises(OutOfBoundsError) as ei:
        k.interpret((1,), xs, out, ptr_arg(xs).address + 4 * 4)
    assert ei.value.arg == "x" and ei.value.offsets == [8, 9, 10, 11]


def test_histogram_gather_cat():
    rng = np.random.default_rng()
    v = rng.integers(-2, 10, 32).astype(np.int32)
    k = K("hg", [("v", ptr(i32)), ("h", ptr(i32)), ("g", ptr(i32)), ("c", ptr(i32))])
    vp, hp, gp, cp = k.args
    r = k.arange(0, 32)
    vals = k.load(k.addptr(vp, r))
    h = k.op("tt.histogram", [vals], TensorType((8,), i32))
    k.store(k.addptr(hp, k.arange(0, 8)), h)
    idx = k.bin("arith.subi", k.const(31, TensorType((32,), i32)), r)
    g = k.op("tt.gather", [vals, idx], vals.type, axis=0)
    k.store(k.addptr(gp, r), g)
    c = k.op("tt.cat", [vals, g], TensorType((64,), i32))
    k.store(k.addptr(cp, k.arange(0, 64)), c)
    hist, gat, cat = poisoned(8, np.int32), poisoned(32, np.int32), poisoned(64, np.int32)
    k.interpret((1,), v, hist, gat, cat)
    np.testing.assert_array_equal(hist, np.bincount(v[(v >= 0) & (v < 8)], minlength=8))
    np.testing.assert_array_equal(gat, v[::-1])
    np.testing.assert_array_equal(cat, np.r_[v, v[::-1]])


def test_fma_clamp_mulhi():
    rng = np.random.default_rng()
    a, b, c = (rng.standard_normal(32).astype(np.float32) for _ in range(3))
    u = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32).view(np.int32)
    k = K("f", [("a", ptr(f32)), ("b", ptr(f32)), ("c", ptr(f32)), ("u", ptr(i32)),
                ("o", ptr(f32)), ("cl", ptr(f32)), ("hi", ptr(i32))])
    ap, bp, cp, up, op_, clp, hip = k.args
    r = k.arange(0, 32)
    av, bv, cv = (k.load(k.addptr(p, r)) for p in (ap, bp, cp))
    k.store(k.addptr(op_, r), k.op("math.fma", [av, bv, cv], av.type))
    t = av.type
    k.store(k.addptr(clp, r), k.op("tt.clampf", [av, k.const(-0.5, t), k.const(0.5, t)], t,
                                   propagateNan=0))
    uv = k.load(k.addptr(up, r))
    k.store(k.addptr(hip, r), k.op("tt.mulhiui", [uv, uv], uv.type))
    o, cl, hi = poisoned(32, np.float32), poisoned(32, np.float32), poisoned(32, np.int32)
    k.interpret((1,), a, b, c, u, o, cl, hi)
    exact = a.astype(np.float64) * b + c
    np.testing.assert_array_equal(o, exact.astype(np.float32))
    np.testing.assert_array_equal(cl, np.clip(a, -0.5, 0.5))
    uu = u.view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(hi.view(np.uint32), ((uu * uu) >> 32).astype(np.uint32))


def test_launch_errors_are_launch_errors():
    k = K("s", [("x", ptr(f32)), ("n", i32)])
    x, n = k.args
    k.store(x, k.cast("arith.sitofp", n, f32))
    res = k.compile_interpreter()
    xs = np.zeros(1, np.float32)
    with pytest.raises(LaunchError):
        res.launcher((1, 1, 1), [ptr_arg(xs)])
    with pytest.raises(LaunchError):
        res.launcher((1, 1, 1), [5, 3])
    with pytest.raises(LaunchError):
        res.launcher((1, 1, 1), [ptr_arg(xs), 2.5])
    res.launcher((1, 1, 1), [ptr_arg(xs), 2**32 + 7])  # ints wrap to i32 like the GPU
    assert xs[0] == 7.0
    res.launcher((0, 1, 1), [ptr_arg(xs), 9])  # an empty grid runs nothing
    assert xs[0] == 7.0


def test_unknown_op_is_an_unsupported_error_at_the_line():
    k = K("bad", [("x", ptr(f32))])
    k.at(42, 7)
    k.op("tt.mystery", [], f32)
    with pytest.raises(UnsupportedError) as ei:
        k.compile_interpreter()
    assert ei.value.loc.line == 42 and "tt.mystery" in str(ei.value)


def test_empty_poisoned_helper():
    a = empty_poisoned((3, 4), np.float16)
    assert a.shape == (3, 4) and np.isnan(a).all()
    b = empty_poisoned(5, np.int32)
    assert (b == 0x5A5A5A5A).all()


def test_backend_compile_result_shape():
    k = K("meta", [("x", ptr(f32))])
    res = k.compile_interpreter()
    assert res.stages == [] and res.metadata.name == "meta"
    assert res.metadata.target == "interpreter" and callable(res.launcher)
    assert InterpreterBackend().target.backend == "interpreter"


_DT = {"f32": (f32, np.float32), "f16": (f16, np.float16), "f64": (f64, np.float64),
       "i32": (i32, np.int32)}


@settings(max_examples=25, deadline=None)
@given(dt=st.sampled_from(sorted(_DT)), m=st.sampled_from([1, 2, 8, 16]),
       n=st.sampled_from([1, 4, 32, 64]), axis=st.sampled_from([0, 1]),
       op=st.sampled_from(["add", "max"]), seed=st.integers(0, 2**31))
def test_reduce_property_random_shapes_dtypes(dt, m, n, axis, op, seed):
    t, npdt = _DT[dt]
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((m, n)) * 4).astype(npdt) if dt != "i32" else \
        rng.integers(-2**31, 2**31, (m, n), dtype=np.int64).astype(np.int32)
    name = {"add": "arith.addi" if dt == "i32" else "arith.addf",
            "max": "arith.maxsi" if dt == "i32" else "arith.maxnumf"}[op]
    k = K("r", [("x", ptr(t)), ("o", ptr(t))])
    xp, o = k.args
    offs = k.bin("arith.addi", k.bcast(k.expand(k.bin("arith.muli", k.arange(0, m), k.const(
        n, TensorType((m,), i32))), 1), (m, n)), k.bcast(k.expand(k.arange(0, n), 0), (m, n)))
    v = k.load(k.addptr(xp, offs))
    r, = k.reduce([v], axis, lambda k, a, b: [k.bin(name, a[0], b[0])])
    k.store(k.addptr(o, k.arange(0, n if axis == 0 else m)), r)
    out = np.zeros(n if axis == 0 else m, npdt)
    k.interpret((1,), x, out)
    if op == "max":
        np.testing.assert_array_equal(out, x.max(axis))
    elif dt == "i32":
        np.testing.assert_array_equal(out, x.sum(axis, dtype=np.int64).astype(np.int32))
    else:
        tol = {"f16": 2e-2, "f32": 1e-5, "f64": 1e-12}[dt]
        np.testing.assert_allclose(out.astype(np.float64), x.astype(np.float64).sum(axis),
                                   rtol=tol, atol=tol * 4 * max(m, n))


@pytest.mark.parametrize("batch", [0, 1 << 15])
def test_combine_region_reading_a_program_dependent_outer_value(batch):
    """combine(a, b) = a + b + pid: n-1 combines add pid n-1 times in any order."""
    rng = np.random.default_rng()
    x = rng.integers(-9, 9, 16).astype(np.float32)
    k = K("outer", [("x", ptr(f32)), ("o", ptr(f32))])
    xp, o = k.args
    pid = k.pid()
    pf = k.cast("arith.sitofp", pid, f32)
    v = k.load(k.addptr(xp, k.arange(0, 16)))
    s, = k.reduce([v], 0, lambda k, a, b: [k.bin("arith.addf", k.bin("arith.addf", a[0], b[0]),
                                                pf)])
    neg = k.op("arith.negf", [s], f32)
    k.store(k.addptr(o, pid), neg)
    out = poisoned(5, np.float32)
    launcher = k.interpret((5,), x, out, batch_elems=batch)
    np.testing.assert_array_equal(out, -(x.sum() + 15 * np.arange(5, dtype=np.float32)))
    assert launcher.last_batch == 1  # not batched: the region reads pid
