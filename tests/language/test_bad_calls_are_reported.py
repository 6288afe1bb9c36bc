"""Calls of triton.language names that a probe of every public name (tools/probe_language.py)
found crashing inside the package, accepted where Triton 3.6 refuses them, or refused where
Triton accepts them. Each wrong call now raises a CompilationError that points at its own
line, with Triton's words where Triton has them, on every target; each valid neighbour runs
and gives numpy's values."""
import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError

THIS_FILE = __file__
HOST_TARGETS = ["interpreter", "cpu"]
ALL_TARGETS = HOST_TARGETS + ["cuda:90", "cuda:80"]


@wb.jit
def wrong_call(x_ptr, i_ptr, out_ptr, iout_ptr, CASE: tl.constexpr):
    r = tl.arange(0, 16)
    x = tl.load(x_ptr + r)
    xi = tl.load(i_ptr + r)
    X = tl.load(x_ptr + r[:, None] * 16 + r[None, :])
    if CASE == "clamp_int":
        tl.store(iout_ptr + r, tl.clamp(xi, 0, 5))  # case clamp_int
    if CASE == "histogram_bins":
        tl.store(iout_ptr, tl.sum(tl.histogram(xi, 6), 0))  # case histogram_bins
    if CASE == "padding_one":
        bp = tl.make_block_ptr(x_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0))
        tl.store(out_ptr + r, tl.sum(tl.load(bp, padding_option="one"), 0))  # case padding_one
    if CASE == "full_nan_int":
        tl.store(iout_ptr + r, tl.full((16,), float("nan"), tl.int32))  # case full_nan_int
    if CASE == "other_nan_int":
        v = tl.load(i_ptr + r, mask=r < 8, other=float("nan"))  # case other_nan_int
        tl.store(iout_ptr + r, v)
    if CASE == "cache_modifier_int":
        tl.store(out_ptr + r, tl.load(x_ptr + r, cache_modifier=3))  # case cache_modifier_int
    if CASE == "atomic_int_mask":
        tl.atomic_add(out_ptr + r, x, mask=xi)  # case atomic_int_mask
    if CASE == "scan_shapes":
        tl.store(out_ptr + r, tl.associative_scan((x, X), 0, _pair_add)[0])  # case scan_shapes
    if CASE == "propagate_nan_int":
        tl.store(out_ptr + r, tl.maximum(x, x, propagate_nan=3))  # case propagate_nan_int
    if CASE == "fma_int":
        tl.store(iout_ptr + r, tl.fma(xi, xi, xi))  # case fma_int
    if CASE == "arange_negative":
        tl.store(iout_ptr + r, tl.arange(-16, 0))  # case arange_negative
    if CASE == "block_store_shape":
        bp = tl.make_block_ptr(out_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0))
        tl.store(bp, x)  # case block_store_shape
    if CASE == "dot_int_acc":
        tl.store(out_ptr + r, tl.sum(tl.dot(X, X, acc=X.to(tl.int32)), 0))  # case dot_int_acc
    if CASE == "math_no_arg":
        tl.store(out_ptr + r, tl.ceil())  # case math_no_arg


@wb.jit
def _pair_add(a0, a1, b0, b1):
    return a0 + b0, a1 + b1


#: case -> the words the error must contain (Triton's own where it has them)
WRONG = {
    "clamp_int": "Unexpected dtype int32. Only floating point clamp is supported",
    "histogram_bins": "num_bins must be a compile-time power of 2, got 6",
    "padding_one": "padding option 'one' is not supported",
    "full_nan_int": "nan cannot be represented as int32",
    "other_nan_int": "nan cannot be represented as int32",
    "cache_modifier_int": "cache_modifier must be a compile-time string, got 3",
    "atomic_int_mask": "mask must have boolean scalar type, got int32",
    "scan_shapes": "all tiles of a multi-operand scan must have one shape",
    "propagate_nan_int": "Unexpected propagate_nan 3",
    "fma_int": "fma only supports floating point operands, got int32",
    "arange_negative": "arange must fit in int32",
    "block_store_shape": "Block shape([16, 16]) and value shape([16]) mismatch",
    "dot_int_acc": "tl.dot accumulator of type int32 cannot hold the product of fp32 tiles",
    "math_no_arg": "ceil() missing 1 required positional argument",
}


def _line_of(marker: str) -> int:
    return next(i for i, t in enumerate(open(THIS_FILE), 1) if t.rstrip().endswith(marker))


def _arrays(rng):
    x = rng.standard_normal(256).astype(np.float32)
    xi = rng.integers(0, 100, 256).astype(np.int32)
    return x, xi, np.zeros(256, np.float32), np.zeros(256, np.int32)


@pytest.mark.parametrize("target", ALL_TARGETS)
@pytest.mark.parametrize("case", sorted(WRONG))
def test_wrong_call_is_reported_at_its_line(case, target, rng):
    with pytest.raises(CompilationError, match=re.escape(WRONG[case])) as info:
        wb.compile(wrong_call, *_arrays(rng), target=target, CASE=case)
    text = str(info.value)
    assert f"{THIS_FILE}:{_line_of(f'# case {case}')}:" in text, text
    assert "<locals>" not in text and "Traceback" not in text, text


@wb.jit
def tensor_methods(x_ptr, i_ptr, out_ptr, iout_ptr, CASE: tl.constexpr):
    r = tl.arange(0, 16)
    x = tl.load(x_ptr + r)
    XI = tl.load(i_ptr + r[:, None] * 16 + r[None, :])
    if CASE == "softmax":
        tl.store(out_ptr + r, x.softmax())
    if CASE == "sqrt_rn":
        tl.store(out_ptr + r, tl.abs(x).sqrt_rn())
    if CASE == "reduce_or":
        tl.store(iout_ptr + r, XI.reduce_or(1))
    if CASE == "store":
        (out_ptr + r).store(x * 3)
    if CASE == "atomic_add":
        (iout_ptr + r).atomic_add(XI.reduce_or(0))
    if CASE == "atomic_max":
        (iout_ptr + r).atomic_max(XI.reduce_or(0), mask=r < 8)


def _method_want(case, x, xi):
    v = x[:16].astype(np.float64)
    m = xi.reshape(16, 16)
    if case == "softmax":
        e = np.exp(v - v.max())
        return "f", e / e.sum()
    if case == "sqrt_rn":
        return "f", np.sqrt(np.abs(v))
    if case == "reduce_or":
        return "i", np.bitwise_or.reduce(m, axis=1)
    if case == "store":
        return "f", v * 3
    col = np.bitwise_or.reduce(m, axis=0)
    if case == "atomic_add":
        return "i", col
    return "i", np.where(np.arange(16) < 8, np.maximum(col, 0), 0)


@pytest.mark.parametrize("target", HOST_TARGETS)
@pytest.mark.parametrize("case", ["softmax", "sqrt_rn", "reduce_or", "store", "atomic_add",
                                  "atomic_max"])
def test_triton_tensor_methods_run(case, target, rng):
    x, xi, out, iout = _arrays(rng)
    wb.compile(tensor_methods, x, xi, out, iout, target=target, CASE=case)[(1,)](
        x, xi, out, iout, CASE=case)
    kind, want = _method_want(case, x, xi)
    if kind == "f":
        np.testing.assert_allclose(out[:16], want, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(iout[:16], want)


@wb.jit
def valid_neighbours(x_ptr, out_ptr, CASE: tl.constexpr):
    r = tl.arange(0, 16)
    x = tl.load(x_ptr + r)
    if CASE == "block_store_scalar":
        bp = tl.make_block_ptr(out_ptr, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0))
        tl.store(bp, 2.5)
    if CASE == "histogram_pow2":
        tl.store(out_ptr + tl.arange(0, 8), tl.histogram((x * 0).to(tl.int32) + 3, 8))
    if CASE == "maximum_none":
        tl.store(out_ptr + r, tl.maximum(x, -x, propagate_nan=tl.PropagateNan.NONE))


@pytest.mark.parametrize("target", HOST_TARGETS)
def test_valid_neighbours_still_run(target, rng):
    x = rng.standard_normal(256).astype(np.float32)
    out = np.zeros(256, np.float32)
    for case in ("block_store_scalar", "histogram_pow2", "maximum_none"):
        out[:] = 0
        wb.compile(valid_neighbours, x, out, target=target, CASE=case)[(1,)](x, out, CASE=case)
        if case == "block_store_scalar":
            np.testing.assert_array_equal(out, np.full(256, 2.5, np.float32))
        elif case == "histogram_pow2":
            np.testing.assert_array_equal(out[:8], np.eye(8)[3] * 16)
        else:
            np.testing.assert_array_equal(out[:16], np.abs(x[:16]))


@wb.jit
def cached_load(x_ptr, out_ptr, EVICT: tl.constexpr):
    r = tl.arange(0, 16)
    tl.store(out_ptr + r, tl.load(x_ptr + r, eviction_policy=EVICT) * 2)


@pytest.mark.parametrize("evict", ["evict_first", "evict_last"])
def test_eviction_policy_compiles_for_sm80(evict):
    """An eviction policy needs createpolicy (PTX ISA 7.4); sm_80 kernels without one keep
    PTX ISA 7.0, and ptxas accepts both."""
    x = np.zeros(16, np.float32)
    with_policy = wb.compile(cached_load, x, x, target="cuda:80", EVICT=evict).asm["ptx"]
    plain = wb.compile(cached_load, x, x, target="cuda:80", EVICT="").asm["ptx"]
    assert ".version 7.4" in with_policy and f"L2::{evict}" in with_policy
    assert ".version 7.0" in plain and "createpolicy" not in plain
