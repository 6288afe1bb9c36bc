"""cumsum and cumprod of a bf16 tile run in fp32 (Triton 3.6 promotes bf16 first), so partial
sums that bf16 cannot hold stay exact. Found by the differential fuzzer (a bf16 cumsum of
integers gave -272 where -273 was right)."""
import numpy as np
from lang_helpers import launch

import workbench as wb
import workbench.language as tl


@wb.jit
def bf16_scans(x_ptr, sum_ptr, prod_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=1).to(tl.bfloat16)
    tl.store(sum_ptr + offs, tl.cumsum(v, axis=0), mask=offs < n)
    tl.store(prod_ptr + offs, tl.cumprod(v, axis=0), mask=offs < n)


def test_bf16_cumsum_and_cumprod_accumulate_in_fp32(backend, rng):
    n = 50
    x = rng.integers(-40, 41, n).astype(np.int32)
    x[:8] = [33, 35, 37, 39, 41, 43, 45, 47]  # exact in bf16, their partial sums are not
    s = np.full(n, -1.0, np.float32)
    p = np.full(n, -1.0, np.float32)
    launch(backend, bf16_scans, (1,), x, s, p, n, BLOCK=64)
    np.testing.assert_array_equal(s, np.cumsum(x.astype(np.float64)).astype(np.float32))
    assert s[6] == 273.0  # 273 needs 9 significant bits; bf16 (8) would round it to 272
    np.testing.assert_array_equal(p[:2], [33.0, 1155.0])  # 1155 is not a bf16 value either


def test_bf16_cumsum_is_fp32_in_ttir():
    text = wb.compile(bf16_scans, "*i32", "*fp32", "*fp32", "i32", target="cpu",
                      BLOCK=64).asm["ttir"]
    returns = [line for line in text.splitlines() if "tt.scan.return" in line]
    assert len(returns) == 2 and all(": f32" in line for line in returns), returns
