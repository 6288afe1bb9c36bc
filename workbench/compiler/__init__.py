"""``workbench.compiler``: Triton's ``triton.compiler`` names: :class:`ASTSource`,
:func:`compile` (``triton.compile``), :class:`CompiledKernel`, :class:`GPUTarget` and the
``errors`` module (``CompilationError``, ``CompileTimeAssertionFailure``)."""
from ..runtime import CompiledKernel, compile
from ..runtime.astsource import ASTSource, GPUTarget
from . import errors
from .errors import CompilationError

__all__ = ["ASTSource", "CompilationError", "CompiledKernel", "GPUTarget", "compile", "errors"]
