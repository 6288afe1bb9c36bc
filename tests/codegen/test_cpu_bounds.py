"""Bounds checks of the CPU backend: a bad access raises OutOfBoundsError naming the program
id, the parameter, the source line and the offset, and the process survives."""
from __future__ import annotations

import numpy as np
import pytest

from tests.ir_kit import FILE, K, ptr, run
from workbench.errors import LaunchError, OutOfBoundsError
from workbench.ir.types import TensorType, f32, i32

rng = np.random.default_rng()


def _copy(BLOCK, masked):
    """out[offs] = x[offs] for offs = pid * BLOCK + arange, masked by offs < n if ``masked``;
    the load is on line 10, the store on line 11."""
    k = K("copy", [("x_ptr", ptr(f32)), ("out_ptr", ptr(f32)), ("n", i32)])
    x, o, n = k.args
    pid = k.at(8).pid(0)
    offs = k.at(9).bin("arith.addi", k.splat(k.bin("arith.muli", pid, k.const(BLOCK, i32)),
                                              (BLOCK,)), k.arange(0, BLOCK))
    mask = k.cmp("arith.cmpi", "slt", offs, k.splat(n, (BLOCK,))) if masked else None
    v = k.at(10, 9).load(k.addptr(x, offs), mask)
    k.at(11, 5).store(k.addptr(o, offs), v, mask)
    return k.ret()


def test_unmasked_load_past_the_end_names_program_line_and_offset():
    res = _copy(64, masked=False).compile()
    n = 64 * 3 - 10  # program 2 reads 10 elements past the end of x
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(64 * 3, np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        run(res, 3, x, out, n)
    e = ei.value
    assert e.program_id == (2, 0, 0)
    assert e.arg == "x_ptr"
    assert e.offset == n * 4  # first offending element: x[n], byte offset 4n
    assert e.loc.file == FILE and e.loc.line == 10
    msg = str(e)
    assert f"{FILE}:10:9" in msg and "program id (2, 0, 0)" in msg and f"element offset {n}" \
        in msg and "x_ptr" in msg
    # the process survives and the same launcher still works with a valid launch
    run(res, 2, x, out, n)
    np.testing.assert_array_equal(out[:128], x[:128])


def test_masked_access_is_not_an_error():
    res = _copy(64, masked=True).compile()
    n = 100
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    run(res, 2, x, out, n)
    np.testing.assert_array_equal(out, x)


def test_store_out_of_bounds_negative_offset():
    k = K("neg", [("o", ptr(f32)), ("shift", i32)])
    o, shift = k.args
    offs = k.at(20).bin("arith.subi", k.arange(0, 16), k.splat(shift, (16,)))
    k.at(21).store(k.addptr(o, offs), k.const(1.0, TensorType((16,), f32)))
    res = k.ret().compile()
    big = np.zeros(32, np.float32)
    view = big[8:24]  # a view: the span is exactly its 16 elements, not the whole buffer
    with pytest.raises(OutOfBoundsError) as ei:
        run(res, (1, 2, 1), view, 3)
    e = ei.value
    assert e.program_id == (0, 0, 0) and e.arg == "o" and e.offset == -12 and e.loc.line == 21
    assert "store" in str(e)
    assert (big == 0).all()  # nothing was written by the failing program


def test_bounds_check_off_allows_in_allocation_overrun():
    res = _copy(64, masked=False).compile(bounds_check=False)
    base = rng.standard_normal(128).astype(np.float32)
    x = base[:100]  # reading x[100:128] stays inside `base`, so unchecked code is harmless
    out = np.zeros(128, np.float32)
    run(res, 2, x, out, 100)
    np.testing.assert_array_equal(out, base)
    assert res.launcher.mem_ops == []


def test_bounds_check_reports_lowest_program_among_workers():
    res = _copy(16, masked=False).compile()
    n = 16 * 50
    x = rng.standard_normal(n - 1).astype(np.float32)  # only the last program overruns
    out = np.zeros(n, np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        run(res, 50, x, out, n)
    assert ei.value.program_id == (49, 0, 0) and ei.value.offset == (n - 1) * 4


def test_launch_argument_errors():
    res = _copy(16, masked=True).compile()
    x = np.zeros(16, np.float32)
    with pytest.raises(LaunchError, match="takes 3"):
        run(res, 1, x, x)
    with pytest.raises(LaunchError, match="pointer"):
        run(res, 1, x, 5, 16)
    with pytest.raises(LaunchError, match="integer"):
        run(res, 1, x, x, 1.5)
