"""Tile Workbench: compile Triton-style tile kernels through every stage, run them on the CPU
or an NVIDIA GPU, and see the stages side by side in Jupyter.

Public API (Triton's names): :func:`jit`, :func:`compile`, :func:`autotune`, :class:`Config`,
:func:`heuristics`, :func:`cdiv`, :func:`compare` (beside real Triton),
:func:`next_power_of_2`, the errors, and ``workbench.language`` (import it as ``tl``).
Importing this package imports neither IPython nor the notebook parts; ``%load_ext
workbench`` loads them.
"""
from .config import VERSION as __version__
from .errors import (
    CompilationError,
    DeviceFaultError,
    LaunchError,
    OutOfBoundsError,
    OutOfResources,
    TargetError,
    ToolMissingError,
    UnsupportedError,
    WorkbenchError,
)
from .errors import WorkbenchError as TritonError
from .errors import install_excepthook as _install_excepthook
from .runtime import (
    AsyncCompileMode,
    CompiledKernel,
    Config,
    FutureKernel,
    InterpreterError,
    JITFunction,
    KernelInterface,
    MockTensor,
    TensorWrapper,
    autotune,
    compile,
    heuristics,
    jit,
    reinterpret,
    set_allocator,
)

__all__ = ["AsyncCompileMode", "FutureKernel", "KernelInterface", "MockTensor",
           "CompilationError", "CompiledKernel", "Config", "InterpreterError", "JITFunction",
           "LaunchError", "TensorWrapper", "reinterpret", "set_allocator",
           "DeviceFaultError", "OutOfBoundsError", "OutOfResources", "TargetError",
           "ToolMissingError", "UnsupportedError",
           "WorkbenchError", "TritonError", "__version__", "autotune", "cdiv", "compare",
           "compile", "heuristics", "jit", "language", "constexpr_function",
           "next_power_of_2", "must_use_result"]

_install_excepthook()   # a script's uncaught workbench error: the user's frames and our message

_LAZY = {"cdiv": "workbench.language.utils", "next_power_of_2": "workbench.language.utils",
         "must_use_result": "workbench.language.utils",
         "constexpr_function": "workbench.language.utils", "compare": "workbench.runtime.compare"}


#: subpackages reachable as attributes after ``import workbench`` (loaded on first use)
_SUBMODULES = frozenset({"language", "testing", "viz", "layouts", "ir", "runtime", "backends",
                         "compiler", "knobs", "profiler", "tools",
                         "passes", "frontend", "notebook", "codegen", "cuda"})


def __getattr__(name):
    # ``language`` and its helpers load on first use, so importing workbench stays light and
    # free of import cycles with the language package.
    import importlib
    if name in _SUBMODULES:  # ``workbench.testing.do_bench`` after a plain ``import workbench``
        return importlib.import_module(f"workbench.{name}")
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


def load_ipython_extension(ip):
    """``%load_ext workbench``: register the ``%%tilekernel`` magic (workbench.notebook)."""
    from .notebook import load_ipython_extension as f
    f(ip)
