"""Aggregate classes (Triton's ``tl.core._aggregate``): user classes whose annotated fields
hold kernel values (tensors, compile-time values, tuples, other aggregates) and whose
methods run inside kernels.

``@_aggregate`` turns the class into a value class, as Triton's ``core._aggregate`` does
(``triton/language/core.py``): constructing it runs the user's ``__init__`` (passing
``_semantic`` when it asks for it), every annotated field must be set, setting a name that is
not a field is an AttributeError and a value of the wrong kind a TypeError. Its methods are
copied over; a ``@jit`` method read from an instance is bound to it (the frontend inlines it
with the instance as ``self``). Instances are immutable inside kernels: the frontend refuses
``agg.field = v`` at the line. For loop-carried values and runtime ``if`` results the class
offers ``_flatten``/``_unflatten``/``_structure`` (see ``workbench/frontend/carry.py``).
"""
from __future__ import annotations

import builtins
import inspect
from typing import Any


class _Kinds:
    """The language's ``tensor`` and ``constexpr`` classes, handed over by
    ``core._aggregate`` (this module imports nothing from the language, so that ``core``
    can reach it without an import cycle)."""

    tensor: type = type(None)
    constexpr: type = type(None)


def _is_tensor(v) -> bool:
    return isinstance(v, _Kinds.tensor)


def _is_const_box(v) -> bool:
    return isinstance(v, _Kinds.constexpr)


def _plain(v):
    return v.value if _is_const_box(v) else v


class BoundJitMethod:
    """A ``@jit`` function read from an aggregate instance: ``__self__`` is the instance,
    ``__func__`` the function (called by the frontend with ``self`` first)."""

    __workbench_bound_jit__ = True

    def __init__(self, obj, fn):
        self.__self__ = obj
        self.__func__ = fn
        self._must_use_result = getattr(fn, "_must_use_result", False)

    def __repr__(self) -> str:
        return f"<bound @jit method {getattr(self.__func__, '__name__', '?')} of " \
               f"{type(self.__self__).__name__}>"


class JitMember:
    """Descriptor holding a ``@jit`` method: the function itself on the class (for
    ``Cls.fn()``), a :class:`BoundJitMethod` on an instance."""

    def __init__(self, fn):
        self.fn = fn

    def __get__(self, obj, owner=None):
        return self.fn if obj is None else BoundJitMethod(obj, self.fn)


def is_aggregate(v) -> bool:
    """Whether ``v`` is an instance of an ``@_aggregate`` class."""
    return getattr(type(v), "__workbench_aggregate__", False) and not isinstance(v, type)


def _leaves(v) -> list:
    if _is_const_box(v):
        return []
    if _is_tensor(v):
        return [v]
    if hasattr(v, "_flatten"):
        return list(v._flatten())
    if isinstance(v, (builtins.tuple, list)):
        return [x for e in v for x in _leaves(e)]
    return []


def _rebuild(t, it):
    if _is_tensor(t):
        return next(it)
    if hasattr(t, "_flatten") and not _is_const_box(t):
        return t._unflatten([next(it) for _ in range(len(t._flatten()))])
    if isinstance(t, (builtins.tuple, list)):
        items = [_rebuild(e, it) for e in t]
        return type(t)._make(items) if hasattr(type(t), "_make") else type(t)(items)
    return t


def _kind(v):
    if _is_tensor(v):
        return ("tensor", v.dtype, v.shape)
    if hasattr(v, "_structure"):
        return v._structure()
    if isinstance(v, (builtins.tuple, list)):
        return (type(v).__name__, builtins.tuple(_kind(e) for e in v))
    v = _plain(v)
    return ("const", type(v).__name__, v if isinstance(v, (int, float, bool, str)) else id(v))


def _accepts(annotation, value) -> bool:
    """Whether a field annotated ``annotation`` may hold ``value`` (Triton checks
    ``isinstance``; a Python number for a tensor field is turned into a scalar tensor by
    the constructor, as Triton's assignments turn ``x = 11`` into one)."""
    if annotation is _Kinds.constexpr:
        return not _is_tensor(value) and not _leaves(value)
    if annotation is _Kinds.tensor and isinstance(value, (bool, int, float)):
        return True
    if isinstance(annotation, type) and issubclass(annotation, builtins.tuple):
        return isinstance(value, builtins.tuple)  # tl.tuple
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    return True


class AggregateType:
    """What ``agg.type`` gives (Triton's ``_aggregate_type``): the class and the fields'
    kinds; printed as ``Name<field kinds>``."""

    def __init__(self, cls: type, structure):
        self.base_cls = cls
        self.structure = structure

    def __eq__(self, other):
        return isinstance(other, AggregateType) and self.base_cls is other.base_cls and \
            self.structure == other.structure

    def __hash__(self):
        return hash((self.base_cls, repr(self.structure)))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}: {kind}" for name, kind in self.structure[1])
        return f"{self.base_cls.__qualname__}<{fields}>"


class AggregateBase:
    """What every aggregate value class shares (fields in ``_fields``, in declaration
    order)."""

    _fields: builtins.tuple = ()
    __workbench_aggregate__ = True

    def __setattr__(self, name, value):
        fields = type(self).__annotations_all__
        if name not in fields:
            raise AttributeError(f"{type(self).__name__} has no attribute '{name}'")
        value = _plain(value)
        if not _accepts(fields[name], value):
            raise TypeError(f"Expected {getattr(fields[name], '__name__', fields[name])} for "
                            f"attribute '{name}', got {type(value).__name__}")
        object.__setattr__(self, name, value)

    def _flatten(self) -> list:
        return [x for f in self._fields for x in _leaves(getattr(self, f))]

    def _unflatten(self, leaves: list):
        it = iter(leaves)
        out = object.__new__(type(self))
        for f in self._fields:
            object.__setattr__(out, f, _rebuild(getattr(self, f), it))
        return out

    def _structure(self):
        return (type(self).__qualname__,
                builtins.tuple((f, _kind(getattr(self, f))) for f in self._fields))

    @property
    def type(self) -> "AggregateType":
        """The aggregate's type: its class and its fields' kinds (dtype and shape of a tensor,
        value of a compile-time field); two are equal when both are."""
        return AggregateType(type(self), self._structure())

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f, '?')!r}" for f in self._fields)
        return f"{type(self).__name__}({inner})"


def _construct(cls, user_init, args, kwargs, _semantic):
    obj = object.__new__(cls)
    if user_init is not object.__init__:
        try:
            params = inspect.signature(user_init).parameters
        except (TypeError, ValueError):
            params = {}
        extra = {"_semantic": _semantic} if "_semantic" in params else {}
        user_init(obj, *[_plain(a) for a in args],
                  **extra, **kwargs)
    for name in cls._fields:
        if not hasattr(obj, name):
            raise AttributeError(f"constructor for {cls.__name__} did not initialize "
                                 f"attribute '{name}'")
        value = getattr(obj, name)
        if cls.__annotations_all__[name] is _Kinds.tensor and isinstance(value, (bool, int, float)):
            if _semantic is None:
                raise TypeError(f"attribute '{name}' of {cls.__name__} needs a tensor, not "
                                f"the Python {type(value).__name__} {value!r}")
            object.__setattr__(obj, name, _semantic.to_tensor(value))
    return obj


def make_aggregate(cls: type, tensor: type, constexpr: type) -> type:
    """The value class for the user class ``cls`` (see the module docstring); ``tensor`` and
    ``constexpr`` are the language's classes of those names."""
    _Kinds.tensor, _Kinds.constexpr = tensor, constexpr
    annotations = dict(cls.__dict__.get("__annotations__", {}))
    user_init = cls.__dict__.get("__init__", object.__init__)
    members: dict[str, Any] = {}
    for name, raw in cls.__dict__.items():
        if name in ("__init__", "__annotations__", "__dict__", "__weakref__", "__module__",
                    "__qualname__", "__doc__"):
            continue
        if getattr(raw, "__workbench_jit__", False):
            members[name] = JitMember(raw)
        elif isinstance(raw, staticmethod) and inspect.isfunction(raw.__func__):
            vars(raw.__func__)["__workbench_aggregate_static__"] = True  # run in Python
            members[name] = raw
        else:
            members[name] = raw

    def __new__(this_cls, *args, _semantic=None, **kwargs):
        return _construct(this_cls, user_init, args, kwargs, _semantic)

    members.update({
        "__new__": __new__,
        "__init__": lambda self, *a, **k: None,
        "_fields": builtins.tuple(annotations),
        "__annotations_all__": annotations,
        "__annotations__": annotations,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
        "__workbench_user_init__": user_init,
    })
    return type(cls.__name__, (AggregateBase,), members)
