"""``tensor.item()``, ``tl.histogram`` (with and without a mask), ``hasattr`` on a tensor and
``tl.pi32_t``, against numpy on both host backends."""
import numpy as np
from lang_helpers import launch

import workbench as wb
import workbench.language as tl


@wb.jit
def counts(x_ptr, lock_ptr, h_ptr, hm_ptr, out_ptr, N: tl.constexpr, BINS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(h_ptr + tl.arange(0, BINS), tl.histogram(x, BINS))
    tl.store(hm_ptr + tl.arange(0, BINS), x.histogram(BINS, mask=x % 2 == 0))
    first = tl.load(lock_ptr + tl.arange(0, 1)).item()
    has = hasattr(x, "dtype") and not hasattr(x, "no_such_attribute")
    p = lock_ptr.to(tl.pi32_t)
    tl.store(out_ptr, first * 10 + has + tl.load(p + 1))


def test_item_histogram_hasattr(backend, rng):
    x = rng.integers(0, 12, 64).astype(np.int32)  # some values fall outside 8 bins
    lock = rng.integers(1, 100, 2).astype(np.int32)
    h, hm = np.zeros(8, np.int32), np.zeros(8, np.int32)
    out = np.zeros(1, np.int32)
    launch(backend, counts, (1,), x, lock, h, hm, out, 64, 8)
    np.testing.assert_array_equal(h, np.bincount(x, minlength=12)[:8])
    np.testing.assert_array_equal(hm, np.bincount(x[x % 2 == 0], minlength=12)[:8])
    assert out[0] == lock[0] * 10 + 1 + lock[1]
