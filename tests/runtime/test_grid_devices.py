"""Grids, device arrays (CUDA array interface, torch-like, DLPack) and target selection."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.registry import get_backend
from workbench.errors import LaunchError, TargetError
from workbench.runtime.binding import bind_arguments, kernel_params, specialize
from workbench.runtime.grid import normalize_grid


@pytest.mark.parametrize("grid, want", [
    (5, (5, 1, 1)), ((3,), (3, 1, 1)), ((2, 4), (2, 4, 1)), ([2, 3, 4], (2, 3, 4)),
    ((0,), (0, 1, 1)), ((np.int64(7), np.int32(2)), (7, 2, 1)),
])
def test_grid_forms(grid, want):
    assert normalize_grid(grid) == want


def test_grid_callable_gets_bound_arguments_and_options():
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (wb.cdiv(meta["n"], meta["BLOCK"]),)
    assert normalize_grid(grid, {"n": 1000, "BLOCK": 128, "num_warps": 4}) == (8, 1, 1)
    assert seen == {"n": 1000, "BLOCK": 128, "num_warps": 4}


@pytest.mark.parametrize("grid, text", [
    ((), "1 to 3 dimensions"), ((1, 2, 3, 4), "1 to 3 dimensions"), ((2.0,), "must be ints"),
    ((-1,), ">= 0"), ("8", "must be an int"), (True, "must be an int"), ((True,), "must be ints"),
])
def test_bad_grids(grid, text):
    with pytest.raises(LaunchError, match=text):
        normalize_grid(grid)


def test_grid_callable_missing_key_is_clear():
    with pytest.raises(LaunchError, match="'BLOCK_SIZE'.*not a parameter"):
        normalize_grid(lambda m: (m["BLOCK_SIZE"],), {"BLOCK": 4})


class FakeCudaArray:
    """Anything with __cuda_array_interface__ (CuPy, Numba...): no GPU memory is touched."""

    def __init__(self, ptr, shape, typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape,
                                         "typestr": typestr, "strides": strides, "version": 3}


class FakeTorchDevice:
    index = 0


class FakeTorchTensor:
    """Duck-typed like a torch CUDA tensor (data_ptr, is_cuda, dtype, stride...)."""
    __module__ = "torch.fake"

    def __init__(self, ptr, shape, stride):
        self._ptr, self.shape, self._stride = ptr, shape, stride
        self.is_cuda, self.dtype, self.device = True, "torch.float16", FakeTorchDevice()

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._stride

    def element_size(self):
        return 2


def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    pass


def bound(*args, **kw):
    ps = kernel_params(copy_kernel)
    return specialize(copy_kernel, ps, bind_arguments(copy_kernel, ps, args, kw))


def test_cuda_array_interface_goes_to_cuda():
    a = FakeCudaArray(0x7000_0000, (4, 8))
    b = FakeCudaArray(0x7000_1008, (4, 8), strides=(64, 8), typestr="<f8")
    r = bound(a, b, 32, BLOCK=16)
    assert r.device.startswith("cuda:")
    assert [s.type for s in r.spec.args[:2]] == ["*fp32", "*fp64"]
    assert [s.divisible_by_16 for s in r.spec.args[:2]] == [True, False]
    pa, pb = r.runtime_args[:2]
    assert (pa.address, pa.lo, pa.hi, pa.itemsize) == (0x7000_0000, 0x7000_0000,
                                                       0x7000_0000 + 128, 4)
    assert (pb.lo, pb.hi) == (0x7000_1008, 0x7000_1008 + 3 * 64 + 7 * 8 + 8)


def test_torch_like_tensor_goes_to_cuda():
    t = FakeTorchTensor(0x5000_0010, (3, 5), (10, 1))
    r = bound(t, t, 7, BLOCK=16)
    assert r.device.startswith("cuda:") and r.spec.args[0].type == "*fp16"
    assert (r.runtime_args[0].lo, r.runtime_args[0].hi) == (0x5000_0010, 0x5000_0010 + 2 * 24 + 2)


def test_arrays_on_another_gpu_than_device_0_are_refused():
    a, b = FakeTorchTensor(0x5000_0010, (3, 5), (10, 1)), FakeTorchTensor(0x5000_0100, (3, 5),
                                                                          (10, 1))
    a.device = b.device = type("D", (), {"index": 1})()
    with pytest.raises(LaunchError, match="'src' is on CUDA device 1; kernels launch on CUDA "
                                          "device 0 only"):
        bound(a, b, 15, BLOCK=16)


def test_mixed_host_and_device_arrays_are_refused():
    with pytest.raises(LaunchError) as ei:
        bound(np.zeros(8, np.float32), FakeCudaArray(0x7000_0000, (8,)), 8, BLOCK=8)
    msg = str(ei.value)
    assert "different devices" in msg and "'src' on the host" in msg and "'dst'" in msg


def test_host_dlpack_and_array_interface_objects_are_host_pointers():
    class Wrapped:
        def __init__(self, a):
            self.__array_interface__ = a.__array_interface__
            self._keep = a
    a = np.arange(8, dtype=np.int32)
    r = bound(Wrapped(a), a, 8, BLOCK=8)
    assert r.device == "cpu" and r.spec.args[0].type == "*i32"
    assert r.runtime_args[0].address == a.ctypes.data


def test_no_arrays_means_no_device():
    assert bound(None, None, 8, BLOCK=8).device is None


def test_registry_unknown_target_lists_valid_ones():
    with pytest.raises(TargetError) as ei:
        get_backend("tpu")
    assert "cpu" in str(ei.value) and "cuda:90" in str(ei.value)
