"""``x is None`` / ``x is not None`` where ``x`` is a tensor (a pointer argument given an
array) is a compile-time answer, as in Triton: the guarded branch is compiled or dropped."""
import numpy as np

import workbench as wb
import workbench.language as tl


@wb.jit
def maybe_scaled(x_ptr, scale_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if scale_ptr is not None:
        x = x * tl.load(scale_ptr + offs, mask=mask)
    if x_ptr is None:
        x = x + 1000.0  # never compiled: an argument given an array is not None
    tl.store(out_ptr + offs, x, mask=mask)


def test_is_not_none_on_a_pointer_argument(backend):
    rng = np.random.default_rng()
    n = 200
    x = rng.standard_normal(n).astype(np.float32)
    s = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    maybe_scaled[(2,)](x, s, out, n, BLOCK=128)
    np.testing.assert_allclose(out, x * s, rtol=1e-6)
    out2 = np.full(n, np.nan, dtype=np.float32)
    maybe_scaled[(2,)](x, None, out2, n, BLOCK=128)
    np.testing.assert_array_equal(out2, x)
