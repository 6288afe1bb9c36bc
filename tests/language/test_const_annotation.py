"""``tl.const`` is accepted as a pointer parameter's annotation (Triton's read-only
pointer marker); the kernel reads through it as through any pointer."""
import numpy as np

import workbench as wb
import workbench.language as tl


@wb.jit
def copy_scaled(in_ptr: tl.const, out_ptr, n: tl.int32, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(in_ptr + offs, mask=mask) * 3, mask=mask)


def test_const_annotated_pointer_is_read(backend):
    rng = np.random.default_rng()
    n = int(rng.integers(1, 64))
    x = rng.standard_normal(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    copy_scaled[(1,)](x, out, n, BLOCK=64)
    np.testing.assert_allclose(out[:n], 3 * x[:n], rtol=1e-6)
    assert not out[n:].any()
