"""Plain helpers usable on the host and, with compile-time arguments, inside kernels
(Triton's ``triton.cdiv`` and ``triton.next_power_of_2``, constexpr functions in 3.5+)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

_F = TypeVar("_F", bound=Callable)


def _constexpr_function(fn: _F) -> _F:
    """Mark ``fn`` as callable inside a kernel with compile-time arguments (the frontend runs
    it in Python at compile time)."""
    vars(fn)["__workbench_constexpr_function__"] = True
    return fn


#: Triton's public name: ``@constexpr_function`` lets kernels call ``fn`` with compile-time
#: arguments (the frontend runs it in Python while compiling)
constexpr_function = _constexpr_function


@_constexpr_function
def cdiv(x: int, y: int) -> int:
    """ceil(x / y) for ints: ``(x + y - 1) // y`` (Triton's host ``triton.cdiv(x, y)``).
    Raises ZeroDivisionError for y 0."""
    return (x + y - 1) // y


@_constexpr_function
def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1), as Triton's bit-twiddling version."""
    n = int(n)
    if n <= 1:
        return 1
    return 1 << (n - 1).bit_length()



def must_use_result(x, s=True):
    """Mark a ``@jit`` (or constexpr) function so that calling it as a statement, its result
    unused, is a compile error (Triton's ``triton.must_use_result(x, s=True)``). Used as
    ``@must_use_result`` or ``@must_use_result("extra words for the message")``: ``x`` is
    the function or the words, ``s`` the words (True: none)."""
    if isinstance(x, str):
        return lambda fn: must_use_result(fn, x)
    x._must_use_result = s
    return x
