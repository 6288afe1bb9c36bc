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
