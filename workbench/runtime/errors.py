"""Runtime error names under Triton's module path (``triton.runtime.errors``).

``InterpreterError``: Triton's interpreter runs the kernel's Python and raises this when the
kernel's code is wrong. The workbench's interpreter first compiles the kernel like every other
backend, so the same mistakes raise :class:`~workbench.errors.CompilationError` (with the
caret message); ``InterpreterError`` is that class under Triton's name, so
``pytest.raises(InterpreterError)`` catches what our interpreter raises.

``OutOfResources``: a kernel needs more shared memory, registers or threads than the device
allows, or a grid is larger than the device's (:class:`workbench.errors.OutOfResources`; the
autotuner counts such a config as failed, as Triton's does).

``PTXASError``: ptxas refused the PTX of a CUDA compile
(:class:`workbench.backends.nvidia_tools.PtxasError`); ``AutotunerError``: ``@autotune``'s
``early_config_prune`` left nothing to time.
"""
from ..backends.nvidia_tools import PtxasError as PTXASError
from ..errors import (
    AutotunerError,
    CompilationError,
    LaunchError,
    OutOfResources,
    WorkbenchError,
)

InterpreterError = CompilationError
TritonError = WorkbenchError

__all__ = ["AutotunerError", "InterpreterError", "LaunchError", "OutOfResources", "PTXASError",
           "TritonError"]
