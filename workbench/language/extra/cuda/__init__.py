"""``tl.extra.cuda``: Triton 3.6's ``triton.language.extra.cuda``: ``libdevice`` and the
CUDA helpers the workbench has."""
from .. import libdevice

__all__ = ["libdevice"]
