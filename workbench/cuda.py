"""Device arrays for users with neither PyTorch nor CuPy: allocate, copy, launch, copy back.

    import workbench.cuda as wcuda
    x = wcuda.to_device(np_array)          # host -> device (a DeviceArray)
    out = wcuda.empty(x.shape, x.dtype)     # uninitialised device memory
    kernel[grid](x, ..., out, ...)          # any @jit kernel takes them (CUDA backend)
    result = out.to_numpy()                 # device -> host (waits for the copy)

A :class:`DeviceArray` is C-contiguous device memory on CUDA device 0 with
``__cuda_array_interface__`` (version 3), so CuPy, Numba or PyTorch can also wrap it without a
copy. Memory is freed when the array is garbage collected (or by ``free()``). Everything here
needs NVIDIA's ``cuda-bindings`` (``pip install 'tile-workbench[cuda]'``) and a GPU; without
them the functions raise :class:`workbench.ToolMissingError` saying which is missing, and
:func:`is_available` returns False.
"""
from __future__ import annotations

import numpy as np

from .backends.cuda_driver import DeviceArray, check, driver_status, open_device, synchronize

__all__ = ["DeviceArray", "device_name", "empty", "is_available", "synchronize", "to_device",
           "zeros"]


def is_available() -> bool:
    """True when kernels can be launched on a GPU here (cuda-bindings installed, a device
    answers)."""
    return driver_status() is None


def device_name() -> str:
    """The name of CUDA device 0 (e.g. "NVIDIA H200"). Raises ToolMissingError without one."""
    return open_device().name


def to_device(a) -> DeviceArray:
    """Copy a host array (anything ``numpy.asarray`` takes) to a new C-contiguous device array
    of the same shape and dtype. Raises ToolMissingError without a GPU."""
    return DeviceArray.from_numpy(np.ascontiguousarray(np.asarray(a)))


def empty(shape, dtype=np.float32) -> DeviceArray:
    """Uninitialised device memory of ``shape`` (int or tuple) and ``dtype`` (numpy dtype)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return DeviceArray.empty(shape, dtype)


def zeros(shape, dtype=np.float32) -> DeviceArray:
    """Device memory of ``shape`` and ``dtype`` set to zero bytes (cuMemsetD8)."""
    out = empty(shape, dtype)
    if out.nbytes:
        drv = out._dev.driver
        check(drv.cuMemsetD8(out.ptr, 0, out.nbytes), "cuMemsetD8")
    return out
