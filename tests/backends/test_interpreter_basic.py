"""Interpreter on hand-built ttir: vector add, 2-D broadcast, 3-D grids, out-of-bounds errors,
batched vs one-by-one execution."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ir_kit import FILE, K, poisoned, ptr
from workbench.errors import OutOfBoundsError
from workbench.ir.types import TensorType, f32, i32, i64


def vector_add(block, use_mask=True):
    k = K("add", [("x_ptr", ptr(f32)), ("y_ptr", ptr(f32)), ("out_ptr", ptr(f32)), ("n", i32)])
    x, y, out, n = k.args
    k.at(3)
    offs = k.bin("arith.addi", k.splat(k.bin("arith.muli", k.pid(), k.const(block, i32)),
                                       (block,)), k.arange(0, block))
    mask = k.cmp("arith.cmpi", "slt", offs, k.splat(n, (block,))) if use_mask else None
    k.at(5)
    a = k.load(k.addptr(x, offs), mask)
    k.at(6)
    b = k.load(k.addptr(y, offs), mask)
    k.at(7)
    k.store(k.addptr(out, offs), k.bin("arith.addf", a, b), mask)
    return k


@pytest.mark.parametrize("batch", [0, 1 << 16])
def test_vector_add_with_tail_mask(batch):
    rng = np.random.default_rng()
    n = int(rng.integers(3000, 5000))
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    out = poisoned(n, np.float32)
    launcher = vector_add(256).interpret(((n + 255) // 256,), x, y, out, n, batch_elems=batch)
    np.testing.assert_array_equal(out, x + y)
    assert launcher.last_batch == (1 if batch == 0 else (n + 255) // 256)


def test_masked_load_without_other_reads_zero_and_other_is_used():
    k = K("k", [("x", ptr(f32)), ("o", ptr(f32)), ("n", i32)])
    x, o, n = k.args
    r = k.arange(0, 16)
    m = k.cmp("arith.cmpi", "slt", r, k.splat(n, (16,)))
    a = k.load(k.addptr(x, r), m)
    b = k.load(k.addptr(x, r), m, k.const(7.5, TensorType((16,), f32)))
    k.store(k.addptr(o, r), a)
    k.store(k.addptr(o, k.bin("arith.addi", r, k.const(16, TensorType((16,), i32)))), b)
    xs = np.random.rand(5).astype(np.float32)
    out = poisoned(32, np.float32)
    k.interpret((1,), xs, out, 5)
    np.testing.assert_array_equal(out[:16], np.r_[xs, np.zeros(11, np.float32)])
    np.testing.assert_array_equal(out[16:], np.r_[xs, np.full(11, 7.5, np.float32)])


def broadcast_2d(bm, bn):
    """out[i, j] = x[i] * 2 + y[j] over a 2-D grid with masks and strided out."""
    k = K("bc", [("x", ptr(f32)), ("y", ptr(f32)), ("o", ptr(f32)), ("M", i32), ("N", i32),
                 ("s0", i32), ("s1", i32)])
    x, y, o, M, N, s0, s1 = k.args
    rm = k.bin("arith.addi", k.splat(k.bin("arith.muli", k.pid(0), k.const(bm, i32)), (bm,)),
               k.arange(0, bm))
    rn = k.bin("arith.addi", k.splat(k.bin("arith.muli", k.pid(1), k.const(bn, i32)), (bn,)),
               k.arange(0, bn))
    mm = k.cmp("arith.cmpi", "slt", rm, k.splat(M, (bm,)))
    mn = k.cmp("arith.cmpi", "slt", rn, k.splat(N, (bn,)))
    xv = k.load(k.addptr(x, rm), mm)
    yv = k.load(k.addptr(y, rn), mn)
    two = k.const(2.0, TensorType((bm,), f32))
    col = k.bcast(k.expand(k.bin("arith.mulf", xv, two), 1), (bm, bn))
    row = k.bcast(k.expand(yv, 0), (bm, bn))
    val = k.bin("arith.addf", col, row)
    offs = k.bin("arith.addi",
                 k.bcast(k.expand(k.bin("arith.muli", rm, k.splat(s0, (bm,))), 1), (bm, bn)),
                 k.bcast(k.expand(k.bin("arith.muli", rn, k.splat(s1, (bn,))), 0), (bm, bn)))
    mask = k.bin("arith.andi", k.bcast(k.expand(mm, 1), (bm, bn)),
                 k.bcast(k.expand(mn, 0), (bm, bn)))
    k.store(k.addptr(o, offs), val, mask)
    return k


@pytest.mark.parametrize("batch", [0, 1 << 16])
def test_2d_broadcast_into_strided_view(batch):
    rng = np.random.default_rng()
    M, N = int(rng.integers(20, 70)), int(rng.integers(20, 70))
    x, y = rng.standard_normal(M, np.float32), rng.standard_normal(N, np.float32)
    big = poisoned((2 * N, M), np.float32)
    out = big[::2, :].T  # (M, N) view, strides (4, 8N)
    k = broadcast_2d(16, 32)
    k.interpret(((M + 15) // 16, (N + 31) // 32), x, y, out, M, N, out.strides[0] // 4,
          out.strides[1] // 4, batch_elems=batch)
    np.testing.assert_array_equal(out, x[:, None] * 2 + y[None, :])
    assert np.isnan(big[1::2]).all()  # rows between the view's rows untouched


def test_3d_grid_program_ids_and_num_programs():
    k = K("ids", [("o", ptr(i32))])
    o, = k.args
    px, py, pz = k.pid(0), k.pid(1), k.pid(2)
    nx, ny, nz = k.nprog(0), k.nprog(1), k.nprog(2)
    lin = k.bin("arith.addi", k.bin("arith.muli", k.bin("arith.addi", k.bin(
        "arith.muli", pz, ny), py), nx), px)
    base = k.bin("arith.muli", lin, k.const(4, i32))
    r = k.arange(0, 4)
    vals = [px, py, pz, k.bin("arith.addi", k.bin("arith.muli", nx, k.const(100, i32)),
                                  k.bin("arith.addi", k.bin("arith.muli", ny, k.const(10, i32)),
                                        nz))]
    for j, v in enumerate(vals):
        k.store(k.addptr(o, k.bin("arith.addi", base, k.const(j, i32))), v)
    del r
    g = (3, 4, 2)
    out = poisoned(24 * 4, np.int32)
    k.interpret(g, out)
    z, y, x = np.meshgrid(np.arange(2), np.arange(4), np.arange(3), indexing="ij")
    exp = np.stack([x, y, z, np.full_like(x, 342)], -1).reshape(-1)
    np.testing.assert_array_equal(out, exp)


@pytest.mark.parametrize("batch", [0, 1 << 16])
def test_out_of_bounds_load_names_program_line_and_offsets(batch):
    n = 1000
    x = np.random.rand(n).astype(np.float32)
    y = np.random.rand(n).astype(np.float32)
    out = poisoned(n, np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        vector_add(256, use_mask=False).interpret((4,), x, y, out, n, batch_elems=batch)
    e = ei.value
    assert e.program_id == (3, 0, 0)
    assert e.loc.line == 5 and e.loc.file == FILE
    assert e.arg == "x_ptr"
    assert e.offsets == list(range(1000, 1024)) and e.element_offset == 1000
    assert e.offset == 4000 and "4000" in str(e)  # the contract: .offset in bytes
    assert f"{FILE}:5:5" in str(e) and "x_ptr" in str(e) and "(3, 0, 0)" in str(e)
    np.testing.assert_array_equal(out[:768], x[:768] + y[:768])  # programs 0-2 ran


def test_out_of_bounds_store_with_negative_offsets():
    k = K("neg", [("o", ptr(f32))])
    o, = k.args
    k.at(9, 3)
    offs = k.bin("arith.subi", k.arange(0, 8), k.splat(k.bin("arith.muli", k.pid(), k.const(
        3, i32)), (8,)))
    k.store(k.addptr(o, offs), k.const(1.0, TensorType((8,), f32)))
    out = poisoned(8, np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        k.interpret((2,), out)
    assert ei.value.program_id == (1, 0, 0) and ei.value.offsets == [-3, -2, -1]
    assert ei.value.loc.line == 9 and "store" in str(ei.value)


def test_i64_pointer_math_past_2_31_is_out_of_bounds_not_a_crash():
    k = K("far", [("x", ptr(f32)), ("o", ptr(f32))])
    x, o = k.args
    off = k.bin("arith.muli", k.cast("arith.extsi", k.arange(0, 4), i64),
                k.const(1 << 40, TensorType((4,), i64)))
    k.store(k.addptr(o, k.arange(0, 4)), k.load(k.addptr(x, off)))
    with pytest.raises(OutOfBoundsError) as ei:
        k.interpret((1,), np.ones(4, np.float32), np.zeros(4, np.float32))
    assert ei.value.offsets == [1 << 40, 2 << 40, 3 << 40]


def test_in_place_kernel_is_not_batched_and_correct():
    k = vector_add(128)
    x = np.random.rand(1000).astype(np.float32)
    y = np.random.rand(1000).astype(np.float32)
    exp = x + y
    launcher = k.interpret((8,), x, y, x, 1000)  # out aliases x
    np.testing.assert_array_equal(x, exp)
    assert launcher.last_batch == 1


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 3000), block=st.sampled_from([16, 64, 256]),
       batch=st.sampled_from([0, 1024, 1 << 16]))
def test_vector_add_property_batched_equals_numpy(n, block, batch):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    out = poisoned(n, np.float32)
    vector_add(block).interpret(((n + block - 1) // block,), x, y, out, n, batch_elems=batch)
    np.testing.assert_array_equal(out, x + y)
