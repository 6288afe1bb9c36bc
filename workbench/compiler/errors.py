"""``workbench.compiler.errors``: the compile errors under Triton's names
(``triton.compiler.errors``)."""
from ..errors import CompilationError, CompileTimeAssertionFailure, UnsupportedError

__all__ = ["CompilationError", "CompileTimeAssertionFailure", "UnsupportedError"]
