"""``tl.add``/``sub``/``mul`` as functions, ``tl.reduce_or``, ``tl.softmax``, ``tl.str_to_ty``
and ``tl.TRITON_MAX_TENSOR_NUMEL``, against numpy with fresh random inputs on both host
backends, and ``reduce_or``'s ttir (a ``tt.reduce`` of ``arith.ori``, as Triton's)."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def arith_fns(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.add(tl.mul(x, y), tl.sub(x, 3)))
    tl.store(out_ptr + BLOCK + offs, tl.load(tl.add(x_ptr, offs)))


@wb.jit
def row_or(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(out_ptr + tl.arange(0, M), tl.reduce_or(x, 1))


@wb.jit
def row_softmax(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.softmax(x, 1, keep_dims=True))


@wb.jit
def float_or(x_ptr, out_ptr, N: tl.constexpr):
    tl.store(out_ptr, tl.reduce_or(tl.load(x_ptr + tl.arange(0, N)), 0))


@pytest.mark.parametrize("tgt", ["interpreter", "cpu"])
def test_add_sub_mul_as_functions(rng, tgt):
    x = rng.integers(-1000, 1000, 64).astype(np.int32)
    y = rng.integers(-1000, 1000, 64).astype(np.int32)
    out = np.zeros(128, np.int32)
    wb.compile(arith_fns, x, y, out, target=tgt, BLOCK=64)[(1,)](x, y, out)
    np.testing.assert_array_equal(out[:64], x * y + (x - 3))
    np.testing.assert_array_equal(out[64:], x)


@pytest.mark.parametrize("tgt", ["interpreter", "cpu"])
def test_reduce_or_and_softmax(rng, tgt):
    x = rng.integers(0, 2**31 - 1, (8, 16)).astype(np.int32) >> rng.integers(20, 31, (8, 16))
    out = np.zeros(8, np.int32)
    wb.compile(row_or, x, out, target=tgt, M=8, N=16)[(1,)](x, out)
    np.testing.assert_array_equal(out, np.bitwise_or.reduce(x, axis=1))
    f = rng.standard_normal((8, 16)).astype(np.float32) * 4
    got = np.zeros_like(f)
    wb.compile(row_softmax, f, got, target=tgt, M=8, N=16)[(1,)](f, got)
    e = np.exp(f - f.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_reduce_or_ttir_and_its_check():
    k = wb.compile(row_or, "*i32", "*i32", target="cuda:90", M=8, N=16)
    ttir = k.asm["ttir"]
    assert "tt.reduce" in ttir and "arith.ori" in ttir
    with pytest.raises(CompilationError, match="reduce_or only supported for integers"):
        wb.compile(float_or, "*fp32", "*fp32", target="interpreter", N=16)


def test_str_to_ty_and_the_numel_limit():
    assert tl.str_to_ty("fp32") == tl.float32
    assert tl.str_to_ty("*i8") == tl.pointer_type(tl.int8)
    assert tl.TRITON_MAX_TENSOR_NUMEL == 1 << 20
    with pytest.raises(ValueError, match="unknown type"):
        tl.str_to_ty("fp31")
