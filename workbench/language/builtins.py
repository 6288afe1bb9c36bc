"""The tl builtins (Triton 3.6 names and signatures, ``triton/language/core.py``).

Each is marked with :func:`~workbench.language.core.builtin`; the frontend calls it with
``_semantic=`` (the compile's :class:`~workbench.language.semantic.Semantic`). Arguments are
tensors, constexprs or Python values. Type, shape and promotion rules come from ``semantic``.
"""
from __future__ import annotations

import warnings

from . import blockptr
from . import dtypes as dt
from .core import LanguageError, PyScalar, builtin, tensor
from .semantic import ir_type, is_py_scalar, unwrap, validate_block_shape

_LOAD_CACHE = {"": None, ".ca": "ca", ".cg": "cg", ".cv": "cv", ".cs": "cs"}
_STORE_CACHE = {"": None, ".wb": "wb", ".cg": "cg", ".cs": "cs", ".wt": "wt"}
_EVICT = {"": None, "evict_normal": None, "evict_first": "evict_first",
          "evict_last": "evict_last"}


def _axis(axis, what="axis") -> int:
    axis = unwrap(axis)
    if isinstance(axis, tensor) or not isinstance(axis, int) or isinstance(axis, bool):
        raise LanguageError(f"{what} must be a compile-time int, got {axis!r}")
    return axis


# program ids and ranges ------------------------------------------------------------------------
@builtin
def program_id(axis, _semantic=None):
    """The program id along ``axis`` (0, 1 or 2): an int32 scalar (``tt.get_program_id``)."""
    axis = _axis(axis)
    if axis not in (0, 1, 2):
        raise LanguageError(f"program_id axis must be 0, 1, or 2 but got {axis}")
    op = _semantic.builder.create("tt.get_program_id", [], [dt.int32.to_ir()], {"axis": axis})
    return _semantic.wrap(op.result, dt.int32)


@builtin
def num_programs(axis, _semantic=None):
    """The grid size along ``axis`` (0, 1 or 2): an int32 scalar (``tt.get_num_programs``)."""
    axis = _axis(axis)
    if axis not in (0, 1, 2):
        raise LanguageError(f"num_programs axis must be 0, 1, or 2 but got {axis}")
    op = _semantic.builder.create("tt.get_num_programs", [], [dt.int32.to_ir()], {"axis": axis})
    return _semantic.wrap(op.result, dt.int32)


@builtin
def arange(start, end, _semantic=None):
    """int32 tile ``[start, end)``; ``end - start`` a power of two <= 2**20 (Triton's
    ``language/semantic.py``).

    Raises LanguageError for non-constexpr bounds, ``end <= start`` or a bad length."""
    start, end = unwrap(start), unwrap(end)
    for v in (start, end):
        if isinstance(v, tensor) or not isinstance(v, int) or isinstance(v, bool):
            raise LanguageError("arange's arguments must be compile-time ints (tl.constexpr), "
                                f"got {v!r}",
                                "pass the bound as a tl.constexpr parameter (BLOCK: tl.constexpr)")
        if not 0 <= v < 2**31:  # Triton refuses negative bounds with these words too
            raise LanguageError(f"arange must fit in int32, got bound {v}",
                                "arange's bounds are between 0 and 2**31 - 1")
    if end <= start:
        raise LanguageError(f"arange's end ({end}) must be greater than its start ({start})")
    n = end - start
    if n & (n - 1):
        raise LanguageError("arange's range must be a power of 2",  # Triton's words
                            f"it is {n} (= {end} - {start}); use tl.arange(0, "
                            f"{1 << n.bit_length()}) and mask the tail with offs < n")
    validate_block_shape((n,))
    op = _semantic.builder.create("tt.make_range", [], [ir_type(dt.int32, (n,))],
                                  {"start": start, "end": end})
    return _semantic.wrap(op.result, dt.int32, (n,))


def _shape_arg(shape):
    shape = unwrap(shape)
    if isinstance(shape, (int, tensor)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise LanguageError(f"shape must be a tuple or list of compile-time ints, got {shape!r}")
    return validate_block_shape(tuple(shape))


@builtin
def full(shape, value, dtype, _semantic=None):
    """A tile of ``shape`` filled with ``value`` as ``dtype`` (``shape=()`` gives a scalar)."""
    shape, dtype, value = _shape_arg(shape), unwrap(dtype), unwrap(value)
    if not isinstance(dtype, dt.dtype):
        raise LanguageError(f"full needs a dtype, got {dtype!r}")
    if isinstance(value, tensor):
        if value.numel != 1:
            raise LanguageError("full's value must be a scalar")
        return _semantic.broadcast_to_shape(_semantic.cast(value, dtype), shape)
    return _semantic.constant(value, dtype, shape)


@builtin
def zeros(shape, dtype, _semantic=None):
    """A tile of zeros of ``shape`` and ``dtype``."""
    return full(shape, 0, dtype, _semantic=_semantic)


@builtin
def zeros_like(input, _semantic=None):
    """Zeros with the shape and dtype of ``input``."""
    input = _semantic.to_tensor(input)
    return full(input.shape, 0, input.dtype, _semantic=_semantic)


# memory --------------------------------------------------------------------------------------
def _ptr_arg(pointer, sem, what):
    pointer = sem.to_tensor(unwrap(pointer))
    if not pointer.dtype.is_ptr():
        raise LanguageError(f"unsupported pointer type {pointer.dtype!r} in tl.{what}",
                            f"tl.{what} needs a pointer (or a tile of pointers) as its first "
                            "argument")
    return pointer


def _mem_attrs(cache, evict, table):
    cache, evict = unwrap(cache) or "", unwrap(evict) or ""
    for what, v in (("cache_modifier", cache), ("eviction_policy", evict)):
        if not isinstance(v, str):
            raise LanguageError(f"{what} must be a compile-time string, got {v!r}")
    if not cache.startswith(".") and cache:
        cache = "." + cache
    if cache not in table:
        raise LanguageError(f"unknown cache modifier {cache!r}",
                            f"use one of {', '.join(repr(k) for k in table)}")
    if evict not in _EVICT:
        raise LanguageError(f"unknown eviction policy {evict!r}",
                            "use 'evict_normal', 'evict_first' or 'evict_last'")
    attrs = {}
    if table[cache]:
        attrs["cache"] = table[cache]
    if _EVICT[evict]:
        attrs["evict"] = _EVICT[evict]
    return attrs


def _mask_arg(mask, pointer, sem):
    if mask is None:
        return None
    mask = sem.to_tensor(mask)
    if not mask.dtype.is_bool():
        raise LanguageError(f"mask must have boolean scalar type, got {mask.dtype}",
                            "build it from a comparison, e.g. mask = offs < n")
    if not pointer.shape and mask.shape:
        raise LanguageError("mask cannot be a tile when the pointer is a scalar")
    return sem.broadcast_to_shape(mask, pointer.shape)


@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="",
         cache_modifier="", eviction_policy="", volatile=False, _semantic=None):
    """Load the elements ``pointer`` points at (``tt.load``). ``mask`` (bool, broadcast to the
    pointer's shape) disables lanes, which read ``other`` (cast to the element type) or an
    undefined value. Raises LanguageError for ``other`` without ``mask``."""
    sem = _semantic
    mask, other = unwrap(mask), unwrap(other)
    if isinstance(unwrap(pointer), blockptr.block_pointer):
        bp = unwrap(pointer)
        blockptr.check_access(mask, other, "loading")
        ptrs, mask = blockptr.expand(bp, boundary_check, sem)
        other = blockptr.padding(bp, padding_option)  # checked even when nothing is masked
        other = other if mask is not None else None
        return load(ptrs, mask, other, cache_modifier=cache_modifier,
                    eviction_policy=eviction_policy, volatile=volatile, _semantic=sem)
    pointer = _ptr_arg(pointer, sem, "load")
    if mask is None and other is not None:
        raise LanguageError("`other` cannot be provided without `mask`",
                            "pass mask=... too, or drop other=")
    if unwrap(boundary_check) or unwrap(padding_option):
        raise LanguageError("boundary_check and padding_option only apply to block pointers",
                            "use mask= and other= with a tile of pointers")
    attrs = _mem_attrs(cache_modifier, eviction_policy, _LOAD_CACHE)
    if unwrap(volatile):
        attrs["isVolatile"] = True
    mask = _mask_arg(mask, pointer, sem)
    elt = pointer.dtype.element_ty
    is_bool = elt.is_bool()
    if is_bool:
        elt = dt.int8
        pointer = sem.cast(pointer, dt.pointer_type(dt.int8))
    operands = [pointer] + ([mask] if mask is not None else [])
    if other is not None:
        if isinstance(other, tensor):
            if not pointer.shape and other.shape:
                raise LanguageError("other cannot be a tile when the pointer is a scalar")
            other = sem.broadcast_to_shape(sem.cast(other, elt), pointer.shape)
        else:
            other = sem.broadcast_to_shape(PyScalar(other, elt), pointer.shape)
        operands.append(other)
    op = sem.builder.create("tt.load", [o.handle for o in operands],
                            [ir_type(elt, pointer.shape)], attrs)
    ret = sem.wrap(op.result, elt, pointer.shape)
    return sem.cast(ret, dt.int1) if is_bool else ret


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy="",
          _semantic=None):
    """Store ``value`` (broadcast to the pointer's shape, cast to the element type) where
    ``mask`` is true (``tt.store``)."""
    sem = _semantic
    if isinstance(unwrap(pointer), blockptr.block_pointer):
        bp = unwrap(pointer)
        blockptr.check_access(mask, None, "storing")
        value = sem.to_tensor(unwrap(value))
        if value.dtype != bp.element_ty:
            raise LanguageError(f"block element type ({bp.element_ty}) and value element "
                                f"type ({value.dtype}) mismatch",
                                f"cast the value first: value.to(tl.{bp.element_ty.name})")
        if value.shape and value.shape != tuple(bp.block_shape):
            raise LanguageError(f"Block shape({list(bp.block_shape)}) and value "
                                f"shape({list(value.shape)}) mismatch",
                                "store a tile of the block's shape (a scalar is splat)")
        value = sem.broadcast_to_shape(value, bp.block_shape)
        ptrs, mask = blockptr.expand(bp, boundary_check, sem)
        return store(ptrs, value, mask, cache_modifier=cache_modifier,
                     eviction_policy=eviction_policy, _semantic=sem)
    pointer = _ptr_arg(pointer, sem, "store")
    if pointer.dtype.is_const():
        raise LanguageError("Cannot store to a constant pointer",  # Triton's words
                            "the pointer comes from a parameter annotated tl.const; store "
                            "through another one")
    value, mask = unwrap(value), unwrap(mask)
    if unwrap(boundary_check):
        raise LanguageError("boundary_check only applies to block pointers")
    attrs = _mem_attrs(cache_modifier, eviction_policy, _STORE_CACHE)
    elt = pointer.dtype.element_ty
    if elt.is_bool():
        elt = dt.int8
        pointer = sem.cast(pointer, dt.pointer_type(dt.int8))
    if isinstance(value, tensor):
        if not pointer.shape and value.shape:
            raise LanguageError("value cannot be a tile when the pointer is a scalar")
        value = sem.broadcast_to_shape(sem.cast(value, elt), pointer.shape)
    elif is_py_scalar(value):
        value = sem.broadcast_to_shape(PyScalar(value, elt), pointer.shape)
    else:
        raise LanguageError(f"cannot store {value!r}")
    mask = _mask_arg(mask, pointer, sem)
    operands = [pointer, value] + ([mask] if mask is not None else [])
    sem.builder.create("tt.store", [o.handle for o in operands], [], attrs)


# elementwise ----------------------------------------------------------------------------------
@builtin
def where(condition, x, y, _semantic=None):
    """``x`` where ``condition`` else ``y`` (``arith.select``); x, y promoted and broadcast.
    A condition that is not boolean is cast to it, with Triton's deprecation warning
    (``language/semantic.py``, ``where``)."""
    cond = _semantic.to_tensor(unwrap(condition))
    if not cond.dtype.is_bool():
        warnings.warn("tl.where with a non-boolean condition is deprecated and will error "
                      f"out in a future triton release. Got {cond.dtype.name}", UserWarning,
                      stacklevel=2)
    return _semantic.where(cond, unwrap(x), unwrap(y))


class PropagateNan:
    """NaN behaviour of minimum/maximum: NONE (ignore NaN, default) or ALL (propagate)."""
    NONE = 0
    ALL = 0xFFFF


def propagates_nan(propagate_nan) -> bool:
    """True for ``PropagateNan.ALL``, False for ``NONE``; anything else raises LanguageError
    with Triton's words (``language/semantic.py``)."""
    p = unwrap(propagate_nan)
    if p == PropagateNan.ALL:
        return True
    if p == PropagateNan.NONE:
        return False
    raise LanguageError(f"Unexpected propagate_nan {p!r}",
                        "use tl.PropagateNan.NONE or tl.PropagateNan.ALL")


def minmax_operands(sem, *values):
    """Each value as a tensor (Python numbers typed by ``to_tensor``), bf16 cast to fp32: the
    operands of minimum, maximum and clamp before promotion (Triton's ``language/core.py``,
    ``_promote_bfloat16_to_float32``: the hardware has no bf16 min/max)."""
    out = []
    for v in values:
        t = sem.to_tensor(unwrap(v))
        out.append(sem.cast(t, dt.float32) if t.dtype == dt.bfloat16 else t)
    return out


@builtin
def minimum(x, y, propagate_nan=PropagateNan.NONE, _semantic=None):
    """Elementwise minimum (``arith.minnumf`` / ``minsi`` / ``minui``). A Python number first
    becomes a tensor (int32/uint32/int64/uint64, fp32/fp64) and bf16 becomes fp32, then the
    usual promotion applies, so ``minimum(int8_tile, -2)`` is int32 (Triton's
    ``language/core.py``)."""
    x, y = minmax_operands(_semantic, x, y)
    return _semantic.minmax("min", x, y, propagates_nan(propagate_nan))


@builtin
def maximum(x, y, propagate_nan=PropagateNan.NONE, _semantic=None):
    """Elementwise maximum (``arith.maxnumf`` / ``maxsi`` / ``maxui``); operands typed as in
    :func:`minimum`, so ``maximum(fp16_tile, 0.5)`` is fp32."""
    x, y = minmax_operands(_semantic, x, y)
    return _semantic.minmax("max", x, y, propagates_nan(propagate_nan))


def _fp_only(x, sem):
    x = sem.to_tensor(unwrap(x))
    if x.dtype not in (dt.float32, dt.float64):
        raise LanguageError(f"Expected dtype ['fp32', 'fp64'] but got {x.dtype}",
                            "cast first, e.g. x.to(tl.float32)")
    return x


def _unary_math(name, doc):
    @builtin
    def f(x, _semantic=None):
        x = _fp_only(x, _semantic)
        return _semantic._op("math." + name, [x], x.dtype, x.shape)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"{doc} (``math.{name}``); fp32/fp64 only, other dtypes raise (Triton's "
                 "``language/math.py``).")
    return f


exp = _unary_math("exp", "e**x")
exp2 = _unary_math("exp2", "2**x")
log = _unary_math("log", "natural logarithm")
log2 = _unary_math("log2", "base-2 logarithm")
sqrt = _unary_math("sqrt", "square root (approximate on NVIDIA)")
rsqrt = _unary_math("rsqrt", "1/sqrt(x)")
sin = _unary_math("sin", "sine")
cos = _unary_math("cos", "cosine")
erf = _unary_math("erf", "error function")
floor = _unary_math("floor", "round down")
ceil = _unary_math("ceil", "round up")


@builtin
def abs(x, _semantic=None):  # noqa: A001 (Triton's name)
    """|x|: ``math.absf`` for floats, ``math.absi`` for signed ints, identity for unsigned;
    8-bit floats clear the sign bit of their bits (Triton does so for float8e4b15; the fnuz
    formats keep 0x80, their NaN)."""
    x = _semantic.to_tensor(unwrap(x))
    if x.dtype.is_fp8():
        return _semantic.fp8_abs(x)
    if x.dtype.is_floating():
        return _semantic._op("math.absf", [x], x.dtype, x.shape)
    if x.dtype.is_int_signed():
        return _semantic._op("math.absi", [x], x.dtype, x.shape)
    if x.dtype.is_int_unsigned():
        return x
    raise LanguageError(f"abs is not defined for {x.dtype!r}")


@builtin
def sigmoid(x, _semantic=None):
    """1 / (1 + exp(-x)); fp32/fp64 only (Triton's JIT helper)."""
    x = _fp_only(x, _semantic)
    return _semantic.truediv(1.0, _semantic.add(1.0, exp(_semantic.minus(x), _semantic=_semantic)))


@builtin
def fma(x, y, z, _semantic=None):
    """x * y + z with one rounding (``math.fma``), ternary promotion. Raises LanguageError
    for integer operands (``math.fma`` is for floats only)."""
    sem = _semantic
    x, y = sem.binary_checked(unwrap(x), unwrap(y))
    x, z = sem.binary_checked(x, unwrap(z))
    x, y = sem.binary_checked(x, y)
    if not x.dtype.is_floating():
        raise LanguageError(f"fma only supports floating point operands, got {x.dtype}",
                            "use x * y + z for integers")
    return sem._op("math.fma", [x, y, z], x.dtype, x.shape)


@builtin
def cdiv(x, div, _semantic=None):
    """ceil(x / div) = (x + div - 1) // div; Python semantics when both are compile-time."""
    x, div = unwrap(x), unwrap(div)
    if not isinstance(x, tensor) and not isinstance(div, tensor):
        return (x + div - 1) // div
    return _semantic.floordiv(_semantic.sub(_semantic.add(x, div), 1), div)


@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False, _semantic=None):
    """``input`` converted to ``dtype`` (Triton's ``language/semantic.py``, ``cast``);
    ``bitcast=True`` reinterprets."""
    if unwrap(bitcast):
        return _semantic.bitcast(unwrap(input), unwrap(dtype))
    return _semantic.cast(unwrap(input), unwrap(dtype), unwrap(fp_downcast_rounding))
