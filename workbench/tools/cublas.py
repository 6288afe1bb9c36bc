"""cuBLAS as a baseline beside a kernel: :class:`CublasLt` has the methods of Triton's private
``triton._C.libtriton.nvidia.cublas.CublasLt``, which Triton's tutorials time their matmuls
against (tutorial 09's "cuBLAS" column).

The product runs through torch, whose CUDA matmuls are cuBLAS/cuBLASLt calls
(``torch.matmul`` for 16- and 32-bit floats, ``torch._scaled_mm``, cuBLASLt's fp8 GEMM, for
``float8_e4m3fn``/``float8_e5m2``), so the workbench needs no binding of its own. It needs torch
with CUDA; without it, creating one raises ToolMissingError saying so.
"""
from __future__ import annotations

from ..errors import LaunchError, ToolMissingError


def _torch():
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        raise ToolMissingError("the cuBLAS baseline needs torch with a CUDA GPU "
                               "(torch.matmul calls cuBLAS); none is available here")
    return torch


class CublasLt:
    """C = A @ B^T on the GPU through cuBLAS (Triton's ``CublasLt(workspace)``).

    ``workspace``: a CUDA uint8 tensor (Triton hands it to cuBLASLt; here torch keeps cuBLAS's
    own workspace, so it is only held). Raises ToolMissingError without torch and a GPU."""

    def __init__(self, workspace):
        self.torch = _torch()
        self.workspace = workspace

    def _product(self, a, b, out_dtype):
        """A (M, K) @ B (N, K)^T with fp32 accumulation, as ``out_dtype``."""
        torch = self.torch
        if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[1]:
            raise LaunchError(f"CublasLt: A must be (M, K) and B (N, K), got {tuple(a.shape)} "
                              f"and {tuple(b.shape)}")
        if a.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            one = torch.ones((), device=a.device, dtype=torch.float32)
            return torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=out_dtype)
        return torch.matmul(a, b.t()).to(out_dtype)

    def matmul(self, a, b, c) -> None:
        """``c[:] = a @ b.T`` (a: (M, K), b: (N, K), c: (M, N), CUDA tensors; fp16, bf16,
        fp32 or fp8 e4m3/e5m2 inputs). Raises LaunchError for mismatched shapes."""
        c.copy_(self._product(a, b, c.dtype))

    def gemm(self, a, b, c, d, alpha: float, beta: float) -> None:
        """``d[:] = alpha * (a @ b.T) + beta * c`` (shapes as :meth:`matmul`, computed in
        fp32 and rounded once to ``d``'s dtype)."""
        torch = self.torch
        acc = self._product(a, b, torch.float32)
        d.copy_((alpha * acc + beta * c.to(torch.float32)).to(d.dtype))
