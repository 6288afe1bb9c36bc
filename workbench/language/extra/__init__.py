"""``tl.extra``: Triton 3.6's ``triton.language.extra``: ``libdevice`` (NVIDIA's libdevice math
functions by their Triton names), ``cuda`` (the same functions plus CUDA-only helpers) and
``hip`` (AMD's names, each refused in a kernel: the workbench has no AMD target)."""
from . import cuda, hip, libdevice

__all__ = ["cuda", "hip", "libdevice"]
