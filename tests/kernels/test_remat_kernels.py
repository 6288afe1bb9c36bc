"""Kernels whose ttgir Triton's backward rematerialisation shapes (a 1-D bias, scale or row of
indices loaded directly in a slice of the 2-D tile's layout; a row maximum sent to float
atomics chosen by the sign bit; tiles whose strides are all run-time values) run on the
interpreter and the CPU against numpy with fresh random inputs; their cuda:80/90 ttgir has the
layouts Triton gives them (no conversion left, the 1-D load in ``#ttg.slice``)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fidelity"))
from fidelity_kernels import (  # noqa: E402
    atomic_max_rows_k,
    bias_cols_k,
    bias_strided_k,
    copy_strided_k,
    gather_rows_k,
    layernorm_k,
    scale_rows_k,
    trans_dot_k,
)

BM, BN = 32, 64


def test_broadcast_operands(backend):
    rng = np.random.default_rng()
    M = 2 * BM
    x = rng.standard_normal((M, BN)).astype(np.float32)
    b = rng.standard_normal(BN).astype(np.float32)
    s = rng.standard_normal(M).astype(np.float32)
    out = np.full((M, BN), np.nan, np.float32)
    bias_cols_k[(2,)](x, b, out, BN, BM=BM, BN=BN)
    np.testing.assert_array_equal(out, x + b[None, :])
    out[:] = np.nan
    scale_rows_k[(2,)](x, s, out, BN, BM=BM, BN=BN)
    np.testing.assert_array_equal(out, x * s[:, None])
    out[:] = np.nan
    layernorm_k[(2,)](x, b, out, BN, BM=BM, BN=BN)
    d = x - x.mean(1, keepdims=True)
    want = d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5) * b[None, :]
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
    idx = rng.permutation(M).astype(np.int32)
    out[:] = np.nan
    gather_rows_k[(2,)](x, idx, out, BN, BM=BM, BN=BN)
    np.testing.assert_array_equal(out, x[idx])


def test_run_time_strides(backend):
    rng = np.random.default_rng()
    M = 2 * BM
    big = rng.standard_normal((BN, 3 * M)).astype(np.float32)
    x = big[:, ::3].T  # (M, BN) view: element strides (3, 3 * M)
    out = np.full((M, 2 * BN), np.nan, np.float32)
    copy_strided_k[(2,)](big, out, 3, 3 * M, 2 * BN, 2, BM=BM, BN=BN)
    np.testing.assert_array_equal(out[:, ::2], 2 * x)
    assert np.isnan(out[:, 1::2]).all()
    b = rng.standard_normal(2 * BN).astype(np.float32)
    res = np.full((M, BN), np.nan, np.float32)
    bias_strided_k[(2,)](big, b, res, 3, 3 * M, 2, BM=BM, BN=BN)
    np.testing.assert_array_equal(res, x + b[::2][None, :])


def _float_atomic_reference(old: np.ndarray, val: np.ndarray, kind: str) -> np.ndarray:
    """Triton's float atomic max/min on the bit patterns: a value with a clear sign bit goes
    through the signed-int max (min), one with the sign bit set through the unsigned min
    (max)."""
    o_s, v_s = old.view(np.int32), val.view(np.int32)
    o_u, v_u = old.view(np.uint32), val.view(np.uint32)
    neg = (v_u >> 31) != 0
    if kind == "max":
        pos_res, neg_res = np.maximum(o_s, v_s), np.minimum(o_u, v_u).view(np.int32)
    else:
        pos_res, neg_res = np.minimum(o_s, v_s), np.maximum(o_u, v_u).view(np.int32)
    return np.where(neg, neg_res, pos_res).view(np.float32)


@wb.jit
def _float_atomics(v_ptr, mx_ptr, mn_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(v_ptr + offs)
    tl.atomic_max(mx_ptr + offs, v)
    tl.atomic_min(mn_ptr + offs, v)


def test_float_atomics_choose_by_sign_bit(backend):
    rng = np.random.default_rng()
    special = np.array([np.nan, -0.0, -0.0, 0.0, -np.nan, 3.0, -3.0, np.inf], np.float32)
    old_sp = np.array([1.0, -1.0, 0.0, -0.0, -2.0, -5.0, 2.0, -np.inf], np.float32)
    n = 64
    val = np.concatenate([special, rng.standard_normal(n - 8).astype(np.float32)])
    old = np.concatenate([old_sp, rng.standard_normal(n - 8).astype(np.float32)])
    mx, mn = old.copy(), old.copy()
    _float_atomics[(1,)](val, mx, mn, BLOCK=n)
    for got, kind in ((mx, "max"), (mn, "min")):
        want = _float_atomic_reference(old, val, kind)
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32), err_msg=kind)
    # the sign-bit rule: +NaN wins a max (signed path), -0.0 beats -1.0 and loses to +0.0
    assert np.isnan(mx[0]) and mx[1] == 0.0 and np.signbit(mx[1]) and not np.signbit(mx[2])
    rows = rng.standard_normal((2 * BM, BN)).astype(np.float32)
    out = rng.standard_normal(2 * BM).astype(np.float32)
    want = np.maximum(out, rows.max(1))
    atomic_max_rows_k[(2,)](rows, out, BN, BM=BM, BN=BN)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("target,warps", [("cuda:80", 4), ("cuda:90", 8)])
def test_broadcast_operand_loaded_in_a_slice_layout(target, warps):
    F32 = "*fp32:16"
    for kernel, sig, one_d in ((bias_cols_k, (F32, F32, F32, "i32:16"), "%b"),
                               (scale_rows_k, (F32, F32, F32, "i32:16"), "%s"),
                               (gather_rows_k, (F32, "*i32:16", F32, "i32:16"), "%rows")):
        ttgir = wb.compile(kernel, *sig, target=target, num_warps=warps,
                           BM=BM, BN=BN).asm["ttgir"]
        assert "ttg.convert_layout" not in ttgir, kernel
        loads = [ln for ln in ttgir.splitlines() if "= tt.load" in ln and
                 ln.strip().startswith(one_d)]
        assert loads and all("#ttg.slice<{dim = " in ln for ln in loads), (kernel, loads)
        assert ttgir.count("#blocked") and "#blocked1 =" not in ttgir, kernel


def test_trans_of_a_dot_result(backend):
    rng = np.random.default_rng()
    a = rng.standard_normal((64, 32)).astype(np.float16)
    b = rng.standard_normal((32, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, np.float32)
    trans_dot_k[(1,)](a, b, c, BM=64, BK=32)
    want = (a.astype(np.float32) @ b.astype(np.float32)).T
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)


def test_trans_keeps_the_dot_layout_transposed():
    # tl.trans of an #mma value: the result is #mma's linear layout with dims swapped, so the
    # trans moves nothing and one conversion (to the store's layout) remains
    ttgir = wb.compile(trans_dot_k, "*fp16:16", "*fp16:16", "*fp32:16", target="cuda:80",
                       num_warps=4, BM=64, BK=32).asm["ttgir"]
    trans = [ln for ln in ttgir.splitlines() if "tt.trans" in ln]
    assert len(trans) == 1 and "tensor<64x64xf32, #mma> -> tensor<64x64xf32, #linear>" in trans[0]
    assert ttgir.count("ttg.convert_layout") == 1
