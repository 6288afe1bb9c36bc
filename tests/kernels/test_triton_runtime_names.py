"""Triton's runtime names that scripts and Triton's tests use: ``reinterpret`` /
``TensorWrapper`` (an array seen as another element type), ``runtime.driver.active`` and
``runtime.errors.InterpreterError``."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError, LaunchError
from workbench.runtime import driver
from workbench.runtime.errors import InterpreterError


@wb.jit
def shift_right(x_ptr, out_ptr, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) >> SHIFT, mask=mask)


def test_reinterpret_signed_bits_as_unsigned(backend):
    rng = np.random.default_rng()
    n = 300
    a = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    out = np.full(n, 7, dtype=np.int32)
    # as uint32 the shift is logical: the sign bit moves down instead of spreading
    shift_right[(3,)](wb.reinterpret(a, tl.uint32), wb.reinterpret(out, tl.uint32), n,
                      SHIFT=28, BLOCK=128)
    np.testing.assert_array_equal(out.view(np.uint32), a.view(np.uint32) >> 28)
    plain = np.full(n, 7, dtype=np.int32)
    shift_right[(3,)](a, plain, n, SHIFT=28, BLOCK=128)
    np.testing.assert_array_equal(plain, a >> 28)


def test_tensor_wrapper_keeps_the_base():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    w = wb.reinterpret(a, tl.uint16)
    assert isinstance(w, wb.TensorWrapper)
    assert w.base is a and w.dtype == tl.uint16 and w.shape == (2, 3)


def test_reinterpret_refuses_another_element_size():
    with pytest.raises(LaunchError, match="same size"):
        wb.reinterpret(np.zeros(4, dtype=np.int32), tl.uint16)


def test_driver_reports_the_host_without_a_gpu(monkeypatch):
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    target = driver.active.get_current_target()
    assert (target.backend, target.arch, target.warp_size) == ("cpu", 0, 1)
    props = driver.active.utils.get_device_properties(0)
    assert props["multiprocessor_count"] >= 1 and props["warpSize"] == 1


@wb.jit
def uses_unknown_name(out_ptr):
    tl.store(out_ptr, not_defined_anywhere)  # noqa: F821


def test_interpreter_error_is_what_the_interpreter_raises(monkeypatch):
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    assert InterpreterError is CompilationError
    with pytest.raises(InterpreterError, match="not_defined_anywhere"):
        uses_unknown_name[(1,)](np.zeros(1, dtype=np.float32))


@wb.jit
def convert_to_dst(src, dst, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(dst + i, tl.load(src + i).to(dst.dtype.element_ty))


def test_reinterpret_with_torch_dtypes(backend):
    # Triton's test_conversions passes torch dtypes to reinterpret
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    x = rng.standard_normal(64).astype(np.float32) * 300
    src = torch.from_numpy(x)
    dst = torch.empty(64, dtype=torch.float16)
    convert_to_dst[(1,)](wb.reinterpret(src, torch.float32),
                         wb.reinterpret(dst, torch.float16), BLOCK=64)
    np.testing.assert_array_equal(dst.numpy(), x.astype(np.float16))
