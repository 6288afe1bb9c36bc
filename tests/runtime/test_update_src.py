"""Triton's template-kernel idiom: a kernel's source text patched before it compiles
(``kernel._unsafe_update_src(kernel.src.replace(key, value))``), as Triton's language tests do
on a GPU; checked on the CPU backend against numpy with fresh random inputs."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


def template(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)  # noqa: F841 - used by the patched text
    y = tl.load(y_ptr + offs)  # noqa: F841 - used by the patched text
    tl.store(out_ptr + offs, GENERATE_TEST_HERE)  # noqa: F821 - replaced before compiling


@pytest.mark.parametrize("expr,ref", [("x + y", np.add), ("x * y - x", lambda x, y: x * y - x),
                                      ("tl.maximum(x, y)", np.maximum)])
def test_patched_template_compiles_the_new_text(expr, ref):
    kernel = wb.JITFunction(template)
    assert "GENERATE_TEST_HERE" in kernel.src.replace("x + y", "")
    kernel._unsafe_update_src(kernel.src.replace("GENERATE_TEST_HERE", expr))
    rng = np.random.default_rng()
    x, y = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    kernel[(1,)](x, y, out, N=64)
    np.testing.assert_allclose(out, ref(x, y), rtol=1e-6)
    assert expr in str(kernel.src)


def test_a_second_patch_drops_the_first_compilation():
    kernel = wb.JITFunction(template)
    text = kernel.src.text
    x, y = np.arange(8, dtype=np.float32), np.full(8, 2.0, np.float32)
    out = np.zeros(8, np.float32)
    kernel._unsafe_update_src(text.replace("GENERATE_TEST_HERE", "x + y"))
    kernel[(1,)](x, y, out, N=8)
    np.testing.assert_array_equal(out, x + y)
    kernel._unsafe_update_src(text.replace("GENERATE_TEST_HERE", "x - y"))
    kernel[(1,)](x, y, out, N=8)
    np.testing.assert_array_equal(out, x - y)


def test_a_syntax_error_in_the_new_text_points_at_its_line():
    kernel = wb.JITFunction(template)
    with pytest.raises(CompilationError) as e:
        kernel._unsafe_update_src(kernel.src.replace("GENERATE_TEST_HERE", "x +* y"))
    assert "test_update_src.py" in str(e.value)
