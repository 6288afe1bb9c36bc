"""The values a kernel computes with: :class:`constexpr` (compile-time Python values) and
:class:`tensor` (an IR value with a dtype and a shape), plus the :func:`builtin` marker.

Python operators on tensors build IR through the tensor's :class:`~workbench.language.semantic.
Semantic` (held by the tensor, no global state). Operators on constexprs compute in Python with
Python semantics (``-7 // 2 == -4``), as Triton does (Triton's ``language/core.py``, ``constexpr``).
"""
from __future__ import annotations

import functools
import operator

from ..errors import CompilationError, CompileTimeAssertionFailure
from .dtypes import dtype
from .typesys import block_type


class LanguageError(Exception):
    """A user error found by the language rules (bad types, shapes, arguments).

    The frontend turns it into a :class:`workbench.errors.CompilationError` pointing at the
    expression being compiled. ``hint`` says what to do."""

    #: the CompilationError subclass the frontend raises for it
    error_class: type = CompilationError

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint


class StaticAssertFailure(LanguageError):
    """A ``tl.static_assert`` that failed; raised to the user as
    :class:`workbench.errors.CompileTimeAssertionFailure`."""

    error_class = CompileTimeAssertionFailure


def builtin(fn):
    """Mark ``fn`` as a tl builtin: the frontend calls it with ``_semantic=`` the compile's
    Semantic. Calling it outside a kernel raises a clear error."""

    @functools.wraps(fn)
    def wrapper(*args, _semantic=None, **kwargs):
        if _semantic is None:
            raise RuntimeError(f"tl.{fn.__name__} can only be called inside a @jit kernel")
        return fn(*args, _semantic=_semantic, **kwargs)

    wrapper.__workbench_builtin__ = True
    return wrapper


class PyScalar:
    """A Python scalar operand already given the dtype an operation needs (e.g. the ``0`` of
    ``x != 0``); it becomes a constant once the shape it must take is known.

    ``value``: the Python number; ``dtype``: its dtype; ``shape``: always ``()``."""

    def __init__(self, value, d: dtype):
        self.value, self.dtype, self.shape = value, d, ()


def _binop(op):
    def f(self, other):
        return constexpr(op(self.value, _unwrap(other)))

    def rf(self, other):
        return constexpr(op(_unwrap(other), self.value))
    return f, rf


def _unwrap(v):
    return v.value if isinstance(v, constexpr) else v


class const:
    """Annotation of a pointer parameter nothing is stored through (``x_ptr: tl.const``):
    its pointers are const (:meth:`pointer_type.is_const`), and ``tl.store`` or an atomic
    through one is a CompilationError ("Cannot store to a constant pointer"), as in Triton
    (``language/core.py``). A value of a const pointer type and one of the plain type are
    different types (branches and helper returns must agree)."""

    __workbench_const_type__ = True


class constexpr:
    """A compile-time value. Use as a parameter annotation (``BLOCK: tl.constexpr``) or as a
    wrapper for globals (``N = tl.constexpr(128)``). Arithmetic happens in Python."""

    # Lets the frontend recognise the annotation without importing the language.
    __workbench_constexpr_type__ = True

    def __init__(self, value):
        self.value = _unwrap(value)

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    @property
    def type(self):
        """The :class:`constexpr_type` of this value."""
        return constexpr_type(self.value)

    def __index__(self):
        return operator.index(self.value)

    def __bool__(self):
        return bool(self.value)

    def __int__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)

    def __hash__(self):
        return hash(self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)

    __add__, __radd__ = _binop(operator.add)
    __sub__, __rsub__ = _binop(operator.sub)
    __mul__, __rmul__ = _binop(operator.mul)
    __truediv__, __rtruediv__ = _binop(operator.truediv)
    __floordiv__, __rfloordiv__ = _binop(operator.floordiv)
    __mod__, __rmod__ = _binop(operator.mod)
    __pow__, __rpow__ = _binop(operator.pow)
    __and__, __rand__ = _binop(operator.and_)
    __or__, __ror__ = _binop(operator.or_)
    __xor__, __rxor__ = _binop(operator.xor)
    __lshift__, __rlshift__ = _binop(operator.lshift)
    __rshift__, __rrshift__ = _binop(operator.rshift)
    __eq__ = _binop(operator.eq)[0]
    __ne__ = _binop(operator.ne)[0]
    __lt__ = _binop(operator.lt)[0]
    __le__ = _binop(operator.le)[0]
    __gt__, __rgt__ = _binop(operator.gt)
    __ge__, __rge__ = _binop(operator.ge)
    __rlt__, __rle__ = _binop(operator.lt)[1], _binop(operator.le)[1]

    def logical_and(self, other):
        """Python's ``and`` of the two values (Triton's ``constexpr.logical_and``)."""
        return constexpr(self.value and _unwrap(other))

    def logical_or(self, other):
        """Python's ``or`` of the two values."""
        return constexpr(self.value or _unwrap(other))

    def __not__(self):
        return constexpr(not self.value)

    def __getitem__(self, index):
        """Index the wrapped value (a tuple, list or string); constexpr indices unwrapped."""
        if isinstance(index, tuple):
            index = tuple(_unwrap(i) for i in index)
        return self.value[_unwrap(index)]

    def __iter__(self):
        return iter(self.value)

    def __neg__(self):
        return constexpr(-self.value)

    def __pos__(self):
        return constexpr(+self.value)

    def __invert__(self):
        return constexpr(~self.value)


def _tensor_binary(name: str, reverse: bool = False):
    """The Python operator method of a tensor for the language's binary op ``name``
    (``reverse``: the reflected ``__radd__`` form)."""
    def f(self, other):
        a, b = (other, self) if reverse else (self, other)
        return self._sem.binary(name, a, b)
    f.__name__ = name
    return f


class Shape(tuple):
    """A tile's shape: a tuple of ints that also compares equal to a list of the same ints
    (Triton's shapes are lists, so ``t.shape == [1, N]`` holds inside ``tl.static_assert``)."""

    def __eq__(self, other):
        if isinstance(other, list):
            other = tuple(other)
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = tuple.__hash__


class tensor:
    """An IR value in a kernel: ``handle`` (an IR Value), ``dtype`` (a scalar dtype or
    pointer_type), ``shape`` (tuple of ints; ``()`` for a scalar). Operators build IR through
    ``sem`` (the compile's Semantic)."""

    def __init__(self, handle, dtype_: dtype, shape=(), sem=None):
        self.handle = handle
        self.dtype = dtype_
        self.shape = Shape(int(s) for s in shape)
        self._sem = sem

    @property
    def type(self):
        """The dtype of a scalar; for a tile its :class:`~workbench.language.typesys.block_type`
        (element dtype and shape), as in Triton."""
        return block_type(self.dtype, self.shape) if self.shape else self.dtype

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def is_block(self) -> bool:
        return bool(self.shape)

    def __repr__(self) -> str:
        shp = "[" + ", ".join(str(s) for s in self.shape) + "]" if self.shape else ""
        return f"tensor<{self.dtype}{shp}>" if not shp else f"tensor<{shp}, {self.dtype}>"

    __hash__ = object.__hash__

    def __bool__(self):
        raise LanguageError("the truth value of a tensor is only known when the kernel runs",
                            "use tl.where(...) or an `if` on a scalar, not a Python bool")

    # arithmetic --------------------------------------------------------------------------
    __add__, __radd__ = _tensor_binary("add"), _tensor_binary("add", True)
    __sub__, __rsub__ = _tensor_binary("sub"), _tensor_binary("sub", True)
    __mul__, __rmul__ = _tensor_binary("mul"), _tensor_binary("mul", True)
    __truediv__, __rtruediv__ = _tensor_binary("truediv"), _tensor_binary("truediv", True)
    __floordiv__, __rfloordiv__ = _tensor_binary("floordiv"), _tensor_binary("floordiv", True)
    __mod__, __rmod__ = _tensor_binary("mod"), _tensor_binary("mod", True)
    __and__, __rand__ = _tensor_binary("and"), _tensor_binary("and", True)
    __or__, __ror__ = _tensor_binary("or"), _tensor_binary("or", True)
    __xor__, __rxor__ = _tensor_binary("xor"), _tensor_binary("xor", True)
    __lshift__, __rlshift__ = _tensor_binary("lshift"), _tensor_binary("lshift", True)
    __rshift__, __rrshift__ = _tensor_binary("rshift"), _tensor_binary("rshift", True)
    __lt__, __le__ = _tensor_binary("lt"), _tensor_binary("le")
    __gt__, __ge__ = _tensor_binary("gt"), _tensor_binary("ge")
    __eq__, __ne__ = _tensor_binary("eq"), _tensor_binary("ne")

    def __neg__(self):
        return self._sem.minus(self)

    def __pos__(self):
        return self

    def __invert__(self):
        return self._sem.invert(self)

    def __getitem__(self, slices):
        return self._sem.subscript(self, slices)

    # methods -----------------------------------------------------------------------------
    def to(self, dtype, fp_downcast_rounding=None, bitcast=False):
        """Cast to ``dtype`` (Triton's ``language/semantic.py``, ``cast``); ``bitcast=True``
        reinterprets bits."""
        dtype = _unwrap(dtype)
        if _unwrap(bitcast):
            return self._sem.bitcast(self, dtype)
        return self._sem.cast(self, dtype, _unwrap(fp_downcast_rounding))

    def logical_and(self, other):
        return self._sem.logical("and", self, other)

    def logical_or(self, other):
        return self._sem.logical("or", self, other)

    def __workbench_method__(self):  # marker: methods of tensors may be called in kernels
        return True


TENSOR_METHODS = {"to", "logical_and", "logical_or"}


class jit_helper:
    """A function of the language written in the language (``tl.rand``, ``tl.philox``...):
    the frontend inlines it like a ``@workbench.jit`` helper (``__workbench_jit__``), so every
    backend runs it as ordinary ops. Calling it outside a kernel raises."""

    __workbench_jit__ = True

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._src = None

    @property
    def src(self):
        """The function's :class:`~workbench.frontend.source.KernelSource` (parsed once)."""
        if self._src is None:
            from ..frontend.source import KernelSource
            self._src = KernelSource.from_function(self.fn)
        return self._src

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"tl.{self.fn.__name__} can only be called inside a @jit kernel")

    def __repr__(self) -> str:
        return f"<tl.{self.fn.__name__} (language helper)>"


def _aggregate(cls):
    """Triton's ``tl.core._aggregate``: a class of kernel values (annotated fields) with
    ``@jit`` and builtin-style methods, usable inside kernels; see
    :mod:`workbench.language.aggregates`."""
    from .aggregates import make_aggregate
    return make_aggregate(cls, tensor, constexpr)


class constexpr_type:
    """The type of a compile-time value (``tl.constexpr_type(4)``): what ``.type`` gives for
    a constexpr element of a tuple, as in Triton. Two are equal when their values are."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __eq__(self, other):
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self):
        return hash(("constexpr_type", repr(self.value)))

    def __repr__(self) -> str:
        return f"constexpr_type[{self.value!r}]"

    __str__ = __repr__


def __getattr__(name: str):
    """``tl.core.<name>``: Triton's ``triton.language.core`` also holds the builtins and
    dtypes (``tl.core.float32``, ``tl.core.dot``); here they live in other modules of this
    package, and are reachable from this one too. AttributeError for anything else."""
    import importlib
    package = importlib.import_module(__package__)
    if not name.startswith("_") and name in vars(package):
        return vars(package)[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
