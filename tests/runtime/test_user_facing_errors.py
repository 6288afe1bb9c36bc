"""A user error's traceback ends at the user's call: no frames of the compiler's internals,
and IPython shows only the message."""
import traceback

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def typo_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)  # noqa: F841
    tl.store(x_ptr + ofs, 1.0)  # noqa: F821


def test_launch_error_has_no_internal_frames():
    x = np.zeros(8, np.float32)
    with pytest.raises(CompilationError) as info:
        typo_kernel[(1,)](x, BLOCK=8)
    frames = traceback.extract_tb(info.value.__traceback__)
    internal = [f for f in frames if "/workbench/" in f.filename
                and not f.filename.endswith("errors.py")]
    assert internal == [], [f"{f.filename}:{f.lineno}" for f in internal]
    assert "name 'ofs' is not defined" in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_compile_error_has_no_internal_frames():
    with pytest.raises(CompilationError) as info:
        wb.compile(typo_kernel, "*fp32", target="cpu", BLOCK=8)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert all(not ("/workbench/" in f.filename and not f.filename.endswith("errors.py"))
               for f in frames)


def test_ipython_shows_only_the_message():
    try:
        typo_kernel[(1,)](np.zeros(8, np.float32), BLOCK=8)
    except CompilationError as e:
        lines = e._render_traceback_()
    assert lines[0].startswith("CompilationError: ")
    assert any(line.strip() == "tl.store(x_ptr + ofs, 1.0)  # noqa: F821" for line in lines)
    assert any(set(line.strip()) == {"^"} for line in lines)


@wb.jit
def fill_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


@pytest.mark.parametrize("grid, what", [((-1,), ">= 0"), ((1.5,), "ints"), (("x",), "ints"),
                                        ((1, 1, 1, 1), "1 to 3"), (None, "grid must be")])
@pytest.mark.parametrize("how", ["jit", "jit-cached", "compiled"])
def test_bad_grid_points_at_the_kernel(grid, what, how):
    """A bad grid names the kernel's def line with a caret (found by the bad-input fuzzer:
    the message had no location), on the first launch, a cached launch and a compiled one."""
    x = np.zeros(8, np.float32)
    if how == "jit-cached":
        fill_kernel[(1,)](x, BLOCK=8)
        np.testing.assert_array_equal(x, np.ones(8, np.float32))
    from workbench.errors import LaunchError
    launcher = wb.compile(fill_kernel, x, target="cpu", BLOCK=8) if how == "compiled" \
        else fill_kernel
    with pytest.raises(LaunchError, match=what) as info:
        launcher[grid](x, BLOCK=8)
    text = str(info.value)
    assert f"{__file__}:" in text and "def fill_kernel" in text.splitlines()[1], text
    assert set(text.splitlines()[2].strip()) == {"^"}
