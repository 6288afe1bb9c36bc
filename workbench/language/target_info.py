"""``tl.target_info``: compile-time questions about the GPU a kernel is compiled for, as in
Triton 3.6's ``triton/language/target_info.py`` (``is_cuda``, ``cuda_capability_geq``,
``is_hip``...). Kernels call them inside ``@jit`` code (they are constexpr functions), e.g.
``if tl.target_info.cuda_capability_geq(9, 0): ...``.

The target is the one being compiled for (``cuda:80``, ``cuda:90``); on the host targets
(``cpu``, ``interpreter``) :func:`current_target` is None, as Triton's is on a machine with no
GPU driver, so every question answers False there. The compiler sets it for the duration of
one compile with :func:`compiling_for`."""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass

from .utils import constexpr_function

__all__ = ["current_target", "is_cuda", "cuda_capability_geq", "is_hip", "is_hip_cdna3",
           "is_hip_cdna4", "GPUTarget", "compiling_for"]


@dataclass(frozen=True)
class GPUTarget:
    """What Triton's ``GPUTarget`` holds: ``backend`` (``"cuda"``), ``arch`` (80, 90: the
    compute capability as major*10+minor) and ``warp_size`` (32 threads)."""

    backend: str
    arch: int
    warp_size: int = 32


_CURRENT: contextvars.ContextVar[GPUTarget | None] = contextvars.ContextVar(
    "workbench_compile_target", default=None)


@contextlib.contextmanager
def compiling_for(target):
    """Within this block :func:`current_target` answers for ``target`` (a
    :class:`workbench.config.Target` or its text: ``"cuda:90"``, ``"cpu"``...)."""
    text = str(target)
    gpu = None
    if text.startswith("cuda:") and text[5:].isdigit():
        gpu = GPUTarget("cuda", int(text[5:]))
    token = _CURRENT.set(gpu)
    try:
        yield gpu
    finally:
        _CURRENT.reset(token)


def current_target() -> GPUTarget | None:
    """The GPU target being compiled for, or None on the host targets."""
    return _CURRENT.get()


@constexpr_function
def is_cuda() -> bool:
    """Whether the kernel is being compiled for an NVIDIA GPU."""
    t = current_target()
    return t is not None and t.backend == "cuda"


@constexpr_function
def cuda_capability_geq(major: int, minor: int = 0) -> bool:
    """Whether the compute capability compiled for is at least ``major.minor`` (False off
    CUDA), for guarding inline assembly that needs a newer GPU."""
    t = current_target()
    return t is not None and t.backend == "cuda" and t.arch >= major * 10 + minor


@constexpr_function
def is_hip() -> bool:
    """Whether the kernel is being compiled for an AMD GPU (never, in the workbench)."""
    t = current_target()
    return t is not None and t.backend == "hip"


@constexpr_function
def is_hip_cdna3() -> bool:
    """AMD CDNA3 (gfx942): never in the workbench."""
    t = current_target()
    return t is not None and t.backend == "hip" and t.arch == "gfx942"


@constexpr_function
def is_hip_cdna4() -> bool:
    """AMD CDNA4 (gfx950): never in the workbench."""
    t = current_target()
    return t is not None and t.backend == "hip" and t.arch == "gfx950"
