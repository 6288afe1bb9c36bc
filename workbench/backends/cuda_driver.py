"""Loading and launching kernels with NVIDIA's driver API through ``cuda-bindings``.

The bindings are imported lazily (``from cuda.bindings import driver``, falling back to the
older ``from cuda import cuda``), so the compiler imports without them. Without the package or
a GPU, :func:`driver_status` returns a sentence saying why and launchers raise
:class:`workbench.errors.ToolMissingError` with it.

Driver calls used (CUDA Driver API reference): cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain,
cuCtxSetCurrent, cuModuleLoadData, cuModuleGetFunction, cuFuncSetAttribute
(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, needed above 48 KiB), cuLaunchKernel,
cuMemAlloc/cuMemcpyHtoD/cuMemcpyDtoH/cuMemsetD8/cuMemFree (for :class:`DeviceArray`),
cuEvent* (timing).
A kernel that faults leaves the context unusable; :mod:`workbench.backends.cuda_fault` keeps
the last launch and the fault, and every later launch or allocation raises
:class:`~workbench.errors.DeviceFaultError` instead of using the broken context.
Launches themselves go through :mod:`workbench.backends.cuda_launch` (a native trampoline
calling ``cuLaunchKernel`` from ``libcuda.so.1`` with a packed parameter block), or through
cuda-bindings' ``cuLaunchKernel`` where the trampoline cannot be built.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DeviceFaultError, LaunchError, ToolMissingError
from . import cuda_fault, cuda_launch
from .base import PointerArg

INSTALL_HINT = "pip install 'tile-workbench[cuda]'"


def import_driver():
    """The driver module of cuda-bindings, or raise ToolMissingError saying how to install it."""
    try:
        from cuda.bindings import driver
        return driver
    except ImportError:
        pass
    try:
        from cuda import cuda as driver  # cuda-python < 12.6 layout
        return driver
    except ImportError:
        raise ToolMissingError(f"cannot use the GPU: the cuda-bindings package is not "
                               f"installed ({INSTALL_HINT})") from None


def check(result, what: str):
    """Unpack a cuda-bindings result tuple ``(err, *values)``; raise DeviceFaultError when the
    error says a kernel faulted (the context is then unusable: see
    :mod:`~workbench.backends.cuda_fault`), LaunchError on another error."""
    err, *vals = result if isinstance(result, tuple) else (result,)
    code = int(err)
    if code != 0:
        fault = cuda_fault.fault_from(code, what, getattr(err, "name", None))
        if fault is not None:
            raise fault
        raise LaunchError(f"{what} failed with CUDA error {code} ({getattr(err, 'name', err)})")
    if not vals:
        return None
    return vals[0] if len(vals) == 1 else tuple(vals)


@dataclass
class Device:
    """An initialised device 0 with its primary context made current."""

    driver: Any  # the cuda-bindings driver module
    device: Any
    context: Any
    name: str = ""
    modules: list = field(default_factory=list)

    def make_current(self) -> None:
        check(self.driver.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")


def allow_large_shared(drv, device, func) -> None:
    """Let kernel ``func`` use more than 48 KiB of dynamic shared memory, as Triton's
    launcher does (``third_party/nvidia/backend/driver.c``, ``loadBinary``): prefer shared
    memory over L1 in the SM's carveout (``cuFuncSetCacheConfig``,
    ``CU_FUNC_CACHE_PREFER_SHARED``) and allow the device's opt-in maximum less the
    kernel's static shared memory (``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``;
    CUDA Driver API). Raises LaunchError when the driver refuses."""
    optin = check(drv.cuDeviceGetAttribute(
        drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device),
        "cuDeviceGetAttribute")
    fattr = drv.CUfunction_attribute
    static = check(drv.cuFuncGetAttribute(fattr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func),
                   "cuFuncGetAttribute")
    check(drv.cuFuncSetCacheConfig(func, drv.CUfunc_cache.CU_FUNC_CACHE_PREFER_SHARED),
          "cuFuncSetCacheConfig")
    check(drv.cuFuncSetAttribute(func, fattr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 int(optin) - int(static)), "cuFuncSetAttribute")


def open_device(ordinal: int = 0) -> Device:
    """cuInit + primary context of device ``ordinal``. Raises ToolMissingError when the
    bindings are missing or no GPU answers (the message says which), DeviceFaultError when a
    kernel faulted earlier in this process."""
    cuda_fault.raise_if_faulted()
    drv = import_driver()
    try:
        err = drv.cuInit(0)[0]
    except Exception as e:  # noqa: BLE001 - a broken driver install
        raise ToolMissingError(f"no NVIDIA GPU found (cuInit: {e})") from None
    if int(err) != 0:
        raise ToolMissingError(f"no NVIDIA GPU found (cuInit: {getattr(err, 'name', err)})")
    count = check(drv.cuDeviceGetCount(), "cuDeviceGetCount")
    if not count or ordinal >= count:
        raise ToolMissingError(f"no NVIDIA GPU found (cuDeviceGetCount: {count})")
    dev = check(drv.cuDeviceGet(ordinal), "cuDeviceGet")
    ctx = check(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    check(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    name = check(drv.cuDeviceGetName(128, dev), "cuDeviceGetName")
    name = name.split(b"\0", 1)[0].decode() if isinstance(name, bytes) else str(name)
    return Device(drv, dev, ctx, name)


def driver_status() -> str | None:
    """None when a kernel can be launched here, else the sentence saying why not."""
    try:
        open_device()
    except (ToolMissingError, DeviceFaultError) as e:
        return str(e)
    except LaunchError as e:
        return f"no NVIDIA GPU usable ({e})"
    return None


class CudaLauncher:
    """Launches one compiled kernel: ``launcher(grid3, args)``.

    ``image``: cubin bytes (preferred) or PTX text (JIT-compiled by the driver); ``name``: the
    entry; ``param_kinds``: per passed parameter ``"ptr"``, ``"i32"``, ``"i64"``, ``"f32"``,
    ``"f64"``, ``"i1"``...; ``num_warps``; ``shared``: dynamic shared bytes. Args: PointerArg
    (``address`` is a device pointer) or an int device address for pointers, ints, floats,
    bools. ``pdl``: launch with ``cuLaunchKernelEx`` and the attribute
    ``CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`` (programmatic dependent launch,
    sm_90+; CUDA Driver API, ``CUlaunchAttributeID``), so the kernel may start before the
    previous kernel in the stream has finished (it waits in ``griddepcontrol.wait``).
    Raises ToolMissingError without a GPU, LaunchError for bad arguments or a failing
    launch (with the driver's error name).
    """

    def __init__(self, image, name: str, param_kinds, num_warps: int, shared: int,
                 pdl: bool = False):
        self.pdl = pdl
        self.image, self.name = image, name
        self.param_kinds = list(param_kinds)
        self.num_warps, self.shared = num_warps, shared
        self._dev: Device | None = None
        self._func = None
        self._packed: cuda_launch.PackedLaunch | None = None  # built by _load

    def _load(self):
        if self._func is not None:
            return
        dev = open_device()
        drv = dev.driver
        data = self.image if isinstance(self.image, bytes) else self.image.encode() + b"\0"
        module = check(drv.cuModuleLoadData(data), "cuModuleLoadData")
        dev.modules.append(module)
        func = check(drv.cuModuleGetFunction(module, self.name.encode()), "cuModuleGetFunction")
        if self.shared > 48 * 1024:
            allow_large_shared(drv, dev.device, func)
        try:
            self._packed = cuda_launch.PackedLaunch(cuda_launch.trampoline(), int(func),
                                                    int(dev.context), self.param_kinds,
                                                    32 * self.num_warps, self.shared)
        except ValueError as e:  # a parameter kind no launch can pass
            raise LaunchError(f"kernel {self.name}: {e}") from None
        self._dev, self._func = dev, func

    def __call__(self, grid3, args, stream=None) -> None:
        """Launch over ``grid3`` (3 ints >= 0; an empty grid launches nothing) on ``stream``
        (a CUstream handle as an int; None: :func:`~workbench.backends.cuda_launch.
        current_stream`). Raises LaunchError for bad arguments or a failing launch,
        DeviceFaultError when a kernel faulted (now or earlier in this process)."""
        if cuda_fault.FAULT:  # a kernel faulted earlier: the context is unusable
            cuda_fault.raise_if_faulted()
        if self._func is None:
            self._load()
        gx, gy, gz = grid3
        if not (gx and gy and gz):
            return
        if stream is None:
            stream = cuda_launch.current_stream()
        packed, dev = self._packed, self._dev
        assert packed is not None and dev is not None  # set by _load
        try:
            if self.pdl:
                rc = self._launch_pdl(packed.fill(gx, gy, gz, stream, args), grid3, stream)
            elif packed.direct:
                rc = packed.launch(gx, gy, gz, stream, args)
            else:  # no trampoline here: the same parameter block through cuda-bindings
                params = packed.fill(gx, gy, gz, stream, args)
                dev.make_current()
                rc = int(dev.driver.cuLaunchKernel(
                    self._func, int(gx), int(gy), int(gz), 32 * self.num_warps, 1, 1,
                    self.shared, stream, params, 0)[0])
        except ValueError as e:
            raise LaunchError(f"kernel {self.name}: {e}") from None
        if rc:
            what = f"cuLaunchKernel({self.name})"
            name = _error_name(dev.driver, rc)
            fault = cuda_fault.fault_from(rc, what, name)
            if fault is not None:  # an earlier kernel faulted: its launch is the last one
                raise fault
            raise LaunchError(f"{what} failed with CUDA error {rc} ({name})")
        cuda_fault.LAST[0] = (self.name, grid3, args, self.param_kinds)  # for a fault report


    def _launch_pdl(self, params, grid3, stream) -> int:
        """``cuLaunchKernelEx`` with programmatic stream serialization allowed."""
        dev = self._dev
        assert dev is not None  # set by _load
        drv = dev.driver
        cfg = drv.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = (int(g) for g in grid3)
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = 32 * self.num_warps, 1, 1
        cfg.sharedMemBytes = self.shared
        cfg.hStream = drv.CUstream(int(stream))
        attr = drv.CUlaunchAttribute()
        attr.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        attr.value.programmaticStreamSerializationAllowed = 1
        cfg.attrs = [attr]
        cfg.numAttrs = 1
        dev.make_current()
        return int(drv.cuLaunchKernelEx(cfg, self._func, params, 0)[0])


def _error_name(drv, code: int) -> str:
    """The CUresult name of ``code`` (e.g. CUDA_ERROR_INVALID_VALUE), or "unknown"."""
    try:
        return drv.CUresult(code).name
    except Exception:  # noqa: BLE001 - a code the bindings do not know
        return "unknown"


def synchronize() -> None:
    """Wait for all work on the GPU (cuCtxSynchronize). Raises LaunchError when a kernel
    faulted, ToolMissingError (saying which) without cuda-bindings or a GPU."""
    drv = import_driver()
    try:
        res = drv.cuCtxSynchronize()
    except Exception as e:  # noqa: BLE001 - the bindings cannot load the driver: no GPU here
        raise ToolMissingError(f"no NVIDIA GPU found ({type(e).__name__}: "
                               f"{str(e).splitlines()[0] if str(e) else e!r})") from None
    check(res, "cuCtxSynchronize")


class DeviceArray:
    """A 1-D or N-d device buffer with ``__cuda_array_interface__`` (version 3).

    ``from_numpy(a)`` copies host -> device; ``to_numpy()`` copies back; ``ptr`` is the device
    address; ``free()`` releases it (also on garbage collection).
    """

    def __init__(self, shape, dtype, ptr: int, owner: Device):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.ptr, self._dev = int(ptr), owner

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.dtype.itemsize

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "version": 3, "strides": None}

    @classmethod
    def empty(cls, shape, dtype) -> "DeviceArray":
        dev = open_device()
        n = max(int(np.prod(shape)) * np.dtype(dtype).itemsize, 1)
        ptr = check(dev.driver.cuMemAlloc(n), "cuMemAlloc")
        return cls(shape, dtype, int(ptr), dev)

    @classmethod
    def from_numpy(cls, a) -> "DeviceArray":
        a = np.ascontiguousarray(a)
        out = cls.empty(a.shape, a.dtype)
        if a.nbytes:
            check(out._dev.driver.cuMemcpyHtoD(out.ptr, a.ctypes.data, a.nbytes), "cuMemcpyHtoD")
        return out

    def to_numpy(self) -> np.ndarray:
        out = np.empty(self.shape, self.dtype)
        if out.nbytes:
            check(self._dev.driver.cuMemcpyDtoH(out.ctypes.data, self.ptr, out.nbytes),
                  "cuMemcpyDtoH")
        return out

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr={self.ptr:#x})"

    def pointer_arg(self) -> PointerArg:
        """The launch argument for this buffer."""
        return PointerArg(self.ptr, self.ptr, self.ptr + self.nbytes, self.dtype.itemsize, self)

    def free(self) -> None:
        if self.ptr:
            try:
                self._dev.driver.cuMemFree(self.ptr)
            finally:
                self.ptr = 0

    def __del__(self):
        try:
            self.free()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class EventTimer:
    """Times GPU work with CUDA events: ``with EventTimer() as t: ...; t.ms``."""

    def __init__(self):
        self.drv = import_driver()
        self.start = check(self.drv.cuEventCreate(0), "cuEventCreate")
        self.stop = check(self.drv.cuEventCreate(0), "cuEventCreate")
        self.ms = None

    def __enter__(self):
        check(self.drv.cuEventRecord(self.start, 0), "cuEventRecord")
        return self

    def __exit__(self, *exc):
        check(self.drv.cuEventRecord(self.stop, 0), "cuEventRecord")
        check(self.drv.cuEventSynchronize(self.stop), "cuEventSynchronize")
        self.ms = float(check(self.drv.cuEventElapsedTime(self.start, self.stop),
                              "cuEventElapsedTime"))
        return False
