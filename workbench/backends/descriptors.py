"""Tensor descriptors in the backends: the backends lower descriptor ops to masked pointer
accesses (:mod:`workbench.passes.rewrite_descriptors`), and expand each host-built descriptor
argument (:class:`DescriptorArg`) into the values the rewritten kernel takes: its base
pointer, its shape and strides as int64, and whether its padding is NaN. On ``cuda:90`` a
kernel whose descriptors the TMA unit can serve keeps them (:mod:`workbench.passes.
tma_lowering`), and :class:`TmaLauncher` passes each host descriptor as its encoded
``CUtensorMap`` followed by its shape and strides (:mod:`.tensormap`); a kernel that builds
tensor maps itself (device-side descriptors) gets its global scratch from
:class:`ScratchLauncher`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import UnsupportedError
from ..passes.rewrite_descriptors import DescriptorRewriteError, rewritten
from .base import PointerArg


@dataclass(frozen=True)
class DescriptorArg:
    """A host tensor descriptor at launch: ``pointer`` (the array's :class:`PointerArg`),
    ``shape`` and ``strides`` (ints, elements) and ``padding_nan``."""

    pointer: PointerArg
    shape: tuple
    strides: tuple
    padding_nan: bool = False

    @classmethod
    def of(cls, desc, pointer: PointerArg) -> DescriptorArg:
        """The launch value of host descriptor ``desc`` (a ``TensorDescriptor``: ``shape``,
        ``strides``, ``padding``) whose base is ``pointer``. Raises TypeError/ValueError for
        a shape or stride that is not an int."""
        return cls(pointer, tuple(int(d) for d in desc.shape),
                   tuple(int(d) for d in desc.strides),
                   getattr(desc, "padding", "zero") == "nan")

    def expanded(self) -> list:
        """``[pointer, *shape, *strides, padding_nan, *shape, *strides]``: the arguments of
        the rewritten kernel for one descriptor parameter, in Triton's order (the rewrite's
        pointer, i64 shape, i64 strides and i1 padding, then the i32 shape and i64 strides
        that follow a descriptor in the ttir signature)."""
        return [self.pointer, *self.shape, *self.strides, self.padding_nan, *self.shape,
                *self.strides]


def expand_args(args) -> list:
    """``args`` with each :class:`DescriptorArg` replaced by its expanded values."""
    out: list = []
    for a in args:
        if isinstance(a, DescriptorArg):
            out.extend(a.expanded())
        else:
            out.append(a)
    return out


class ExpandingLauncher:
    """Wraps a launcher ``(grid3, args)`` so descriptor arguments reach it expanded; other
    attributes are the wrapped launcher's."""

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, grid, args):
        return self.inner(grid, expand_args(args))

    def __getattr__(self, name):
        return getattr(self.inner, name)


class TmaLauncher:
    """Wraps a launcher ``(grid3, args)`` of a kernel whose descriptor parameters are TMA
    descriptors: each :class:`DescriptorArg` becomes its 128-byte ``CUtensorMap`` (encoded
    with ``metas[i]``, :func:`workbench.passes.tma_lowering.tensormap_meta`, for the i-th
    descriptor parameter), then its shape and strides (Triton's ``make_tensordesc_arg``).
    Raises LaunchError when the driver refuses the descriptor.

    A tensor map is a pure function of its parameter slot, address, shape, strides and
    padding, so the launcher keeps the last ``MAX_MAPS`` it encoded and reuses them:
    encoding through cuda-bindings' Python objects costs about 10 us a descriptor (measured
    on an H200 host), where Triton's launcher calls the driver from C."""

    #: encoded tensor maps kept per launcher (oldest dropped first)
    MAX_MAPS = 64

    def __init__(self, inner, metas):
        self.inner = inner
        self.metas = list(metas)
        self._maps: dict = {}

    def tensor_map(self, k: int, a: DescriptorArg) -> bytes:
        """The encoded ``CUtensorMap`` of descriptor ``a`` in descriptor parameter ``k``
        (from the launcher's cache when it was encoded before)."""
        key = (k, a.pointer.address, a.shape, a.strides, a.padding_nan)
        tmap = self._maps.get(key)
        if tmap is None:
            from . import tensormap
            tmap = tensormap.encode(self.metas[k], a.pointer.address, a.shape, a.strides,
                                    a.padding_nan)
            if len(self._maps) >= self.MAX_MAPS:
                del self._maps[next(iter(self._maps))]
            self._maps[key] = tmap
        return tmap

    def expand(self, args) -> list:
        """``args`` with every descriptor encoded (see the class docstring)."""
        out: list = []
        k = 0
        for a in args:
            if isinstance(a, DescriptorArg):
                out.append(self.tensor_map(k, a))
                k += 1
                out.extend([*a.shape, *a.strides])
            else:
                out.append(a)
        return out

    def __call__(self, grid, args):
        return self.inner(grid, self.expand(args))

    def __getattr__(self, name):
        return getattr(self.inner, name)


class ScratchLauncher:
    """Wraps a launcher ``(grid3, args)`` of a kernel that takes global scratch as its last
    parameter (``size`` bytes per program, ``align``-byte aligned: device-side tensor maps).
    Each launch asks the allocator of ``workbench.set_allocator`` for ``size * programs``
    bytes, with the current stream, and passes their address (Triton's launcher does the
    same); ``get_allocator() -> allocator or None`` is set by the runtime. Without an
    allocator the launcher uses a device buffer of its own, grown as needed (one stream at a
    time). Raises LaunchError for a buffer that is not a device buffer."""

    wants_allocator = True

    def __init__(self, inner, size: int, align: int):
        self.inner, self.size, self.align = inner, int(size), int(align)
        self.get_allocator: Any = None
        self._last: Any = None  # keeps the latest scratch alive while its kernel may run

    def scratch(self, nbytes: int, stream: int):
        """A device buffer of at least ``nbytes`` (the allocator's, else this launcher's)."""
        alloc = self.get_allocator() if self.get_allocator is not None else None
        if alloc is not None:
            self._last = alloc(nbytes, self.align, stream)
            return self._last
        if self._last is None or getattr(self._last, "nbytes", 0) < nbytes:
            import numpy as np

            from .cuda_driver import DeviceArray
            self._last = DeviceArray.empty((max(nbytes, self.align),), np.uint8)
        return self._last

    def __call__(self, grid, args):
        from .cuda_launch import current_stream
        n = int(grid[0]) * int(grid[1]) * int(grid[2])
        buf = self.scratch(self.size * n, current_stream())
        return self.inner(grid, list(args) + [_address(buf)])

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _address(buf) -> int:
    """The device address of an allocator's buffer: ``data_ptr()`` (torch), the CUDA array
    interface (CuPy, ``DeviceArray``) or an int. Raises LaunchError for anything else and for a
    torch tensor that is not on a CUDA device (its address would fault in the kernel)."""
    from ..errors import LaunchError
    device = getattr(buf, "device", None)
    if hasattr(buf, "data_ptr") and getattr(device, "type", "cuda") != "cuda":
        raise LaunchError(f"the allocator returned a torch tensor on {device}, but the "
                          "kernel's device-side tensor descriptors live in GPU memory: "
                          "allocate on the GPU (torch.empty(size, dtype=torch.int8, "
                          "device='cuda'))")
    if hasattr(buf, "data_ptr"):
        return int(buf.data_ptr())
    cai = getattr(buf, "__cuda_array_interface__", None)
    if cai is not None:
        return int(cai["data"][0])
    if isinstance(buf, int):
        return buf
    raise LaunchError(f"the allocator returned {type(buf).__name__}, not a device buffer "
                      "(torch tensor, CUDA array or address)")


def lower_descriptors(module, clone):
    """``module`` with its descriptor ops rewritten to pointer ops (a ``clone(module)`` copy
    when there are any). Raises :class:`UnsupportedError` at the op's line when a descriptor
    is used where the rewrite cannot follow it."""
    try:
        return rewritten(module, clone)
    except DescriptorRewriteError as e:
        raise UnsupportedError(str(e), e.op.loc,
                               "keep the descriptor outside loops and ifs: make it once and "
                               "load/store through it") from None


def wrap_launcher(launcher, module):
    """``launcher`` wrapped in :class:`ExpandingLauncher` when ``module`` (before the rewrite)
    has a descriptor kernel argument, else ``launcher`` itself (None stays None)."""
    from ..ir import types as irt
    from ..ir.core import functions
    if launcher is None:
        return None
    funcs = functions(module) if module.name == "builtin.module" else [module]
    if any(isinstance(a.type, irt.TensorDescType) for f in funcs
           for a in f.regions[0].block.args):
        return ExpandingLauncher(launcher)
    return launcher
