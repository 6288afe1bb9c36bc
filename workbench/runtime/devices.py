"""Arrays passed to a launch: where they live, their first element's address and the memory
span they cover.

Host arrays are numpy arrays (views included: the pointer is the address of the view's first
element, and a strided view is passed without a copy), plus anything numpy wraps without a copy
(``__array_interface__``, host DLPack, CPU torch tensors). Device arrays are objects with
``__cuda_array_interface__`` (CuPy, Numba, PyTorch), torch tensors (``data_ptr()`` and
``is_cuda``) and DLPack capsules on a CUDA device. bfloat16 host arrays come from
``ml_dtypes.bfloat16`` when ml_dtypes is installed (numpy has no bfloat16).
"""
from __future__ import annotations

import ctypes
import dataclasses
import sys
from dataclasses import dataclass

import numpy as np

from .specialization import NUMPY_TO_SHORT, SHORT_TO_NUMPY


class ArrayTypeError(Exception):
    """An array argument whose element type or memory a kernel cannot take (internal; the
    binder turns it into a LaunchError naming the parameter)."""


@dataclass(frozen=True)
class ArrayInfo:
    """One array argument. ``device``: "cpu" or "cuda"; ``device_index``: the CUDA ordinal (None
    on the host); ``address``: absolute address of the first element (bytes); ``lo``/``hi``: the
    byte range ``[lo, hi)`` the array covers (min..max address over all elements + itemsize,
    negative strides included; ``lo == hi`` for an empty array); ``itemsize`` in bytes;
    ``dtype``: Triton short name ("fp32", "bf16", "i1"...); ``obj``: the object (kept alive)."""

    device: str
    device_index: int | None
    address: int
    lo: int
    hi: int
    itemsize: int
    dtype: str
    obj: object


def byte_span(address: int, shape, strides_bytes, itemsize: int) -> tuple[int, int]:
    """``(lo, hi)``: the half-open byte range covered by an array whose first element is at
    ``address`` with ``shape`` and byte ``strides_bytes`` (negative strides allowed).
    An array with no elements covers nothing: ``(address, address)``."""
    if any(int(s) == 0 for s in shape):
        return address, address
    lo = hi = address
    for n, st in zip(shape, strides_bytes, strict=True):
        ext = (int(n) - 1) * int(st)
        if ext < 0:
            lo += ext
        else:
            hi += ext
    return lo, hi + itemsize


_E4M3B11 = (" (float8_e4m3b11fnuz has exponent bias 11; Triton's float8e4b15 has bias 15, so no "
             "tl dtype matches it: convert the data, or pass its bits as uint8 and decode them)")


def _short_dtype(name: str) -> str:
    short = NUMPY_TO_SHORT.get(name)
    if short is None:
        raise ArrayTypeError(
            f"arrays of dtype {name} cannot be passed to a kernel; use bool, int8..int64, "
            "uint8..uint64, float16, bfloat16, float32, float64 or the fp8 dtypes "
            "float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz"
            + (_E4M3B11 if name == "float8_e4m3b11fnuz" else ""))
    return short


# numpy dtype -> Triton short name, for the dtypes numpy has (bfloat16 and the ml_dtypes fp8
# dtypes go by name)
_NP_SHORT = {np.dtype(n): s for n, s in NUMPY_TO_SHORT.items()
             if n != "bfloat16" and not s.startswith("fp8")}


def _from_numpy(a: np.ndarray, obj=None) -> ArrayInfo:
    addr = a.ctypes.data
    if a.flags.c_contiguous:
        lo, hi = (addr, addr + a.nbytes)
    else:
        lo, hi = byte_span(addr, a.shape, a.strides, a.itemsize)
    short = _NP_SHORT.get(a.dtype) or _short_dtype(a.dtype.name)
    return ArrayInfo("cpu", None, addr, lo, hi, a.itemsize, short, a if obj is None else obj)


def _is_torch_tensor(v) -> bool:
    return type(v).__module__.startswith("torch") and hasattr(v, "data_ptr") \
        and hasattr(v, "is_cuda")


def _from_torch(t) -> ArrayInfo:
    name = str(t.dtype).replace("torch.", "")
    itemsize = int(t.element_size())
    addr = int(t.data_ptr())
    lo, hi = byte_span(addr, tuple(t.shape), [s * itemsize for s in t.stride()], itemsize)
    if t.is_cuda:
        return ArrayInfo("cuda", int(t.device.index or 0), addr, lo, hi, itemsize,
                         _short_dtype(name), t)
    return ArrayInfo("cpu", None, addr, lo, hi, itemsize, _short_dtype(name), t)


def _from_mock(v) -> ArrayInfo:
    """A :class:`~workbench.runtime.interface.MockTensor` (``warmup`` only): its dtype (a
    torch, numpy or tl dtype), address 0 and no bytes, on the GPU when one is here (and
    ``WORKBENCH_INTERPRET`` is off), as Triton compiles it for the active device."""
    d = v.dtype
    if hasattr(d, "short_name"):  # a tl dtype
        short = d.short_name
    elif type(d).__module__ == "torch":
        short = _short_dtype(str(d).replace("torch.", ""))
    else:
        short = _short_dtype(np.dtype(d).name)
    from .. import cuda
    from ..config import env_flag
    on_gpu = not env_flag("WORKBENCH_INTERPRET") and cuda.is_available()
    from ..language.dtypes import from_short_name
    itemsize = max(1, from_short_name(short).primitive_bitwidth // 8)
    return ArrayInfo("cuda" if on_gpu else "cpu", 0 if on_gpu else None, 0, 0, 0, itemsize,
                     short, v)


def is_cuda_array(v) -> bool:
    """Whether ``v`` is an array in CUDA device memory: a ``device`` whose ``type`` is
    ``"cuda"`` (torch) or a ``__cuda_array_interface__``. torch builds that interface on
    access and raises KeyError for element types it has no typestr for (the fp8 dtypes), so
    ``hasattr`` is not enough: any error while reading it counts as "no interface"."""
    if getattr(getattr(v, "device", None), "type", None) == "cuda":
        return True
    try:
        return getattr(v, "__cuda_array_interface__", None) is not None
    except Exception:  # torch: KeyError for a dtype without a typestr
        return False


def from_cuda_array_interface(v) -> ArrayInfo:
    """The :class:`ArrayInfo` of an object with ``__cuda_array_interface__`` (version 2 or 3):
    device address, byte span, element type (bfloat16 from the object's ``dtype``), device
    index from ``v.device.id`` / ``.index`` (0 when absent). Raises :class:`ArrayTypeError`
    for an unsupported element type."""
    cai = v.__cuda_array_interface__
    dt = np.dtype(cai["typestr"])
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is None:  # C-contiguous
        strides, acc = [], dt.itemsize
        for n in reversed(shape):
            strides.insert(0, acc)
            acc *= int(n)
    addr = int(cai["data"][0] or 0)
    lo, hi = byte_span(addr, shape, strides, dt.itemsize)
    dev = getattr(v, "device", None)
    index = getattr(dev, "id", None)
    if index is None:
        index = getattr(dev, "index", None)
    return ArrayInfo("cuda", int(index or 0), addr, lo, hi, dt.itemsize,
                     _short_dtype(_cai_dtype_name(v, dt)), v)


def _cai_dtype_name(v, dt: np.dtype) -> str:
    """The element type of a ``__cuda_array_interface__`` array. The interface has no
    bfloat16 typestr: producers write ``<V2`` (2-byte void), so the object's own ``dtype`` is
    asked (PyTorch, CuPy with ml_dtypes, our DeviceArray all name it "bfloat16")."""
    if dt.kind == "V" and dt.itemsize == 2 and "bfloat16" in str(getattr(v, "dtype", "")):
        return "bfloat16"
    return dt.name


# DLPack C structs (dlpack.h, v0.8): DLManagedTensor begins with a DLTensor.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}


def _from_dlpack_cuda(v) -> ArrayInfo:
    """Read a CUDA DLPack capsule's DLTensor without consuming it (the capsule's destructor
    then releases it; ``v`` keeps the memory alive)."""
    capsule = v.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    t = _DLTensor.from_address(get(capsule, b"dltensor"))
    code = _DL_CODES.get(t.dtype.code)
    if code is None or t.dtype.lanes != 1:
        raise ArrayTypeError("DLPack arrays of this element type cannot be passed to a kernel")
    name = "bool" if code == "bool" else \
        ("bfloat16" if code == "bfloat" else f"{code}{t.dtype.bits}")
    itemsize = max(1, t.dtype.bits // 8)
    shape = [t.shape[i] for i in range(t.ndim)]
    if t.strides:
        strides = [t.strides[i] * itemsize for i in range(t.ndim)]
    else:
        strides, acc = [], itemsize
        for n in reversed(shape):
            strides.insert(0, acc)
            acc *= n
    addr = int(t.data or 0) + int(t.byte_offset)
    lo, hi = byte_span(addr, shape, strides, itemsize)
    return ArrayInfo("cuda", int(t.device.device_id), addr, lo, hi, itemsize,
                     _short_dtype(name), v)


def _reinterpreted(w) -> ArrayInfo:
    """A :class:`~workbench.runtime.jit.TensorWrapper`: the base array's memory with the
    wrapper's element type (same size; :func:`~workbench.runtime.jit.reinterpret` checked)."""
    info = array_info(w.base)
    if info is None:
        raise ArrayTypeError(f"reinterpret wraps an array, not {type(w.base).__name__}")
    short = getattr(w.dtype, "short_name", None)  # a tl dtype: "fp8e4nv", "u32"...
    if short not in SHORT_TO_NUMPY:
        # a torch dtype (``torch.float32``) is named as torch prints it
        short = _short_dtype(getattr(w.dtype, "name", str(w.dtype).replace("torch.", "")))
    return dataclasses.replace(info, dtype=short, obj=w)


def array_info(v) -> ArrayInfo | None:
    """Describe ``v`` if it is an array a kernel takes as a pointer, else None.

    Raises :class:`ArrayTypeError` for arrays of an unsupported element type."""
    if isinstance(v, np.ndarray):
        return _from_numpy(v)
    if type(v).__name__ == "TensorWrapper" and hasattr(v, "base"):
        return _reinterpreted(v)
    if type(v).__name__ == "MockTensor" and hasattr(v, "ptr_range"):
        return _from_mock(v)
    if isinstance(v, np.generic):
        return None  # numpy scalars are scalars
    if _is_torch_tensor(v):
        return _from_torch(v)
    if hasattr(v, "__cuda_array_interface__"):
        return from_cuda_array_interface(v)
    if hasattr(v, "__array_interface__"):
        return _from_numpy(np.asarray(v), v)
    if hasattr(v, "__dlpack_device__") and hasattr(v, "__dlpack__"):
        kind, _ = v.__dlpack_device__()
        if int(kind) in (_DL_CPU, _DL_CUDA_HOST):
            return _from_numpy(np.from_dlpack(v), v)
        if int(kind) in (_DL_CUDA, _DL_CUDA_MANAGED):
            return _from_dlpack_cuda(v)
        raise ArrayTypeError(f"DLPack arrays on device type {int(kind)} are not supported; "
                             "pass a numpy array or a CUDA array")
    return None


SUPPORTED_ARCHS = (80, 86, 89, 90)


def _capability(index: int, obj) -> tuple[int, int] | None:
    try:
        return _query_capability(index, obj)
    except Exception:  # a failing query must not break binding; the backend reports
        return None


def _query_capability(index: int, obj) -> tuple[int, int] | None:
    """(major, minor) compute capability of CUDA device ``index``, asked of torch or CuPy when
    the array comes from one of them (already imported), else of the CUDA driver through
    cuda-bindings; None when nothing can tell."""
    if "torch" in sys.modules and _is_torch_tensor(obj):
        return tuple(sys.modules["torch"].cuda.get_device_capability(index))
    if "cupy" in sys.modules and type(obj).__module__.startswith("cupy"):
        cc = sys.modules["cupy"].cuda.Device(index).compute_capability
        return int(cc[:-1]), int(cc[-1])
    try:
        from cuda.bindings import driver as drv
    except ImportError:
        return None
    if drv.cuInit(0)[0] != drv.CUresult.CUDA_SUCCESS:
        return None
    err, dev = drv.cuDeviceGet(index)
    if err != drv.CUresult.CUDA_SUCCESS:
        return None
    attr = drv.CUdevice_attribute
    major = drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)[1]
    minor = drv.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)[1]
    return int(major), int(minor)


def cuda_target_for(index: int, obj) -> str:
    """The target string (``"cuda:90"``...) for arrays on CUDA device ``index``: the device's
    compute capability mapped to the nearest supported architecture not above it (sm_90 for
    Hopper and newer); ``"cuda:90"`` when no driver can be asked (then the cuda backend's
    launcher reports what is missing)."""
    cap = _capability(index, obj)
    if cap is None:
        return "cuda:90"
    arch = cap[0] * 10 + cap[1]
    fit = [a for a in SUPPORTED_ARCHS if a <= arch]
    return f"cuda:{fit[-1] if fit else 80}"
