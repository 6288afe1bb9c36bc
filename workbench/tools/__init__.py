"""Host-side helpers with Triton's names (``triton.tools``): :mod:`.tensor_descriptor`,
:mod:`.disasm` (``get_sass``: a cubin's SASS through nvdisasm) and :mod:`.mxfp`
(microscaling fp4 elements and e8m0 scales); :mod:`.cublas`, the cuBLAS baseline Triton's
tutorials time their matmuls against. Triton's ``tools.LinearLayout`` (its C++ class) has
no counterpart here: the workbench's linear layouts are :mod:`workbench.layouts`."""
from . import disasm

__all__ = ["disasm"]
