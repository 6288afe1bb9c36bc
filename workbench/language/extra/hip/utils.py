"""``tl.extra.hip.utils``: AMD's ``memrealtime`` clock (Triton's
``triton.language.extra.hip.utils``), refused in a kernel (see :mod:`.refuse`)."""
from .refuse import amd_only

memrealtime = amd_only("memrealtime", "tl.extra.cuda.globaltimer() (nanoseconds, CUDA "
                       "targets)")

__all__ = ["memrealtime"]
