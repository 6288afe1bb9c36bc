"""Out-of-bounds accesses raise OutOfBoundsError (program id, line, offset) and the process
survives; WORKBENCH_BOUNDS_CHECK=0 turns the checks off."""
import inspect

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import OutOfBoundsError


@wb.jit
def unmasked_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * 2.0)


def line_of(jf, text):
    lines, first = inspect.getsourcelines(jf.fn)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


def test_unmasked_load_out_of_bounds(backend):
    rng = np.random.default_rng()
    x = rng.standard_normal(300).astype(np.float32)  # programs 0, 1 fit; 2 reads 256..383
    out = np.full(384, np.nan, np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        unmasked_copy[(3,)](x, out, BLOCK=128)
    e = ei.value
    load_line = line_of(unmasked_copy, "tl.load(x_ptr")
    assert e.program_id == (2, 0, 0)
    assert e.loc is not None and e.loc.line == load_line
    msg = str(e)
    assert f"{__file__}:{load_line}:" in msg
    assert "tl.load(x_ptr + offs)" in msg  # the source line is shown
    assert "(2, 0, 0)" in msg and "300" in msg  # program id and the first bad element
    # the process survives and the next launch works
    y = rng.standard_normal(256).astype(np.float32)
    out2 = np.full(256, np.nan, np.float32)
    unmasked_copy[(2,)](y, out2, BLOCK=128)
    np.testing.assert_array_equal(out2, y * np.float32(2.0))


def test_unmasked_store_out_of_bounds_in_a_view(backend):
    rng = np.random.default_rng()
    x = rng.standard_normal(128).astype(np.float32)
    base = np.full(200, np.nan, np.float32)
    out = base[:100]  # the view ends before the store does
    with pytest.raises(OutOfBoundsError) as ei:
        unmasked_copy[(1,)](x, out, BLOCK=128)
    e = ei.value
    assert e.program_id == (0, 0, 0)
    assert e.loc.line == line_of(unmasked_copy, "tl.store(out_ptr")
    assert "100" in str(e)


def test_oob_offset_is_in_bytes(backend):
    """errors.OutOfBoundsError: ``offset`` is the offending *byte* offset from the base."""
    x = np.zeros(300, np.float32)
    out = np.zeros(384, np.float32)
    with pytest.raises(OutOfBoundsError) as ei:
        unmasked_copy[(3,)](x, out, BLOCK=128)
    assert ei.value.offset == 300 * 4 and str(ei.value.offset) in str(ei.value)


def test_negative_offset_is_out_of_bounds(backend):
    base = np.zeros(256, np.float32)
    x = base[128:]
    out = np.zeros(128, np.float32)
    with pytest.raises(OutOfBoundsError):
        reverse_copy[(1,)](x, out, BLOCK=128)


@wb.jit
def reverse_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr - offs))  # reads before x's first element


def test_bounds_check_off(backend, monkeypatch):
    rng = np.random.default_rng()
    monkeypatch.setenv("WORKBENCH_BOUNDS_CHECK", "0")
    x = rng.standard_normal(256).astype(np.float32)
    out = np.full(256, np.nan, np.float32)
    k = unmasked_copy[(2,)](x, out, BLOCK=128)
    assert k.options.bounds_check is False
    np.testing.assert_array_equal(out, x * np.float32(2.0))
    monkeypatch.setenv("WORKBENCH_BOUNDS_CHECK", "1")
    k_on = unmasked_copy[(2,)](x, out, BLOCK=128)
    assert k_on is not k and k_on.options.bounds_check is True


def test_bounds_check_off_reads_past_a_view_cpu(monkeypatch):
    """With checks off the CPU kernel reads the base array's memory past the end of a view
    (memory that exists, so this is safe), which a checked launch refuses."""
    monkeypatch.delenv("WORKBENCH_INTERPRET", raising=False)
    rng = np.random.default_rng()
    base = rng.standard_normal(256).astype(np.float32)
    view = base[:200]
    out = np.full(256, np.nan, np.float32)
    with pytest.raises(OutOfBoundsError):
        unmasked_copy[(2,)](view, out, BLOCK=128)
    monkeypatch.setenv("WORKBENCH_BOUNDS_CHECK", "0")
    unmasked_copy[(2,)](view, out, BLOCK=128)
    np.testing.assert_array_equal(out, base * np.float32(2.0))
