"""Load fusion on the CPU backend: a tile load that only feeds a store (through elementwise
ops) is read inside the store's loop. The values must be those of loading the whole tile
first (Triton's semantics), also when the arrays overlap."""
import numpy as np

import workbench as wb
import workbench.language as tl
from workbench.codegen.cpu.load_fusion import fusions

rng = np.random.default_rng()


@wb.jit
def _add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@wb.jit
def _scale_in_place(x_ptr, n, BLOCK: tl.constexpr):
    p = x_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) < n
    tl.store(p, tl.load(p, mask=m) * 2.0 + 1.0, mask=m)


@wb.jit
def _shift_right(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs + 1, tl.load(x_ptr + offs) * 2.0)


@wb.jit
def _load_used_twice(x_ptr, o_ptr, s_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, v + 1.0)
    tl.store(s_ptr, tl.sum(v, axis=0))


@wb.jit
def _store_between(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, v * 0.0)  # overwrites x before v is stored: v must be the old x
    tl.store(o_ptr + offs, v + 1.0)


def test_streaming_add_is_right_with_a_masked_tail():
    n = 3000 + int(rng.integers(0, 500))
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    o = np.full(n, np.nan, np.float32)
    k = _add[(wb.cdiv(n, 512),)](x, y, o, n, BLOCK=512)
    np.testing.assert_array_equal(o, x + y)
    assert "gather" not in k.asm["asm"] and "scatter" not in k.asm["asm"]


def test_in_place_through_the_same_pointer_needs_no_scratch():
    n = 1000 + int(rng.integers(0, 100))
    x = rng.standard_normal(n).astype(np.float32)
    want = x * np.float32(2.0) + np.float32(1.0)
    k = _scale_in_place[(wb.cdiv(n, 256),)](x, n, BLOCK=256)
    np.testing.assert_array_equal(x, want)
    assert k.extra["scratch_bytes"] == 0  # the load was read in the store's loop


def test_output_that_is_an_input_takes_the_copied_path():
    n = 2048
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    want = x + y
    _add[(wb.cdiv(n, 256),)](x, y, x, n, BLOCK=256)  # o is x: same addresses, same index
    np.testing.assert_array_equal(x, want)


def test_overlapping_shifted_store_sees_the_whole_tile_loaded_first():
    block = 128
    buf = rng.standard_normal(block + 1).astype(np.float32)
    old = buf.copy()
    _shift_right[(1,)](buf, buf, BLOCK=block)  # reads buf[0:128], writes buf[1:129]
    want = old.copy()
    want[1:] = old[:block] * np.float32(2.0)
    np.testing.assert_array_equal(buf, want)
    x = rng.standard_normal(block + 1).astype(np.float32)
    o = np.zeros(block + 1, np.float32)
    _shift_right[(1,)](x, o, BLOCK=block)  # disjoint arrays: the fused loop
    np.testing.assert_array_equal(o[1:], x[:block] * np.float32(2.0))


def test_loads_that_cannot_be_deferred_keep_their_values():
    block = 64
    x = rng.standard_normal(block).astype(np.float32)
    o, s = np.zeros(block, np.float32), np.zeros(1, np.float32)
    _load_used_twice[(1,)](x, o, s, BLOCK=block)
    np.testing.assert_array_equal(o, x + np.float32(1.0))
    np.testing.assert_allclose(s[0], x.sum(dtype=np.float64), rtol=1e-5,
                               atol=1e-6 * np.abs(x).sum())  # the sum may cancel
    old = x.copy()
    _store_between[(1,)](x, o, BLOCK=block)
    np.testing.assert_array_equal(o, old + np.float32(1.0))
    assert (x == 0).all()


def _ttir_func(kernel, *sig, **consts):
    from workbench.ir.core import functions
    from workbench.ir.parser import parse_module
    text = wb.compile(kernel, *sig, target="cpu", **consts).asm["ttir"]
    return functions(parse_module(text))[0]


def test_the_analysis_picks_exactly_the_streaming_loads():
    func = _ttir_func(_add, "*fp32", "*fp32", "*fp32", "i32", BLOCK=64)
    found = fusions(func)
    assert len(found) == 2 and all(not f.same_pointer for f in found.values())
    func = _ttir_func(_scale_in_place, "*fp32", "i32", BLOCK=64)
    assert [f.same_pointer for f in fusions(func).values()] == [True]
    assert fusions(_ttir_func(_load_used_twice, "*fp32", "*fp32", "*fp32", BLOCK=64)) == {}
    assert fusions(_ttir_func(_store_between, "*fp32", "*fp32", BLOCK=64)) == {}
