"""``driver.active``: the device a launch would use, under Triton's names
(``triton.runtime.driver``), for scripts that ask which device and target they run on.

With a CUDA device (``workbench.cuda.is_available()``) and without ``WORKBENCH_INTERPRET``, the
active target is ``cuda`` with the device's compute capability and 32 threads per warp, and
the torch device is ``"cuda:0"``; otherwise it is the host: backend ``"cpu"``, arch 0, warp size 1,
torch device ``"cpu"`` (the workbench runs the same kernels there; Triton would have no driver).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .jit import interpret_enabled


@dataclass(frozen=True)
class GPUTarget:
    """A target as Triton describes it: ``backend`` ("cuda" or "cpu"), ``arch`` (the compute
    capability as an int, 90 for sm_90; 0 on the host), ``warp_size`` (threads per warp)."""

    backend: str
    arch: int
    warp_size: int


def _cuda_index_capability() -> tuple[int, int] | None:
    if interpret_enabled():
        return None
    from .. import cuda
    if not cuda.is_available():
        return None
    from .devices import _query_capability
    return _query_capability(0, None)


class _Utils:
    def get_device_properties(self, index=0) -> dict:
        """Properties Triton's tutorials read, asked of the CUDA driver (cuDeviceGetAttribute):
        ``multiprocessor_count``, ``max_shared_mem`` (opt-in bytes per block),
        ``max_num_regs`` (32-bit registers per SM), ``warpSize``, and on a GPU
        ``sm_clock_rate``, ``mem_clock_rate`` (kHz) and ``mem_bus_width`` (bits). On the
        host: the CPU's cores (programs run one per core at a time) and warp size 1 (a
        program is one host thread), with sm_90's register file (65536) and opt-in shared
        memory per block (232448 bytes, :data:`workbench.backends.limits.ARCH_SHARED_OPTIN`):
        the limits that go with the figures a host kernel's ``_init_handles()`` reports (its
        cuda:90 compile), so GPU occupancy arithmetic in scripts gives sm_90's answer."""
        cap = _cuda_index_capability()
        if cap is None:
            from ..backends.limits import ARCH_SHARED_OPTIN
            return {"multiprocessor_count": os.cpu_count() or 1,
                    "max_shared_mem": ARCH_SHARED_OPTIN[90], "max_num_regs": 65536,
                    "warpSize": 1}
        from cuda.bindings import driver as drv
        attr = drv.CUdevice_attribute
        dev = drv.cuDeviceGet(int(index or 0))[1]

        def ask(a) -> int:
            return int(drv.cuDeviceGetAttribute(a, dev)[1])
        return {"multiprocessor_count": ask(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
                "max_shared_mem":
                    ask(attr.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
                "max_num_regs": ask(attr.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR),
                "warpSize": ask(attr.CU_DEVICE_ATTRIBUTE_WARP_SIZE),
                "sm_clock_rate": ask(attr.CU_DEVICE_ATTRIBUTE_CLOCK_RATE),  # kHz
                "mem_clock_rate": ask(attr.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),  # kHz
                "mem_bus_width": ask(attr.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)}


class _ActiveDriver:
    utils = _Utils()

    def get_current_target(self) -> GPUTarget:
        """The :class:`GPUTarget` launches use now (see the module docstring)."""
        cap = _cuda_index_capability()
        if cap is None:
            return GPUTarget("cpu", 0, 1)
        return GPUTarget("cuda", cap[0] * 10 + cap[1], 32)

    def get_active_torch_device(self):
        """``torch.device("cuda", index)`` (the index of :meth:`get_current_device`) when a
        CUDA target is active, else ``torch.device("cpu")``. The index matters: torch's
        ``device("cuda:0") == device("cuda")`` is False, and scripts compare a tensor's
        ``.device`` with this one (Triton's ``backends/nvidia/driver.py`` gives the index
        too). Raises ImportError without torch."""
        import torch
        if _cuda_index_capability():
            return torch.device("cuda", self.get_current_device())
        return torch.device("cpu")

    def get_current_device(self) -> int:
        """The device index (0; the workbench launches on device 0 unless arrays say else)."""
        return 0

    def set_current_device(self, device) -> None:
        """Make ``device`` current: torch's ``cuda.set_device`` on a GPU; on the host only
        device 0 exists (ValueError for another)."""
        if _cuda_index_capability():
            import torch
            torch.cuda.set_device(device)
        elif int(getattr(device, "index", device) or 0) != 0:
            raise ValueError(f"the host has one device (0), not {device!r}")

    def get_current_stream(self, device=None) -> int:
        """The raw CUDA stream handle torch launches on (0 on the host)."""
        if _cuda_index_capability():
            import torch
            return int(torch.cuda.current_stream(device).cuda_stream)
        return 0

    def get_device_interface(self):
        """``torch.cuda`` on a GPU (Triton's answer); on the host a stand-in with the calls
        benchmark scripts make (``synchronize``, ``current_device``, ``device_count``)."""
        if _cuda_index_capability():
            import torch
            return torch.cuda
        return _HostDevice()

    def get_benchmarker(self):
        """The timing function ``autotune`` uses: :func:`workbench.runtime.bench.do_bench`."""
        from .bench import do_bench
        return do_bench

    def get_empty_cache_for_benchmark(self):
        """A 256 MB buffer whose zeroing (:meth:`clear_cache`) evicts the inputs from the
        caches between timed runs, as Triton's: a torch int32 tensor on the GPU, a numpy
        array on the host."""
        words = 256 * 1024 * 1024 // 4
        if _cuda_index_capability():
            import torch
            return torch.empty(words, dtype=torch.int, device="cuda")
        import numpy as np
        return np.empty(words, np.int32)

    def clear_cache(self, cache) -> None:
        """Zero the buffer of :meth:`get_empty_cache_for_benchmark`."""
        if hasattr(cache, "zero_"):
            cache.zero_()
        else:
            cache.fill(0)

    def is_active(self) -> bool:
        return True


class _HostDevice:
    """What ``get_device_interface()`` gives on the host: one device, launches that finish
    before they return (so ``synchronize`` has nothing to wait for)."""

    @staticmethod
    def synchronize(device=None) -> None:
        return None

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def device_count() -> int:
        return 1

    @staticmethod
    def is_available() -> bool:
        return False


class _Driver:
    """``driver.active`` (Triton's ``triton.runtime.driver``)."""

    active = _ActiveDriver()


driver = _Driver()
