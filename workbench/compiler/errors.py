"""``workbench.compiler.errors``: the compile errors under Triton's names
(``triton.compiler.errors``)."""
from ..errors import CompilationError, CompileTimeAssertionFailure, UnsupportedError, WorkbenchError

#: Triton's name of a construct the language does not take (``while ... else``, ``lambda``...)
UnsupportedLanguageConstruct = UnsupportedError
TritonError = WorkbenchError

__all__ = ["CompilationError", "CompileTimeAssertionFailure", "TritonError", "UnsupportedError",
           "UnsupportedLanguageConstruct"]
