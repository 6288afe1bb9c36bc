"""The runtime: ``jit``, argument binding and specialisation, grids, compile, compiled kernels.
"""
from .compiled import CompiledKernel
from .compiler import compile
from .jit import JITFunction, jit
from .specialization import ArgSpec, Specialization

__all__ = ["ArgSpec", "CompiledKernel", "JITFunction", "Specialization", "compile", "jit"]
