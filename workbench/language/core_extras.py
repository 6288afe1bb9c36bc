"""The remaining public names of Triton 3.6's ``triton/language/core.py`` that kernels and
libraries written for Triton reach for: ``extern_elementwise``/``extern``/``dispatch`` (calls
of external device functions by symbol), ``builtin_max``/``builtin_min`` (what ``max`` and
``min`` of Python become in a kernel), ``is_negative_zero``, ``check_bit_width``,
``binary_op_type_legalization``, ``CONSTEXPR_0`` and the descriptor base classes."""
from __future__ import annotations

import math
import warnings

from .core import LanguageError, builtin, constexpr, tensor
from .descriptors import tensor_descriptor, tensor_descriptor_type
from .semantic import unwrap

#: Triton's ``constexpr(0)``, the default of ``descending`` in ``tl.sort``
CONSTEXPR_0 = constexpr(0)
#: the base classes of a descriptor value and its type (Triton has host and device
#: descriptors below them; the workbench has one of each)
tensor_descriptor_base = tensor_descriptor
tensor_descriptor_base_type = tensor_descriptor_type


def is_negative_zero(x) -> bool:
    """Whether the Python float ``x`` is ``-0.0``."""
    return x == 0.0 and math.copysign(1.0, x) < 0


def check_bit_width(value, shift_value) -> None:
    """Warn (UserWarning, Triton's words) when a compile-time shift amount is at least the bit
    width of the tile's dtype: the result is undefined."""
    shift = unwrap(shift_value)
    if isinstance(value, tensor) and isinstance(shift, int):
        width = value.dtype.primitive_bitwidth
        if shift >= width:
            warnings.warn(f"Value {shift} exceeds the maximum bitwidth ({width}) for type "
                          f"'{value.dtype}'. This may result in undefined behavior.",
                          stacklevel=2)


def binary_op_type_legalization(lhs, rhs, semantic):
    """Both operands converted to their common type (Triton's promotion rules)."""
    return semantic.binary_checked(lhs, rhs)


def extern(fn):
    """Decorator for external functions: marks ``fn`` a builtin (it receives ``_semantic``)."""
    return builtin(fn)


def _minmax(which, args, propagate_nan, sem):
    args = [unwrap(a) for a in args]
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = list(args[0])
    if all(not isinstance(a, tensor) for a in args):
        return max(args) if which == "max" else min(args)
    out = args[0]
    for a in args[1:]:
        out = sem.minmax(which, out, a, bool(propagate_nan))
    return out


@builtin
def builtin_max(*args, propagate_nan=False, _semantic=None):
    """``max(a, b, ...)`` in a kernel: Python's on compile-time values, else the elementwise
    ``tl.maximum`` of all of them."""
    return _minmax("max", args, unwrap(propagate_nan), _semantic)


@builtin
def builtin_min(*args, propagate_nan=False, _semantic=None):
    """``min(a, b, ...)`` in a kernel (see :func:`builtin_max`)."""
    return _minmax("min", args, unwrap(propagate_nan), _semantic)


def dispatch(func, lib_name: str, lib_path: str, args: list, arg_type_symbol_dict: dict,
             ret_type, is_pure: bool, _semantic=None):
    """One ``tt.extern_elementwise`` of the symbol ``arg_type_symbol_dict`` names for the
    dtypes of ``args`` (tiles of one shape); ``ret_type`` is accepted for Triton's signature
    (the table gives the result dtype). Raises LanguageError for dtypes the table lacks."""
    sem = _semantic
    xs = [sem.to_tensor(unwrap(a)) for a in args]
    types = tuple(x.dtype for x in xs)
    entry = arg_type_symbol_dict.get(types)
    if entry is None:
        want = ", ".join(str(tuple(str(t) for t in k)) for k in arg_type_symbol_dict)
        raise LanguageError(f"input arg type does not match: {tuple(str(t) for t in types)}; "
                            f"the function takes {want}", "cast the arguments first")
    symbol, ret = entry
    shape = tuple(xs[0].shape)
    return sem._op("tt.extern_elementwise", xs, ret, shape,
                   {"symbol": symbol, "libname": lib_name, "libpath": lib_path,
                    "pure": bool(is_pure)})


@builtin
def extern_elementwise(lib_name: str, lib_path: str, args: list, arg_type_symbol_dict: dict,
                       is_pure: bool, _semantic=None):
    """Call an external elementwise device function, as Triton's ``extern_elementwise``:
    ``arg_type_symbol_dict`` maps a tuple of argument dtypes to ``(symbol, result dtype)``,
    e.g. ``{(tl.float32,): ("__nv_expf", tl.float32)}``. The arguments are broadcast to one
    shape (and promoted together when their dtypes are not in the table). The backends run
    the libdevice symbols they know; others are refused by name when lowered."""
    sem = _semantic
    xs = [sem.to_tensor(unwrap(a)) for a in unwrap(args)]
    table = {tuple(unwrap(t) for t in k): (unwrap(v[0]), unwrap(v[1]))
             for k, v in unwrap(arg_type_symbol_dict).items()}
    if tuple(x.dtype for x in xs) not in table and len(xs) > 1:
        ref = xs[0]
        for x in xs[1:]:
            ref, _ = sem.binary_checked(ref, x)
        xs = [sem.binary_checked(x, ref)[0] for x in xs]
    shape: tuple = ()
    for x in xs:
        shape = sem.broadcast_shapes(shape, tuple(x.shape))
    xs = [sem.broadcast_to_shape(x, shape) if shape else x for x in xs]
    return dispatch(None, unwrap(lib_name), unwrap(lib_path), xs, table, None,
                    bool(unwrap(is_pure)), _semantic=sem)


__all__ = ["CONSTEXPR_0", "tensor_descriptor_base", "tensor_descriptor_base_type",
           "is_negative_zero", "check_bit_width", "binary_op_type_legalization", "extern",
           "builtin_max", "builtin_min", "dispatch", "extern_elementwise"]
