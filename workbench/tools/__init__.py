"""Host-side helpers with Triton's names (``triton.tools``): :mod:`.tensor_descriptor` and
:mod:`.mxfp` (microscaling fp4 elements and e8m0 scales); :mod:`.cublas`, the cuBLAS
baseline Triton's tutorials time their matmuls against."""
