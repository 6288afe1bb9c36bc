"""CPU backend: the inline, vectorisable fp32 exp/exp2/log/log2 (workbench.codegen.cpu.vmath)
against float64 numpy, over random bit patterns (every binade, subnormals, inf, NaN) and dense
ranges; the bounds asserted here are the ones the module documents."""
from __future__ import annotations

import numpy as np

import workbench as wb
import workbench.language as tl

rng = np.random.default_rng()

#: documented maximum error in ulp (of the float32 result) per function
BOUNDS = {"exp": 2.0, "exp2": 2.0, "log": 2.0, "log2": 3.0}


@wb.jit
def _math4(x_ptr, o_exp, o_exp2, o_log, o_log2, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(o_exp + offs, tl.exp(x), mask=m)
    tl.store(o_exp2 + offs, tl.exp2(x), mask=m)
    tl.store(o_log + offs, tl.log(x), mask=m)
    tl.store(o_log2 + offs, tl.log2(x), mask=m)


def _inputs() -> np.ndarray:
    bits = rng.integers(0, 2 ** 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    special = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5,
                          1e-45, 1.1754942e-38, 1.1754944e-38, 3.4028235e38, 88.72283,
                          88.722839, 88.7229, -87.33654, -103.27893, -103.97208, -104.0,
                          127.99999, 128.0, -126.0, -149.0, -150.0, -151.0, 0.70710677,
                          1.4142135, 1.0000001, 0.99999994])
    return np.concatenate([bits.view(np.float32), special,
                           rng.uniform(-110, 90, 1 << 18).astype(np.float32),
                           rng.uniform(-160, 130, 1 << 16).astype(np.float32),
                           np.exp(rng.uniform(-100, 88, 1 << 17)).astype(np.float32)])


def ulp_errors(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in units of the float32 spacing at ref (0 where both are the same
    infinity or both NaN; inf where only one is NaN or infinite)."""
    with np.errstate(all="ignore"):
        ref32 = ref.astype(np.float32)
        same = (got == ref32) | (np.isnan(got) & np.isnan(ref))
        spacing = np.spacing(np.abs(ref32)).astype(np.float64)
        err = np.abs(got.astype(np.float64) - ref) / spacing
    err = np.where(same, 0.0, err)
    return np.where(np.isnan(err), np.inf, err)


def test_fp32_exp_exp2_log_log2_within_documented_ulp():
    x = _inputs()
    n = x.size
    outs = [np.full(n, 7.0, np.float32) for _ in range(4)]
    _math4[(wb.cdiv(n, 1024),)](x, *outs, n, BLOCK=1024)
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        refs = {"exp": np.exp(x64), "exp2": np.exp2(x64), "log": np.log(x64),
                "log2": np.log2(x64)}
    for (name, ref), got in zip(refs.items(), outs, strict=True):
        err = ulp_errors(got, ref)
        worst = int(np.argmax(err))
        assert err[worst] <= BOUNDS[name], (name, x[worst], got[worst], ref[worst], err[worst])


def test_special_values_follow_c99_annex_f():
    x = np.float32([np.inf, -np.inf, np.nan, 0.0, -0.0, -1.0, 1e-45, 100.0, -200.0, 1.0])
    outs = [np.zeros_like(x) for _ in range(4)]
    _math4[(1,)](x, *outs, x.size, BLOCK=16)
    e, e2, lg, lg2 = outs
    np.testing.assert_array_equal(e[[0, 1, 3, 4, 7, 8, 9]],
                                  np.float32([np.inf, 0, 1, 1, np.inf, 0, np.e]))
    assert np.isnan(e[2]) and np.isnan(e2[2]) and np.isnan(lg[2]) and np.isnan(lg2[2])
    np.testing.assert_array_equal(e2[[0, 1, 3, 7, 8, 9]],
                                  np.float32([np.inf, 0, 1, 2.0 ** 100, 0, 2]))
    np.testing.assert_array_equal(lg[[0, 3, 4, 9]], np.float32([np.inf, -np.inf, -np.inf, 0]))
    assert np.isnan(lg[1]) and np.isnan(lg[5]) and np.isnan(lg2[5])
    assert lg2[6] == -149.0  # smallest subnormal: exact power of two
    assert lg[6] == np.float32(-149 * np.log(2.0))


def test_math_loop_is_vectorised_without_libm_calls():
    x = np.ones(1024, np.float32)
    k = wb.compile(_math4, x, x, x, x, x, 1024, target="cpu", BLOCK=1024)
    asm = k.asm["asm"]
    assert "expf" not in asm and "logf" not in asm and "exp2f" not in asm
    assert "vfmadd" in asm and ("ps\t%ymm" in asm or "ps\t%zmm" in asm)
