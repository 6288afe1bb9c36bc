"""``tl.extra.hip``: Triton 3.6's AMD-only helpers (``triton.language.extra.hip``: ROCm's
device library ``libdevice`` and the ``memrealtime`` clock of ``utils``). The workbench has
no AMD target, so every name exists (imports and attribute reads work, as in Triton on an
NVIDIA machine) and a kernel that calls one is refused at compile time with a
CompilationError at its line naming the target and the portable name to use instead."""
from . import libdevice, utils
from .utils import memrealtime

__all__ = ["libdevice", "memrealtime", "utils"]
