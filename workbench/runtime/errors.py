"""Runtime error names under Triton's module path (``triton.runtime.errors``).

``InterpreterError``: Triton's interpreter runs the kernel's Python and raises this when the
kernel's code is wrong. The workbench's interpreter first compiles the kernel like every other
backend, so the same mistakes raise :class:`~workbench.errors.CompilationError` (with the
caret message); ``InterpreterError`` is that class under Triton's name, so
``pytest.raises(InterpreterError)`` catches what our interpreter raises.
"""
from ..errors import CompilationError, LaunchError, WorkbenchError

InterpreterError = CompilationError
TritonError = WorkbenchError

__all__ = ["InterpreterError", "LaunchError", "TritonError"]
