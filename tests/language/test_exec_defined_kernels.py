"""A kernel made by ``exec(text)`` (as Triton's tests patch and re-create kernels) compiles:
``@jit`` finds the text in the caller's locals and keeps it readable for the compiler and
for error messages."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError

TEMPLATE = '''
@wb.jit
def kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, OPERATION)
'''


def make(operation: str):
    src = TEMPLATE.replace("OPERATION", operation)
    scope: dict = {}
    exec(src, {"wb": wb, "tl": tl}, scope)
    return scope["kernel"]


def test_exec_defined_kernel_runs(backend):
    x = np.random.default_rng().standard_normal(64).astype(np.float32)
    out = np.full(64, np.nan, dtype=np.float32)
    make("tl.load(x_ptr + offs) * 3.0 - 1.0")[(1,)](x, out, BLOCK=64)
    np.testing.assert_allclose(out, x * 3.0 - 1.0, rtol=1e-6)


def test_exec_defined_kernel_error_shows_its_line(backend):
    k = make("tl.load(x_ptr + offs) + undefined_thing")
    with pytest.raises(CompilationError) as info:
        k[(1,)](np.zeros(8, np.float32), np.zeros(8, np.float32), BLOCK=8)
    assert "undefined_thing" in str(info.value)
    assert "tl.store(out_ptr + offs, tl.load(x_ptr + offs) + undefined_thing)" in \
        str(info.value)
