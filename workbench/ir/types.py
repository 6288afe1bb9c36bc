"""IR types, printed as Triton/MLIR prints them.

Integer types are signless (``i32``), as in MLIR: the signedness of a ``tl.uint32`` lives in the
language dtype and decides which op the frontend emits (``arith.divui`` vs ``arith.divsi``).
"""
from __future__ import annotations

from dataclasses import dataclass


class Type:
    """Base class of all IR types."""

    @property
    def is_tensor(self) -> bool:
        return False

    @property
    def scalar(self) -> "Type":
        """The element type of a tensor, or the type itself for a scalar."""
        return self


@dataclass(frozen=True)
class IntType(Type):
    """A signless integer of ``width`` bits (1, 8, 16, 32 or 64)."""

    width: int

    def __str__(self) -> str:
        return f"i{self.width}"


@dataclass(frozen=True)
class FloatType(Type):
    """A floating point type: ``f16``, ``bf16``, ``f32``, ``f64`` or an 8-bit float
    (``f8E4M3FN``, ``f8E5M2``, ``f8E4M3FNUZ``, ``f8E5M2FNUZ``: see :mod:`workbench.ir.fp8`)."""

    name: str

    @property
    def width(self) -> int:
        return {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(self.name, 8)

    @property
    def is_fp8(self) -> bool:
        return self.name.startswith("f8")

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class PointerType(Type):
    """A pointer to ``pointee`` in address space ``address_space`` (1 = global):
    ``!tt.ptr<f32>``."""

    pointee: Type
    address_space: int = 1

    @property
    def width(self) -> int:
        return 64

    def __str__(self) -> str:
        if self.address_space == 1:
            return f"!tt.ptr<{self.pointee}>"
        return f"!tt.ptr<{self.pointee}, {self.address_space}>"


@dataclass(frozen=True)
class TensorType(Type):
    """A tile: a static ``shape`` of ``element`` values, optionally with a layout ``encoding``.

    ``encoding`` is a :mod:`workbench.layouts` encoding object (or None in ttir).
    """

    shape: tuple
    element: Type
    encoding: object = None

    @property
    def is_tensor(self) -> bool:
        return True

    @property
    def scalar(self) -> Type:
        return self.element

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def with_encoding(self, encoding) -> "TensorType":
        return TensorType(self.shape, self.element, encoding)

    def with_element(self, element: Type) -> "TensorType":
        return TensorType(self.shape, element, self.encoding)

    def to_text(self, alias_of=None) -> str:
        dims = "x".join(str(s) for s in self.shape)
        enc = ""
        if self.encoding is not None:
            enc = ", " + (alias_of(self.encoding) if alias_of else str(self.encoding))
        return f"tensor<{dims}x{self.element}{enc}>"

    def __str__(self) -> str:
        return self.to_text()


@dataclass(frozen=True)
class TensorDescType(Type):
    """A tensor descriptor (Triton's ``!tt.tensordesc<tensor<32x64xf16>>``): the tile type
    ``block`` it loads and stores. Integer blocks carry the signedness of the language dtype
    (``signedness`` ``"s"`` or ``"u"``; Triton prints ``tensor<16xsi32>``/``tensor<16xui32>``),
    since a descriptor is built in a typed context (Triton's ``create_tensor_descriptor_type``).
    """

    block: TensorType
    signedness: str = ""

    @property
    def width(self) -> int:
        return 64

    def to_text(self, alias_of=None) -> str:
        dims = "x".join(str(s) for s in self.block.shape)
        enc = ""
        if self.block.encoding is not None:
            enc = ", " + (alias_of(self.block.encoding) if alias_of else str(self.block.encoding))
        return f"!tt.tensordesc<tensor<{dims}x{self.signedness}{self.block.element}{enc}>>"

    def __str__(self) -> str:
        return self.to_text()


@dataclass(frozen=True)
class MemDescType(Type):
    """A shared memory buffer ``!ttg.memdesc<64x64xf16, #shared, #smem, mutable>``."""

    shape: tuple
    element: Type
    encoding: object = None
    mutable: bool = True

    def to_text(self, alias_of=None) -> str:
        dims = "x".join(str(s) for s in self.shape)
        enc = alias_of(self.encoding) if (alias_of and self.encoding is not None) \
            else str(self.encoding)
        mut = ", mutable" if self.mutable else ""
        return f"!ttg.memdesc<{dims}x{self.element}, {enc}, #smem{mut}>"

    def __str__(self) -> str:
        return self.to_text()


@dataclass(frozen=True)
class AsyncTokenType(Type):
    """``!ttg.async.token``: what Triton's asynchronous-copy ops hand on
    (``TritonGPUTypes.td``): an ``async_copy_global_to_local`` gives one, an
    ``async_commit_group`` joins them into its group's token, an ``async_wait`` takes the
    tokens of the groups it waits for and gives a token that the ``local_load`` of the landed
    data takes. It holds no data (no register in the generated code); it orders the ops."""

    def __str__(self) -> str:
        return "!ttg.async.token"


@dataclass(frozen=True)
class FunctionType(Type):
    """``(inputs) -> results`` of a ``tt.func``."""

    inputs: tuple
    results: tuple = ()

    def __str__(self) -> str:
        ins = ", ".join(str(t) for t in self.inputs)
        outs = ", ".join(str(t) for t in self.results)
        return f"({ins}) -> ({outs})"


i1 = IntType(1)
i8 = IntType(8)
i16 = IntType(16)
i32 = IntType(32)
i64 = IntType(64)
f16 = FloatType("f16")
bf16 = FloatType("bf16")
f32 = FloatType("f32")
f64 = FloatType("f64")
async_token = AsyncTokenType()


def is_int(t: Type) -> bool:
    return isinstance(t.scalar, IntType)


def is_float(t: Type) -> bool:
    return isinstance(t.scalar, FloatType)


def is_ptr(t: Type) -> bool:
    return isinstance(t.scalar, PointerType)


def shape_of(t: Type) -> tuple:
    """The shape of a tensor type, ``()`` for a scalar."""
    return t.shape if isinstance(t, TensorType) else ()


def like(t: Type, element: Type) -> Type:
    """A type with the shape (and encoding) of ``t`` and the element type ``element``."""
    if isinstance(t, TensorType):
        return t.with_element(element)
    return element
