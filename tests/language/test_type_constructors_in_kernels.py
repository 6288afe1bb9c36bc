"""Type constructors called inside a kernel (``tl.pointer_type(tl.int32)``,
``tl.dtype("fp32")``) are compile-time values, as in Triton: ``ptr.to(tl.pointer_type(...))``
reinterprets a pointer, ``x.to(tl.dtype(...))`` casts."""
import numpy as np

import workbench as wb
import workbench.language as tl


@wb.jit
def float_bits(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    as_ints = x_ptr.to(tl.pointer_type(tl.int32))
    tl.store(out_ptr + offs, tl.load(as_ints + offs))


@wb.jit
def cast_by_name(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs).to(tl.dtype("fp16")).to(tl.float32))


def test_pointer_type_called_in_a_kernel(backend):
    x = np.random.default_rng().standard_normal(32).astype(np.float32)
    out = np.zeros(32, dtype=np.int32)
    float_bits[(1,)](x, out, BLOCK=32)
    np.testing.assert_array_equal(out, x.view(np.int32))


def test_dtype_by_triton_name_in_a_kernel(backend):
    x = np.random.default_rng().standard_normal(32).astype(np.float32) * 1000
    out = np.zeros(32, dtype=np.float32)
    cast_by_name[(1,)](x, out, BLOCK=32)
    np.testing.assert_array_equal(out, x.astype(np.float16).astype(np.float32))
