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


SCRIPT = '''import numpy as np
import workbench as wb
import workbench.language as tl


@wb.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, {width})
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


x = np.zeros(16, np.float32)
k[(1,)](x, 16, BLOCK=16)
'''


def test_script_traceback_is_the_users_line_and_our_message(tmp_path):
    """An uncaught error in a script: the user's launch line, then our message with the
    kernel's line and caret; no frame of the package, no chained language error, no
    "(Triton's position ...)" line (``str(error)`` keeps that one for Triton's tests)."""
    import subprocess
    import sys
    from pathlib import Path
    width = int(np.random.default_rng().choice([3, 5, 6, 7, 12]))
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT.format(width=width))
    root = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "WORKBENCH_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=120)
    assert run.returncode == 1, run.stderr
    lines = run.stderr.splitlines()
    assert lines[0] == "Traceback (most recent call last):", run.stderr
    assert lines[1] == f'  File "{script}", line 13, in <module>', run.stderr
    assert lines[2].strip() == "k[(1,)](x, 16, BLOCK=16)"
    assert lines[3] == (f"CompilationError: {script}:8:39: arange's range must be a power "
                        "of 2"), run.stderr
    assert lines[4].strip() == f"offs = tl.program_id(0) * BLOCK + tl.arange(0, {width})"
    assert lines[5].index("^") == lines[4].index("tl.arange")
    assert f"use tl.arange(0, {1 << (width - 1).bit_length()})" in lines[6], run.stderr
    assert len(lines) == 7, run.stderr
    assert "/workbench/" not in run.stderr and "Triton's position" not in run.stderr
    assert "direct cause" not in run.stderr


def test_str_keeps_tritons_position_and_other_hooks_are_left_alone():
    import sys
    with pytest.raises(CompilationError) as info:
        wb.compile(typo_kernel, "*fp32", target="cpu", BLOCK=8)
    assert "(Triton's position: at 3:21: of typo_kernel)" in str(info.value)
    assert "Triton's position" not in info.value.shown_text()
    assert "Triton's position" not in "\n".join(info.value._render_traceback_())
    assert sys.excepthook is not sys.__excepthook__   # ours, installed at import
