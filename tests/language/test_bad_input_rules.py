"""Language rules the bad-input fuzzer found missing: each bad kernel raises a CompilationError
pointing at its line (file:line:col and a caret), as Triton 3.6 rejects it too, on both host
backends; the valid neighbour of each still runs and gives numpy's values."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError

THIS_FILE = __file__
TARGETS = ["interpreter", "cpu"]


@wb.jit
def expand_axis(x_ptr, out_ptr, AX: tl.constexpr):
    offs = tl.arange(0, 16)
    v = tl.expand_dims(tl.load(x_ptr + offs), AX)  # expand line
    tl.store(out_ptr + offs, tl.reshape(v, (16,)))


@wb.jit
def dot_of(a_ptr, b_ptr, out_ptr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
    c = tl.dot(a, b)  # dot line
    tl.store(out_ptr + r[:, None] * 16 + r[None, :], c)


def _line_of(marker: str) -> int:
    return next(i for i, t in enumerate(open(THIS_FILE), 1) if marker in t and "def " not in t)


def _assert_points_at(err, marker):
    text = str(err)
    assert f"{THIS_FILE}:{_line_of(marker)}:" in text, text
    assert "^" in text.splitlines()[2], text


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("axis", [2, 9, -3, -10])
def test_expand_dims_axis_out_of_range(target, axis, rng):
    x = rng.standard_normal(16).astype(np.float32)
    with pytest.raises(CompilationError, match="invalid axis") as info:
        wb.compile(expand_axis, x, np.zeros(16, np.float32), target=target, AX=axis)
    _assert_points_at(info.value, "# expand line")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_expand_dims_axis_in_range_runs(target, axis, rng):
    x = rng.standard_normal(16).astype(np.float32)
    out = np.zeros(16, np.float32)
    wb.compile(expand_axis, x, out, target=target, AX=axis)[(1,)](x, out, AX=axis)
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.int32, np.uint32, np.int64])
def test_dot_of_an_unsupported_dtype(target, dtype, rng):
    a = rng.integers(0, 2, (16, 16)).astype(dtype)
    out = np.zeros((16, 16), np.int32)
    with pytest.raises(CompilationError, match="does not take") as info:
        wb.compile(dot_of, a, a.copy(), out, target=target)
    _assert_points_at(info.value, "# dot line")


@pytest.mark.parametrize("target", TARGETS)
def test_dot_of_fp16_runs(target, rng):
    a = rng.integers(-4, 5, (16, 16)).astype(np.float16)
    b = rng.integers(-4, 5, (16, 16)).astype(np.float16)
    out = np.zeros((16, 16), np.float32)
    wb.compile(dot_of, a, b, out, target=target)[(1,)](a, b, out)
    np.testing.assert_array_equal(out, a.astype(np.float32) @ b.astype(np.float32))


@wb.jit
def reduce_with(x_ptr, out_ptr, WHICH: tl.constexpr):
    offs = tl.arange(0, 16)
    v = tl.load(x_ptr + offs)
    if WHICH == 0:
        r = tl.reduce(v, 0, None)  # combine none
    elif WHICH == 1:
        r = tl.associative_scan(v, 0, 5)  # combine int
    else:
        r = tl.reduce(v, 0, v)  # combine tile
    tl.store(out_ptr + offs, r)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("which", [0, 1, 2])
def test_combine_fn_that_is_not_jit(target, which, rng):
    """tl.reduce / tl.associative_scan with None, an int or a tile as combine_fn (an
    AttributeError escaped from the inliner before)."""
    x = rng.integers(-9, 9, 16).astype(np.int32)
    with pytest.raises(CompilationError, match="combine_fn must be a @jit function") as info:
        wb.compile(reduce_with, x, np.zeros(16, np.int32), target=target, WHICH=which)
    _assert_points_at(info.value, "# combine " + ("none", "int", "tile")[which])


@wb.jit
def hinted(x_ptr, out_ptr, H: tl.constexpr):
    offs = tl.multiple_of(tl.arange(0, 16), H)  # hint line
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("h", [0, -4, 1.5])
def test_hint_values_below_one_are_refused(target, h, rng):
    """tl.multiple_of(x, 0) and friends: Triton 3.6 accepts them and then crashes in its
    axis analysis (max_contiguous(x, -1) trips an assertion); here a caret error."""
    x = rng.standard_normal(16).astype(np.float32)
    with pytest.raises(CompilationError, match="must be a compile-time int >= 1") as info:
        wb.compile(hinted, x, np.zeros(16, np.float32), target=target, H=h)
    _assert_points_at(info.value, "# hint line")


@pytest.mark.parametrize("target", TARGETS)
def test_hint_of_a_valid_value_runs(target, rng):
    x = rng.standard_normal(16).astype(np.float32)
    out = np.zeros(16, np.float32)
    wb.compile(hinted, x, out, target=target, H=16)[(1,)](x, out, H=16)
    np.testing.assert_array_equal(out, x)
