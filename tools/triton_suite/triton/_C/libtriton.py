"""``triton._C.libtriton``: only the cuBLAS baseline Triton's tutorial 09 times its matmuls
against, as the workbench provides it (:class:`workbench.tools.cublas.CublasLt`). The rest of
Triton's compiled module (its MLIR bindings) has no workbench counterpart and stays missing."""
from types import SimpleNamespace

from workbench.tools.cublas import CublasLt

nvidia = SimpleNamespace(cublas=SimpleNamespace(CublasLt=CublasLt))
