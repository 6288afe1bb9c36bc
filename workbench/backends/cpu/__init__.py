"""The CPU backend: ttir -> host LLVM IR (llvmlite, :mod:`workbench.codegen.cpu`) -> O3 ->
MCJIT, launched over the grid in native code split across worker threads.

:mod:`.backend` (:class:`CpuBackend`: compile, cache entries), :mod:`.launcher` (the grid
over the worker threads of :mod:`.workers`), :mod:`.hostcalls` (the Python side of
``tt.print``).
"""
from .backend import CpuBackend

__all__ = ["CpuBackend"]
