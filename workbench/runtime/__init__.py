"""The runtime: ``jit``, argument binding and specialisation, grids, compile, compiled kernels,
the on-disk cache, ``autotune``/``Config``/``heuristics``.
"""
from .aot import compile
from .autotuner import Autotuner, Config, Heuristics, autotune, heuristics
from .compiled import CompiledKernel
from .jit import JITFunction, jit
from .specialization import ArgSpec, Specialization

__all__ = ["ArgSpec", "Autotuner", "CompiledKernel", "Config", "Heuristics", "JITFunction",
           "Specialization", "autotune", "compile", "heuristics", "jit"]
