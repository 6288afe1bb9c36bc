"""Aggregate values in kernels (a helper of :class:`CodeGenerator`, Triton's
``tl.core._aggregate``; the classes live in :mod:`workbench.language.aggregates`).

Constructing an aggregate runs its ``__init__`` in Python with the kernel's semantic; a
``@jit`` method read from an instance is inlined with the instance as ``self``; a Python
method of the instance (builtin style) runs with ``_semantic`` when it asks for it; a
static Python function of the class runs in Python; ``agg[i]`` calls ``__getitem__`` the
same way. Errors raised by user code while doing so become CompilationErrors at the call.
"""
from __future__ import annotations

import inspect
import types

from ..errors import CompilationError
from ..language.aggregates import BoundJitMethod, is_aggregate
from . import constexpr as ce

__all__ = ["handles", "call", "subscript", "is_aggregate"]


def handles(fn) -> bool:
    """Whether calling ``fn`` in a kernel is an aggregate's business (its class, a bound
    ``@jit`` or Python method of an instance, a static Python function of the class)."""
    if isinstance(fn, type):
        return getattr(fn, "__workbench_aggregate__", False)
    if isinstance(fn, BoundJitMethod):
        return True
    if isinstance(fn, types.MethodType):
        return is_aggregate(fn.__self__)
    return bool(getattr(fn, "__workbench_aggregate_static__", False))


def _run_python(gen, node, what, thunk):
    gen.sem.call_jit = lambda f, a: gen.inline(f, a, {}, node)
    try:
        return thunk()
    except CompilationError:
        raise
    except (TypeError, ValueError, AttributeError, AssertionError, IndexError, KeyError) as e:
        raise gen.error(node, f"{what}: {type(e).__name__}: {e}",
                        "check the aggregate class's fields and methods") from None


def call(gen, fn, args, kws, node):
    """Call ``fn`` (see :func:`handles`) with evaluated ``args``/``kws`` at ``node``; returns
    the call's value. Raises CompilationError at ``node`` when the user code fails."""
    if isinstance(fn, BoundJitMethod):
        return gen.inline(fn.__func__, [fn.__self__, *args], kws, node)
    args = [ce.unwrap(a) for a in args]
    kws = {k: ce.unwrap(v) for k, v in kws.items()}
    if isinstance(fn, type):
        return _run_python(gen, node, f"constructing {fn.__name__}",
                           lambda: fn(*args, _semantic=gen.sem, **kws))
    name = getattr(fn, "__name__", "method")
    try:
        wants = "_semantic" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        wants = False
    extra = {"_semantic": gen.sem} if wants else {}
    out = _run_python(gen, node, f"in {name}()", lambda: fn(*args, **extra, **kws))
    return out


def subscript(gen, obj, index, node):
    """``obj[index]`` for an aggregate instance: its ``__getitem__`` (a ``@jit`` method,
    inlined, or a Python one taking ``_semantic``)."""
    getitem = getattr(obj, "__getitem__", None)
    if getitem is None:
        raise gen.error(node, f"{type(obj).__name__} has no __getitem__",
                        "define __getitem__ on the aggregate class")
    return call(gen, getitem, [index], {}, node)
