"""Values that cross a region boundary (loop-carried values, results of a runtime ``if``):
flattening a kernel value into the IR values it is made of, and rebuilding it.

A carried value is a :class:`~workbench.language.core.tensor`, an *aggregate* (an object
with ``_flatten() -> list[tensor]`` and ``_unflatten(list[tensor]) -> same kind``, such as a
block pointer) or a tuple/list of those. Triton's rewrite-tensor-pointer pass expands a block
pointer carried by a loop into its base, shape, strides and offsets the same way.
"""
from __future__ import annotations

from ..language.core import tensor
from . import constexpr as ce


def is_runtime(v) -> bool:
    """Whether ``v`` holds IR values (a tensor, an aggregate, or a sequence with one)."""
    v = ce.unwrap(v)
    if isinstance(v, tensor) or hasattr(v, "_flatten"):
        return True
    if isinstance(v, (tuple, list)):
        return any(is_runtime(x) for x in v)
    return False


def flatten(v) -> list:
    """The tensors ``v`` is made of, in a fixed order (compile-time parts are skipped)."""
    v = ce.unwrap(v)
    if isinstance(v, tensor):
        return [v]
    if hasattr(v, "_flatten"):
        return list(v._flatten())
    if isinstance(v, (tuple, list)):
        out = []
        for x in v:
            out.extend(flatten(x))
        return out
    return []


def unflatten(template, leaves: list):
    """``template`` with its tensors replaced, in :func:`flatten` order, by ``leaves``."""
    it = iter(leaves)

    def build(t):
        t = ce.unwrap(t)
        if isinstance(t, tensor):
            return next(it)
        if hasattr(t, "_flatten"):
            n = len(t._flatten())
            return t._unflatten([next(it) for _ in range(n)])
        if isinstance(t, (tuple, list)):
            items = [build(x) for x in t]
            return type(t)._make(items) if hasattr(type(t), "_make") else type(t)(items)
        return t
    return build(template)


def structure(v):
    """A comparable description of ``v``'s kind, dtypes and shapes (two values can be merged
    or carried together only when their structures are equal)."""
    v = ce.unwrap(v)
    if isinstance(v, tensor):
        return ("tensor", v.dtype, v.shape)
    if hasattr(v, "_structure"):
        return v._structure()
    if hasattr(v, "_flatten"):
        return (type(v).__name__, tuple(structure(x) for x in v._flatten()))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(structure(x) for x in v))
    return ("const", type(v).__name__, v if isinstance(v, (int, float, bool, str)) else id(v))


def describe(v) -> str:
    """``v`` for an error message: a tensor's type, or a compile-time value."""
    v = ce.unwrap(v)
    if isinstance(v, tensor) or hasattr(v, "_flatten"):
        return repr(v)
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(describe(x) for x in v) + ")"
    return f"{type(v).__name__} {v!r}"
