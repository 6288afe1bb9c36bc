"""The runtime: ``jit``, argument binding and specialisation, grids, compile, compiled kernels,
the on-disk cache, ``autotune``/``Config``/``heuristics``.
"""
from ._allocation import set_allocator
from .aot import compile
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics
from .compiled import CompiledKernel
from .driver import driver
from .errors import InterpreterError, OutOfResources
from .interface import AsyncCompileMode, FutureKernel, KernelInterface, MockTensor
from .jit import JITFunction, TensorWrapper, jit, reinterpret
from .specialization import ArgSpec, Specialization

__all__ = ["ArgSpec", "AsyncCompileMode", "FutureKernel", "KernelInterface", "MockTensor",
           "Autotuner", "CompiledKernel", "Config", "Heuristics", "InterpreterError",
           "JITFunction", "OutOfResources", "TensorWrapper", "driver", "reinterpret",
           "set_allocator",
           "Specialization", "autotune", "compile", "heuristics", "jit"]
