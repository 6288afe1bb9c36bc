"""A tile's shape compares equal to a list (``t.shape == [1, N]`` in ``tl.static_assert``, as
Triton's list shapes do), and ``tl.expand_dims`` refuses out-of-range and duplicate axes with
Triton's words, the language error chained as the CompilationError's cause, its traceback
cut to the language library's frames."""
import os
import traceback

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def shapes(out_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    t = tl.expand_dims(r, (0, 2))
    tl.static_assert(t.shape == [1, N, 1])
    tl.static_assert(t.shape != [N, 1, 1])
    tl.static_assert(tl.sum(r, 0).shape == [])
    tl.store(out_ptr + r, tl.reshape(t, (N,)))


def test_shape_equals_a_list(backend):
    out = np.zeros(16, np.int32)
    shapes[(1,)](out, 16)
    np.testing.assert_array_equal(out, np.arange(16))


@wb.jit
def bad_axis(x_ptr, AXES: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, 8)[None, :], tl.expand_dims(tl.arange(0, 8), AXES))


@pytest.mark.parametrize("axes, words", [(-3, "invalid axis -3"), (2, "invalid axis 2"),
                                         ((0, -3), r"duplicate axes, normalized axes = \[0, 0\]")])
def test_expand_dims_axis_errors(axes, words):
    with pytest.raises(CompilationError, match=words) as e:
        bad_axis[(1,)](np.zeros(8, np.int32), axes)
    assert "tl.expand_dims(tl.arange(0, 8), AXES)" in str(e.value)
    cause = e.value.__cause__
    assert cause is not None
    # the cause's frames are the language library's (as Triton's show its core.py): the
    # builtin's wrapper in language/core.py first, then the rule in language/shapes.py
    frames = traceback.extract_tb(cause.__traceback__)
    assert [f.filename.split(os.sep)[-2:] for f in frames[:2]] == [["language", "core.py"],
                                                                   ["language", "shapes.py"]]
    assert all(os.sep + "language" + os.sep in f.filename for f in frames)
    assert str(cause).startswith(words.replace("\\", "")[:12])
