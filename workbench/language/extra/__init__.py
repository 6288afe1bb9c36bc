"""``tl.extra``: Triton 3.6's ``triton.language.extra``: ``libdevice`` (NVIDIA's libdevice math
functions by their Triton names) and ``cuda`` (the same functions plus CUDA-only helpers)."""
from . import cuda, libdevice

__all__ = ["cuda", "libdevice"]
