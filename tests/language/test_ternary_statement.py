"""A conditional expression used as a statement (``store(a) if c else store(b)``) runs only
the chosen side, as Triton's ``scf.if`` does: each program writes one of two arrays and the
other keeps its poison."""
import numpy as np

import workbench as wb
import workbench.language as tl


@wb.jit
def store_by_parity(x_ptr, even_ptr, odd_ptr):
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    tl.store(even_ptr + pid, v * 2) if pid % 2 == 0 else tl.store(odd_ptr + pid, v - 1)


def test_only_the_chosen_side_stores(backend):
    rng = np.random.default_rng()
    n = int(rng.integers(3, 12))
    x = rng.standard_normal(n).astype(np.float32)
    even = np.full(n, np.nan, np.float32)
    odd = np.full(n, np.nan, np.float32)
    store_by_parity[(n,)](x, even, odd)
    idx = np.arange(n)
    np.testing.assert_allclose(even[idx % 2 == 0], 2 * x[idx % 2 == 0], rtol=1e-6)
    np.testing.assert_allclose(odd[idx % 2 == 1], x[idx % 2 == 1] - 1, rtol=1e-6)
    assert np.isnan(even[idx % 2 == 1]).all() and np.isnan(odd[idx % 2 == 0]).all()
