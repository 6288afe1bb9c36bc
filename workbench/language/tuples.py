"""Tuples in kernels: ``tl.tuple``, ``tl.tuple_type`` and ``tl.constexpr_type`` (Triton 3.6's
``language/core.py`` names).

A kernel's tuple is a :class:`tuple` (a subclass of Python's ``tuple``): the tuple literals of
a kernel, tuple kernel arguments (Triton passes each runtime element as its own argument) and
``tl.tuple(iterable)`` all give one. Its elements are tensors, compile-time values, tensor
descriptors, block pointers or tuples. The frontend indexes it with compile-time indices,
iterates it in unrolled loops, unpacks it, concatenates it with ``+`` and carries it through
loops and ``if`` branches element by element (``workbench.frontend.carry``); ``t[0] = x``
is refused, as in Triton.
"""
from __future__ import annotations

import builtins
from typing import Any

from .core import constexpr, constexpr_type


def type_of(v) -> Any:
    """``v.type`` as Triton gives it: a tensor's type, a tuple's :class:`tuple_type`, else
    a :class:`constexpr_type` of the compile-time value."""
    if isinstance(v, builtins.tuple):
        fields = getattr(type(v), "_fields", None)
        return tuple_type([type_of(x) for x in v], list(fields) if fields else None)
    t = getattr(v, "type", None)
    if t is not None and not isinstance(v, (int, float, bool, str, type, constexpr)):
        return t
    return constexpr_type(v)


class tuple_type:
    """The type of a tuple: ``types`` (one per element: a dtype, a ``constexpr_type``, a
    nested ``tuple_type``...) and ``fields`` (names of a namedtuple's fields, else ``""``
    each). Equal when both lists are; ``str()`` is Triton's ``[name:type,...]``."""

    def __init__(self, types, fields=None):
        self.types = list(types)
        self.fields = list(fields) if fields else [""] * len(self.types)
        self.name = "[" + ",".join(f"{k}:{v}" for k, v in zip(self.fields, self.types,
                                                              strict=True)) + "]"

    def __eq__(self, other):
        return type(self) is type(other) and self.types == other.types and \
            self.fields == other.fields

    def __hash__(self):
        return hash(self.name)

    def __iter__(self):
        return iter(self.types)

    def __len__(self):
        return len(self.types)

    def __getitem__(self, index):
        return self.types[index.value if isinstance(index, constexpr) else index]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"tuple_type{self.name}"

    def mangle(self) -> str:
        """Triton's mangled spelling: ``T`` + the elements' joined by ``_`` + ``T``."""
        return "T" + "_".join(t.mangle() for t in self.types) + "T"


def _values(other):
    if isinstance(other, constexpr):
        other = other.value
    if isinstance(other, (builtins.tuple, list)):
        return builtins.list(other)
    raise TypeError(f"cannot combine a tuple with {type(other).__name__} {other!r}")


class tuple(builtins.tuple):  # noqa: A001 - Triton's public name (tl.tuple)
    """A tuple of kernel values: ``tl.tuple(iterable)`` (the optional ``type`` argument of
    Triton's constructor is accepted and not needed). Indexing with a compile-time int gives
    the element, a slice a ``tl.tuple``; ``+`` concatenates with any tuple or list; ``==``
    compares element by element; ``.type`` is its :class:`tuple_type`."""

    def __new__(cls, args=(), type=None):  # noqa: A002 - Triton's keyword
        return super().__new__(cls, args)

    @property
    def type(self) -> tuple_type:
        """The :class:`tuple_type` of the elements."""
        return type_of(builtins.tuple(self))

    @property
    def values(self) -> builtins.list:
        """The elements as a list (Triton's ``tuple.values``)."""
        return builtins.list(self)

    def __getitem__(self, idx):
        if isinstance(idx, constexpr):
            idx = idx.value
        out = builtins.tuple.__getitem__(self, idx)
        return tuple(out) if isinstance(idx, slice) else out

    def __add__(self, other):
        return tuple(builtins.list(self) + _values(other))

    def __radd__(self, other):
        return tuple(_values(other) + builtins.list(self))

    def __mul__(self, n):
        return tuple(builtins.tuple.__mul__(self, n.value if isinstance(n, constexpr) else n))

    __rmul__ = __mul__

    def __eq__(self, other):
        try:
            return builtins.list(self) == _values(other)
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = builtins.tuple.__hash__

    def __repr__(self) -> str:
        return "(" + ", ".join(repr(x) for x in self) + ("," if len(self) == 1 else "") + ")"


def is_namedtuple_class(cls) -> bool:
    """Whether ``cls`` is a namedtuple class (``typing.NamedTuple`` or
    ``collections.namedtuple``): kernels may build one from kernel values, as in Triton."""
    return isinstance(cls, type) and issubclass(cls, builtins.tuple) and \
        hasattr(cls, "_fields") and hasattr(cls, "_make")
