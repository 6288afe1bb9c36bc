"""Name lookup for the code generator: kernel locals, then the closure, the module globals
and the Python builtins Triton allows on compile-time values (Triton's
``compiler/code_generator.py``)."""
from __future__ import annotations

import builtins
import types

from ..language import core as lcore
from ..language import dtypes as ldt

# Python builtins a kernel may call on compile-time values (float("inf"), min, len...)
ALLOWED_BUILTINS = {"float", "int", "bool", "min", "max", "range", "len", "print", "abs",
                    "isinstance", "tuple", "list", "getattr", "hasattr", "str", "round",
                    "enumerate", "zip", "divmod", "pow", "sum", "any", "all"}


class Undefined(Exception):
    """A name that is not defined anywhere; the frontend reports it with a caret."""


class Scope:
    """Local variables of one function body: ``values`` maps name -> tensor or Python value.
    ``constexpr_locals`` are names declared ``X: tl.constexpr = ...`` (not reassignable).
    ``lifted`` are names a plain ``x = 5`` bound to a Python number: Triton makes those
    scalar tensors at once; here they stay numbers until used as tensors, and ``x.type``
    answers the tensor's type (a constexpr's ``.type`` is a ``constexpr_type``)."""

    def __init__(self, src, values=None, constexpr_locals=None, lifted=None):
        self.src = src
        self.values: dict = dict(values or {})
        self.constexpr_locals: set = set(constexpr_locals or ())
        self.lifted: set = set(lifted or ())

    def copy(self) -> "Scope":
        return Scope(self.src, self.values, self.constexpr_locals, self.lifted)

    def lookup(self, name: str):
        """The value of ``name``: local, closure, global, then allowed builtin.

        Globals must be compile-time values Triton accepts: ``tl.constexpr`` objects, modules,
        functions (builtins, @jit functions, plain ones that fail when called), classes and
        dtypes. Raises :class:`Undefined` for an unknown name, ValueError for a global that
        is a plain Python number or object."""
        if name in self.values:
            return self.values[name]
        if name in self.src.closure:
            return _check_global(name, self.src.closure[name], "closure variable")
        if name in self.src.globals:
            return _check_global(name, self.src.globals[name], "global variable")
        if name in ALLOWED_BUILTINS:
            return getattr(builtins, name)
        if hasattr(builtins, name):
            return getattr(builtins, name)  # the caller rejects calls to it with a caret
        raise Undefined(name)


def _check_global(name, value, what):
    if isinstance(value, lcore.constexpr):
        return value.value
    if isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                          type, ldt.dtype)) or value is None:
        return value
    if getattr(value, "__workbench_jit__", False) or callable(value):
        return value
    raise ValueError(f"Cannot access {what} {name!r} from within a @jit function: it is a "
                     f"{type(value).__name__}, not a tl.constexpr; kernels can only read "
                     "compile-time globals")  # Triton's first words
