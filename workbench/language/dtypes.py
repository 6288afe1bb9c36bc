"""Triton 3.6 dtypes: ``tl.int1``, ``tl.int8`` .. ``tl.uint64``, ``tl.float16``, ``tl.bfloat16``,
``tl.float32``, ``tl.float64`` and ``tl.pointer_type(elem)``.

A dtype carries what the signless IR types do not: signedness (``tl.uint32`` and ``tl.int32`` are
both ``i32`` in the IR) and the *kind* used by the promotion rules (bool < integral < floating,
Triton's ``triton-semantics.rst``). Names and attributes follow ``triton.language.core.dtype``.
"""
from __future__ import annotations

import enum

from ..ir import types as irt

SINT_TYPES = ("int8", "int16", "int32", "int64")
UINT_TYPES = ("int1", "uint8", "uint16", "uint32", "uint64")  # Triton counts bool as unsigned
FP_TYPES = ("float16", "bfloat16", "float32", "float64")
# Triton's 8-bit floats (formats: workbench.ir.fp8)
FP8_TYPES = ("float8e4nv", "float8e5", "float8e4b15", "float8e4b8", "float8e5b16")

_SHORT = {"int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
          "float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
          "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b15": "fp8e4b15",
          "float8e4b8": "fp8e4b8", "float8e5b16": "fp8e5b16"}
_FROM_SHORT = {v: k for k, v in _SHORT.items()}
# Triton's own spellings of float names (``tl.dtype("fp32")``)
_TRITON_SPELLING = {v: k for k, v in _SHORT.items() if k.startswith(("float", "bfloat"))}
_IR_FLOAT = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
             "float8e4nv": "f8E4M3FN", "float8e5": "f8E5M2", "float8e4b8": "f8E4M3FNUZ",
             "float8e5b16": "f8E5M2FNUZ"}
_MANTISSA = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52, "float8e4nv": 3,
             "float8e5": 2, "float8e4b15": 3, "float8e4b8": 3, "float8e5b16": 2}

_BIAS = {"float16": 15, "bfloat16": 127, "float32": 127, "float64": 1023, "float8e4nv": 7,
         "float8e5": 15, "float8e4b15": 15, "float8e4b8": 8, "float8e5b16": 16}

KIND_BOOL, KIND_INT, KIND_FLOAT = 0, 1, 2


class dtype:
    """A scalar element type (``tl.float32`` ...). Compare with ``==``; hashable.

    ``dtype(name)`` takes our names (``"float32"``) or Triton's spellings (``"fp32"``), and
    the class lists Triton's spellings as ``SINT_TYPES``, ``UINT_TYPES``, ``FP_TYPES``,
    ``STANDARD_FP_TYPES`` (``triton.language.core.dtype``). Unlike Triton, ``.name`` is
    ``"float32"`` (Triton: ``"fp32"``); ``str()`` gives Triton's spelling."""

    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32",
                "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    OTHER_TYPES = ["void"]

    class SIGNEDNESS(enum.IntEnum):
        """An integer dtype's signedness (``int_signedness``), as Triton's."""
        SIGNED = 0
        UNSIGNED = 1

    class KIND(enum.IntEnum):
        """What :meth:`kind` returns: the promotion rank (bool < integral < floating)."""
        BOOLEAN = 0
        INTEGRAL = 1
        FLOATING = 2

    def __init__(self, name: str):
        name = _TRITON_SPELLING.get(name, name)
        if name not in _SHORT:
            raise ValueError(f"unknown dtype {name!r}")
        self.name = name

    # classification --------------------------------------------------------------------
    def is_floating(self) -> bool:
        return self.name in FP_TYPES or self.name in FP8_TYPES

    def is_fp8(self) -> bool:
        return self.name in FP8_TYPES

    def is_fp8e4nv(self) -> bool:
        return self.name == "float8e4nv"

    def is_fp8e5(self) -> bool:
        return self.name == "float8e5"

    def is_fp8e4b15(self) -> bool:
        return self.name == "float8e4b15"

    def is_fp8e4b8(self) -> bool:
        return self.name == "float8e4b8"

    def is_fp8e5b16(self) -> bool:
        return self.name == "float8e5b16"

    def is_standard_floating(self) -> bool:
        return self.name in FP_TYPES

    def is_int(self) -> bool:
        return self.name in SINT_TYPES or self.name in UINT_TYPES

    def is_int_signed(self) -> bool:
        return self.name in SINT_TYPES

    def is_int_unsigned(self) -> bool:
        return self.name in UINT_TYPES

    def is_bool(self) -> bool:
        return self.name == "int1"

    def is_ptr(self) -> bool:
        return False

    def is_fp16(self) -> bool:
        return self.name == "float16"

    def is_bf16(self) -> bool:
        return self.name == "bfloat16"

    def is_fp32(self) -> bool:
        return self.name == "float32"

    def is_fp64(self) -> bool:
        return self.name == "float64"

    def kind(self) -> "dtype.KIND":
        """``dtype.KIND.BOOLEAN`` (0) for bool, ``INTEGRAL`` (1) for integers (and pointers),
        ``FLOATING`` (2) for floats (Triton's ``triton-semantics.rst``); an IntEnum, so it
        also compares with the plain ints."""
        if self.is_bool():
            return dtype.KIND.BOOLEAN
        return dtype.KIND.FLOATING if self.is_floating() else dtype.KIND.INTEGRAL

    # Triton's one-name questions (``x.dtype.is_int32()``) and integer limits
    def is_int1(self) -> bool:
        return self.name == "int1"

    def is_int8(self) -> bool:
        return self.name == "int8"

    def is_int16(self) -> bool:
        return self.name == "int16"

    def is_int32(self) -> bool:
        return self.name == "int32"

    def is_int64(self) -> bool:
        return self.name == "int64"

    def is_uint8(self) -> bool:
        return self.name == "uint8"

    def is_uint16(self) -> bool:
        return self.name == "uint16"

    def is_uint32(self) -> bool:
        return self.name == "uint32"

    def is_uint64(self) -> bool:
        return self.name == "uint64"

    def is_void(self) -> bool:
        return False

    def is_block(self) -> bool:
        return False

    def is_const(self) -> bool:
        return False

    @staticmethod
    def is_dtype(type_str: str) -> bool:
        """Whether ``type_str`` is one of Triton's dtype spellings (``"fp32"``, ``"int8"``,
        ``"void"``...)."""
        return type_str in (dtype.SINT_TYPES + dtype.UINT_TYPES + dtype.FP_TYPES
                            + dtype.OTHER_TYPES)

    @property
    def int_signedness(self) -> "dtype.SIGNEDNESS":
        """``SIGNEDNESS.SIGNED`` or ``UNSIGNED`` (int1 counts as unsigned, as in Triton);
        AttributeError for a non-integer dtype (Triton sets it only on integers)."""
        if not self.is_int():
            raise AttributeError(f"{self} is not an integer dtype: it has no int_signedness")
        return dtype.SIGNEDNESS.SIGNED if self.is_int_signed() else dtype.SIGNEDNESS.UNSIGNED

    def get_int_max_value(self) -> int:
        """The largest value of an integer dtype (``2**31 - 1`` for int32). Raises TypeError
        for other dtypes."""
        self._need_int("get_int_max_value")
        bits = self.int_bitwidth
        return 2 ** (bits - 1) - 1 if self.is_int_signed() else 2 ** bits - 1

    def get_int_min_value(self) -> int:
        """The smallest value of an integer dtype (``-2**31`` for int32, 0 if unsigned).
        Raises TypeError for other dtypes."""
        self._need_int("get_int_min_value")
        return -2 ** (self.int_bitwidth - 1) if self.is_int_signed() else 0

    def _need_int(self, what: str) -> None:
        if not self.is_int():
            raise TypeError(f"{what}() needs an integer dtype, not {self}")

    @property
    def itemsize(self) -> int:
        """Bytes per element (``primitive_bitwidth // 8``; 0 for int1, as Triton)."""
        return self.primitive_bitwidth // 8

    def with_element_ty(self, element_ty: "dtype") -> "dtype":
        """A scalar's type with another element type: ``element_ty`` itself."""
        return element_ty

    def mangle(self) -> str:
        """Triton's spelling in mangled function names: ``i32``, ``u8``, ``u1``, ``fp32``,
        ``bf16``; ``P<elem>`` for pointers."""
        if self.is_int():
            return f"{'i' if self.is_int_signed() else 'u'}{self.int_bitwidth}"
        return str(self)

    def codegen_name(self) -> str:
        """The attribute name under ``triton.language`` (``float32``, ``bfloat16``,
        ``int8``)."""
        return self.name

    @property
    def cache_key_part(self) -> str:
        """The dtype's part of a cache key (Triton's spelling, ``fp32``)."""
        return str(self)

    @property
    def primitive_bitwidth(self) -> int:
        """Bits per element: 1 for int1, 8..64 otherwise."""
        n = self.name
        if n == "int1":
            return 1
        if n in FP8_TYPES:
            return 8
        if n in FP_TYPES:
            return {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}[n]
        return int(n.lstrip("uint"))

    @property
    def int_bitwidth(self) -> int:
        return self.primitive_bitwidth

    @property
    def fp_mantissa_width(self) -> int:
        return _MANTISSA[self.name]

    @property
    def exponent_bias(self) -> int:
        """The float exponent bias: 15 for fp16, 127 for bf16/fp32, 7 for float8e4nv...
        (Triton's ``dtype.exponent_bias``). Raises AttributeError for non-floats."""
        if self.name not in _BIAS:
            raise AttributeError(f"{self.name} has no exponent bias")
        return _BIAS[self.name]

    @property
    def scalar(self) -> "dtype":
        return self

    def to_ir(self) -> irt.Type:
        """The signless IR type: ``i32`` for int32 and uint32, ``f16``, ``bf16``, MLIR's fp8
        names (``f8E4M3FN`` for float8e4nv, ``f8E5M2``, ``f8E4M3FNUZ``, ``f8E5M2FNUZ``) and
        ``i8`` for float8e4b15, which has no MLIR type (as in Triton 3.6). While a kernel is
        compiled for a target that does not take an fp8 format, that format raises
        CompilationError (:func:`workbench.language.fp8_rules.check_supported`)."""
        if self.name in FP8_TYPES:
            from .fp8_rules import check_supported
            check_supported(_SHORT[self.name])
        if self.name == "float8e4b15":
            return irt.IntType(8)
        if self.is_floating():
            return irt.FloatType(_IR_FLOAT[self.name])
        return irt.IntType(self.primitive_bitwidth)

    @property
    def short_name(self) -> str:
        """Triton's signature spelling: ``fp32``, ``i32``, ``u8``..."""
        return _SHORT[self.name]

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("dtype", self.name))

    def __repr__(self) -> str:
        return f"triton.language.{self.name}"

    def __str__(self) -> str:
        """Triton's spelling: ``int32``, ``uint8``, ``int1`` for integers, ``fp32``, ``bf16``,
        ``fp8e4nv`` for floats (signatures use :attr:`short_name`: ``i32``, ``fp32``)."""
        return self.name if self.is_int() else self.short_name


class pointer_type(dtype):
    """A pointer to ``element_ty`` elements (``!tt.ptr<f32>``); address space 1 = global.
    ``const``: nothing may be stored through it (a parameter annotated ``tl.const``; Triton's
    ``*k`` signature); part of the type, as in Triton, but not of the IR type."""

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        if not isinstance(element_ty, dtype):
            raise TypeError(f"pointer_type needs a dtype, got {element_ty!r}")
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = bool(const)
        self.name = f"pointer<{element_ty.name}>"

    def is_const(self) -> bool:
        """Whether stores through this pointer are refused (Triton's ``is_const``)."""
        return self.const

    def is_ptr(self) -> bool:
        return True

    def is_floating(self) -> bool:
        return False

    def is_int(self) -> bool:
        return False

    def is_int_signed(self) -> bool:
        return False

    def is_int_unsigned(self) -> bool:
        return False

    def is_bool(self) -> bool:
        return False

    def kind(self) -> "dtype.KIND":
        return dtype.KIND.INTEGRAL

    def mangle(self) -> str:
        return "P" + self.element_ty.mangle()

    @property
    def primitive_bitwidth(self) -> int:
        return 64

    def to_ir(self) -> irt.Type:
        return irt.PointerType(self.element_ty.to_ir(), self.address_space)

    @property
    def short_name(self) -> str:
        return ("*k" if self.const else "*") + self.element_ty.short_name

    def __eq__(self, other) -> bool:
        return isinstance(other, pointer_type) and other.element_ty == self.element_ty \
            and other.address_space == self.address_space and other.const == self.const

    def __hash__(self) -> int:
        return hash(("ptr", self.element_ty, self.address_space, self.const))

    def __repr__(self) -> str:
        return f"{'const ' if self.const else ''}pointer<{self.element_ty!r}>"

    def __str__(self) -> str:
        """Triton's spelling: ``pointer<fp16>``, ``const_pointer<int32>``."""
        return f"{'const_' if self.const else ''}pointer<{self.element_ty}>"


int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float16 = dtype("float16")
bfloat16 = dtype("bfloat16")
float32 = dtype("float32")
float64 = dtype("float64")
float8e4nv = dtype("float8e4nv")
float8e5 = dtype("float8e5")
float8e4b15 = dtype("float8e4b15")
float8e4b8 = dtype("float8e4b8")
float8e5b16 = dtype("float8e5b16")
# Triton's aliases
bool_ = int1

ALL = {d.name: d for d in (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                           float16, bfloat16, float32, float64, float8e4nv, float8e5,
                           float8e4b15, float8e4b8, float8e5b16)}


def from_short_name(text: str) -> dtype:
    """Parse a Triton signature type: ``"fp32"``, ``"i32"``, ``"u64"``, ``"*fp16"``, ``"*i1"``.

    Raises ValueError for an unknown name."""
    text = text.strip()
    if text.startswith("*k"):
        return pointer_type(from_short_name(text[2:]), const=True)
    if text.startswith("*"):
        return pointer_type(from_short_name(text[1:]))
    if text in _FROM_SHORT:
        return ALL[_FROM_SHORT[text]]
    if text == "u1":
        return int1
    if text in ALL:
        return ALL[text]
    raise ValueError(f"unknown type {text!r} in signature")
