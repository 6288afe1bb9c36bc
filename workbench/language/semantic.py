"""The language rules, in one place: type promotion, broadcasting, pointer arithmetic, casts and
shape checks (Triton 3.6: ``triton/language/semantic.py``,
``docs/python-api/triton-semantics.rst``).

:class:`Semantic` wraps a :class:`workbench.ir.builder.Builder`; every method takes and returns
:class:`~workbench.language.core.tensor` objects (Python numbers are accepted where Triton
accepts constexprs) and emits ttir ops at the builder's insertion point and location. User
errors raise :class:`~workbench.language.core.LanguageError`, which the frontend reports at the
expression being compiled.
"""
from __future__ import annotations

import math
import numbers

from ..ir import types as irt
from . import dtypes as dt
from .broadcasting import BroadcastRules
from .casts import CastRules
from .core import LanguageError, PyScalar, constexpr, tensor

MAX_NUMEL = 1 << 20  # TRITON_MAX_TENSOR_NUMEL (triton/language/core.py)
_ARITH = ("add", "sub", "mul", "truediv", "floordiv", "mod")
_BITWISE = {"and": "andi", "or": "ori", "xor": "xori", "lshift": "shli"}
_CMP = ("lt", "le", "gt", "ge", "eq", "ne")
_CMPF = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}


def unwrap(v):
    """A constexpr's Python value; anything else unchanged."""
    return v.value if isinstance(v, constexpr) else v


def is_py_scalar(v) -> bool:
    return isinstance(v, (numbers.Number, bool)) and not isinstance(v, tensor)


def type_of_py(x) -> dt.dtype:
    """The dtype Triton's ``to_tensor`` (``language/semantic.py``) gives a Python scalar."""
    if isinstance(x, bool):
        return dt.int1
    if isinstance(x, int):
        if -2**31 <= x < 2**31:
            return dt.int32
        if 0 <= x < 2**32:
            return dt.uint32
        if -2**63 <= x < 2**63:
            return dt.int64
        if 0 <= x < 2**64:
            return dt.uint64
        raise LanguageError(f"integer {x} does not fit in 64 bits")
    if isinstance(x, float):
        a = abs(x)
        if a == math.inf or a == 0.0 or x != x or 2.0**-126 <= a <= (2 - 2.0**-23) * 2.0**127:
            return dt.float32
        return dt.float64
    raise LanguageError(f"cannot use {x!r} of type {type(x).__name__} as a tensor value")


def ir_type(d: dt.dtype, shape=()) -> irt.Type:
    """The IR type of a value of dtype ``d`` and ``shape`` (``()`` = scalar)."""
    el = d.to_ir()
    return irt.TensorType(tuple(shape), el) if shape else el


def validate_block_shape(shape) -> tuple:
    """Every dim a power of two, numel <= 2**20 (Triton's ``TRITON_MAX_TENSOR_NUMEL``). Returns the
    shape as ints."""
    out = []
    numel = 1
    for i, d in enumerate(shape):
        d = unwrap(d)
        if isinstance(d, tensor) or not isinstance(d, int) or isinstance(d, bool):
            raise LanguageError(f"shape element {d!r} is not a compile-time int",
                                "shapes must be tl.constexpr values (e.g. a BLOCK: tl.constexpr "
                                "parameter)")
        if d < 1 or d & (d - 1):
            raise LanguageError(f"Shape element {i} must be a power of 2",  # Triton's words
                                f"the shape is {list(unwrap(s) for s in shape)}; pad the tile "
                                "to a power of two and mask the tail")
        numel *= d
        out.append(d)
    if numel > MAX_NUMEL:
        raise LanguageError(f"tile of {numel} elements exceeds the limit of {MAX_NUMEL}",
                            "use smaller blocks")
    return tuple(out)


def integer_promote(a: dt.dtype, b: dt.dtype) -> dt.dtype:
    """C's usual arithmetic conversions (Triton's ``triton-semantics.rst``): same signedness ->
    wider; mixed -> the unsigned type if at least as wide, else the signed type."""
    if a.is_int_signed() == b.is_int_signed():
        return a if a.int_bitwidth > b.int_bitwidth else b
    if a.is_int_unsigned():
        return a if a.int_bitwidth >= b.int_bitwidth else b
    return b if b.int_bitwidth >= a.int_bitwidth else a


def computation_type(a: dt.dtype, a_scalar: bool, b: dt.dtype, b_scalar: bool,
                     div_or_mod: bool) -> dt.dtype:
    """The dtype both operands are cast to before an arithmetic op (the table in Triton's
    ``triton-semantics.rst``)."""
    if a_scalar != b_scalar:
        s, t = (a, b) if a_scalar else (b, a)
        if s.kind() <= t.kind():
            if div_or_mod and t in (dt.float16, dt.bfloat16):
                return dt.float32
            return t
    if a.is_fp64() or b.is_fp64():
        return dt.float64
    if div_or_mod and (a.is_floating() or b.is_floating()):
        return dt.float32
    if a.is_fp32() or b.is_fp32():
        return dt.float32
    if a.is_fp16() or b.is_fp16():
        return dt.float16
    if a.is_bf16() and b.is_bf16():
        return dt.bfloat16
    if a.is_bf16() or b.is_bf16():
        return dt.float32
    if a.is_fp8() and b.is_fp8():
        return a if a == b else dt.float16
    if not (a.is_int() and b.is_int()):
        raise LanguageError(f"unexpected operand types {a} and {b}",
                            "convert 8-bit floats with .to(tl.float32) first")
    if div_or_mod and a.is_int_signed() != b.is_int_signed():
        raise LanguageError(f"Cannot use /, // or % with {a} and {b} because they have "
                            "different signedness; the result is undefined",
                            "cast one operand with .to(...) so both have the same signedness")
    return integer_promote(a, b)


def check_scalar_range(value, ret: dt.dtype) -> None:
    """Raise when a Python number cannot take the integer dtype ``ret`` of a binary op with a
    tensor: a negative number against an unsigned tensor, or a number outside ``ret``'s range
    (``uint8_tile + -1``, ``int8_tile + 300``), the checks of Triton's
    ``binary_op_type_checking_impl`` (``language/semantic.py``)."""
    if not ret.is_int() or ret.is_bool() or isinstance(value, float):
        return
    if value < 0 and ret.is_int_unsigned():
        raise LanguageError(f"cannot combine an unsigned {ret.name} tensor with the negative "
                            f"scalar {value}",
                            "cast one of them explicitly, e.g. x.to(tl.int32)")
    w = ret.int_bitwidth
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if ret.is_int_signed() else (0, (1 << w) - 1)
    if not lo <= value <= hi:
        raise LanguageError(f"scalar {value} is out of range for type {ret.name} "
                            f"([{lo}, {hi}])",
                            "cast the tensor to a wider type first, e.g. x.to(tl.int32)")


class Semantic(CastRules, BroadcastRules):
    """Builds typed ttir for the language's operations at ``builder``'s insertion point."""

    def __init__(self, builder, debug: bool = False):
        self.builder = builder
        self.debug = debug  # compile device_assert
        self.num_warps = 4  # the kernel's num_warps option (set by the frontend)
        self.quiet = False  # silence static_print (dry runs)
        self.call_jit = None  # set by the frontend: call_jit(fn, args) inlines a @jit function
        self.module = None  # set by the frontend: the module being generated
        #: an scf.for iter arg -> its value from before the loop (set by the frontend
        #: while it generates the body; hints land there as in Triton, see debug._hint)
        self.loop_entry: dict = {}

    # values --------------------------------------------------------------------------------
    def wrap(self, handle, d: dt.dtype, shape=()) -> tensor:
        return tensor(handle, d, shape, self)

    def _op(self, name, operands, d, shape, attrs=None) -> tensor:
        op = self.builder.create(name, [t.handle for t in operands], [ir_type(d, shape)], attrs)
        return self.wrap(op.result, d, shape)

    def constant(self, value, d: dt.dtype, shape=()) -> tensor:
        """``arith.constant`` of ``value`` cast to ``d`` (a splat ``dense<>`` for a shape)."""
        value = unwrap(value)
        if d.is_floating():
            v = float(value)
        elif d.is_bool():
            v = bool(value)
        elif d.is_int():
            if isinstance(value, float) and not math.isfinite(value):
                raise LanguageError(f"{value!r} cannot be represented as {d}",
                                    "use a finite value, or a floating point dtype")
            w = d.int_bitwidth
            v = int(value) & ((1 << w) - 1)
            v = v - (1 << w) if v >= 1 << (w - 1) else v  # signless IR: two's complement
        else:
            raise LanguageError(f"cannot make a constant of type {d}")
        op = self.builder.create("arith.constant", [], [ir_type(d, shape)], {"value": v})
        return self.wrap(op.result, d, shape)

    def to_tensor(self, x) -> tensor:
        """A tensor for a tensor or a Python scalar (typed as ``to_tensor`` does)."""
        x = unwrap(x)
        if isinstance(x, tensor):
            return x
        if isinstance(x, PyScalar):
            return self.constant(x.value, x.dtype)
        return self.constant(x, type_of_py(x))

    # type checking -----------------------------------------------------------------------
    def _check_ptr(self, a: dt.dtype, b: dt.dtype, allow: bool) -> None:
        if a.is_ptr():
            if not allow or (b.is_ptr() and a != b) or b.is_floating():
                hint = ("pointer offsets must be integers: make the offsets an integer tile "
                        "(e.g. .to(tl.int32)) where they are computed") if \
                    allow and b.is_floating() else None
                raise LanguageError(f"invalid operands of type {a!r} and {b!r}", hint)

    def binary_checked(self, a, b, allow_lhs_ptr=False, allow_rhs_ptr=False,
                       arithmetic=True, div_or_mod=False):
        """Promote (Triton's ``triton-semantics.rst``) then broadcast two operands; returns two
        tensors."""
        a, b = unwrap(a), unwrap(b)
        a_py, b_py = is_py_scalar(a), is_py_scalar(b)
        if a_py and b_py:
            a = self.to_tensor(a)
            a_py = False
        if not isinstance(a, (tensor, PyScalar)) and not a_py:
            raise LanguageError(f"cannot use {a!r} as an operand")
        if not isinstance(b, (tensor, PyScalar)) and not b_py:
            raise LanguageError(f"cannot use {b!r} as an operand")
        ad = type_of_py(a) if a_py else a.dtype
        bd = type_of_py(b) if b_py else b.dtype
        self._check_ptr(ad, bd, allow_lhs_ptr)
        self._check_ptr(bd, ad, allow_rhs_ptr)
        if arithmetic and not ad.is_ptr() and not bd.is_ptr():
            ret = computation_type(ad, a_py, bd, b_py, div_or_mod)
            for v, is_py in ((a, a_py), (b, b_py)):
                if is_py:
                    check_scalar_range(v, ret)
            a = PyScalar(a, ret) if a_py else self._cast_any(a, ret)
            b = PyScalar(b, ret) if b_py else self._cast_any(b, ret)
        else:
            a = PyScalar(a, ad) if a_py else a
            b = PyScalar(b, bd) if b_py else b
        return self.broadcast_values(a, b)

    def _cast_any(self, v, d):
        return PyScalar(v.value, d) if isinstance(v, PyScalar) else self.cast(v, d)

    # arithmetic --------------------------------------------------------------------------
    def binary(self, name: str, a, b) -> tensor:
        """``a <op> b`` for op names add sub mul truediv floordiv mod and or xor lshift rshift
        lt le gt ge eq ne."""
        if name in _ARITH:
            return getattr(self, name)(a, b)
        if name in _BITWISE or name == "rshift":
            return self.bitwise(name, a, b)
        if name in _CMP:
            return self.compare(name, a, b)
        raise LanguageError(f"unsupported operator {name}")

    @staticmethod
    def _no_fp8_math(d: dt.dtype, what: str) -> None:
        if d.is_fp8():
            raise LanguageError(f"{what} on {d} values is not supported: the workbench's "
                                "backends have no 8-bit float arithmetic",
                                "convert first, e.g. x.to(tl.float16), compute, and convert "
                                "back")

    def _arith(self, fop, iop, a, b) -> tensor:
        self._no_fp8_math(a.dtype, "arithmetic")
        op = fop if a.dtype.is_floating() else iop
        return self._op("arith." + op, [a, b], a.dtype, a.shape)

    def add(self, a, b) -> tensor:
        a, b = self.binary_checked(a, b, True, True)
        if a.dtype.is_ptr() and b.dtype.is_ptr():
            raise LanguageError("cannot add pointers together")
        if b.dtype.is_ptr():
            a, b = b, a
        if a.dtype.is_ptr():
            return self.addptr(a, b)
        return self._arith("addf", "addi", a, b)

    def addptr(self, ptr: tensor, off: tensor) -> tensor:
        """``tt.addptr``: ``off`` counts elements; unsigned offsets are zero-extended first."""
        if not off.dtype.is_int():
            raise LanguageError(f"pointer offset must be an integer, got {off.dtype}")
        if off.dtype.is_int_unsigned() and off.dtype.int_bitwidth < 64:
            off = self.wrap(self.builder.create(
                "arith.extui", [off.handle], [ir_type(dt.int64, off.shape)]).result,
                dt.int64, off.shape)
        return self._op("tt.addptr", [ptr, off], ptr.dtype, ptr.shape)

    def sub(self, a, b) -> tensor:
        a, b = self.binary_checked(a, b, True, False)
        if a.dtype.is_ptr():
            return self.addptr(a, self.minus(b))
        return self._arith("subf", "subi", a, b)

    def mul(self, a, b) -> tensor:
        a, b = self.binary_checked(a, b)
        return self._arith("mulf", "muli", a, b)

    def truediv(self, a, b) -> tensor:
        a, b = self.binary_checked(a, b, div_or_mod=True)
        if a.dtype.is_int() and b.dtype.is_int():
            a, b = self.cast(a, dt.float32), self.cast(b, dt.float32)
        elif a.dtype.is_floating() and b.dtype.is_int():
            b = self.cast(b, a.dtype)
        elif a.dtype.is_int() and b.dtype.is_floating():
            a = self.cast(a, b.dtype)
        elif a.dtype.fp_mantissa_width > b.dtype.fp_mantissa_width:
            b = self.cast(b, a.dtype)
        else:
            a = self.cast(a, b.dtype)
        return self._op("arith.divf", [a, b], a.dtype, a.shape)

    def floordiv(self, a, b) -> tensor:
        a, b = self.binary_checked(a, b, div_or_mod=True)
        if not (a.dtype.is_int() and b.dtype.is_int()):
            raise LanguageError(f"// is only defined for integers, got {a.dtype} and {b.dtype}",
                                "use / for floating point division")
        op = "divsi" if a.dtype.is_int_signed() else "divui"
        return self._op("arith." + op, [a, b], a.dtype, a.shape)

    def mod(self, a, b) -> tensor:
        a, b = self.binary_checked(a, b, div_or_mod=True)
        if a.dtype.is_floating():
            return self._op("arith.remf", [a, b], a.dtype, a.shape)
        op = "remsi" if a.dtype.is_int_signed() else "remui"
        return self._op("arith." + op, [a, b], a.dtype, a.shape)

    def bitwise(self, name: str, a, b) -> tensor:
        # a right shift is arithmetic when the LEFT operand is signed, whatever the promoted
        # type (Triton's tensor.__rshift__ in language/core.py): int8 >> uint32 -> ashr
        left = getattr(unwrap(a), "dtype", None)
        a, b = self.binary_checked(a, b)
        if not (a.dtype.is_int() and b.dtype.is_int()):
            raise LanguageError(f"invalid operands of type {a.dtype} and {b.dtype}: bitwise "
                                "operators need integers (Triton's wording)",
                                "cast the operands with .to(tl.int32) or another integer type")
        ret = integer_promote(a.dtype, b.dtype)
        a, b = self.cast(a, ret), self.cast(b, ret)
        signed = left.is_int_signed() if isinstance(left, dt.dtype) else ret.is_int_signed()
        op = _BITWISE.get(name) or ("shrsi" if signed else "shrui")
        return self._op("arith." + op, [a, b], ret, a.shape)

    def compare(self, name: str, a, b) -> tensor:
        a, b = self.binary_checked(a, b)
        d = a.dtype
        self._no_fp8_math(d, "comparison")
        if d.is_floating():
            pred, op = _CMPF[name], "arith.cmpf"
        else:
            pred = name if name in ("eq", "ne") else ("s" if d.is_int_signed() else "u") + name
            op = "arith.cmpi"
        return self._op(op, [a, b], dt.int1, a.shape, {"predicate": pred})

    def minus(self, x) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.is_ptr():
            raise LanguageError(f"wrong type argument to unary minus ({x.dtype!r})")
        return self.sub(PyScalar(0, x.dtype), x)

    def invert(self, x) -> tensor:
        x = self.to_tensor(x)
        if not x.dtype.is_int():
            raise LanguageError(f"~ needs an integer operand, got {x.dtype}")
        return self.bitwise("xor", x, PyScalar(-1 if not x.dtype.is_bool() else 1, x.dtype))

    def logical(self, name: str, a, b) -> tensor:
        """``and``/``or`` on tensors: both cast to bool, then ``&``/``|``."""
        a, b = self.cast(self.to_tensor(a), dt.int1), self.cast(self.to_tensor(b), dt.int1)
        return self.bitwise(name, a, b)

    def logical_not(self, x) -> tensor:
        x = self.cast(self.to_tensor(x), dt.int1)
        return self.bitwise("xor", x, PyScalar(True, dt.int1))

    def minmax(self, which: str, a, b, propagate_nan: bool = False) -> tensor:
        """``tl.minimum``/``tl.maximum``: maxnumf (NaN-ignoring) by default, maximumf with
        ``propagate_nan``; maxsi/maxui for ints (Triton's ``language/math.py``)."""
        a, b = self.binary_checked(a, b)
        d = a.dtype
        self._no_fp8_math(d, f"tl.{which}imum")
        if d.is_floating():
            op = (which + "imumf") if propagate_nan else (which + "numf")
        elif d.is_int():
            op = which + ("si" if d.is_int_signed() else "ui")
        else:
            raise LanguageError(f"unexpected dtype {d!r} in {which}imum")
        return self._op("arith." + op, [a, b], d, a.shape)

    def where(self, cond, x, y) -> tensor:
        cond = self.to_tensor(cond)
        if not cond.dtype.is_bool():
            cond = self.cast(cond, dt.int1)
        x, y = self.binary_checked(x, y, True, True)
        shape = self.broadcast_shapes(cond.shape, x.shape) if cond.shape and x.shape else \
            (cond.shape or x.shape)
        cond, x, y = (self.broadcast_to_shape(v, shape) for v in (cond, x, y))
        return self._op("arith.select", [cond, x, y], x.dtype, shape)
