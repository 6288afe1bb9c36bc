"""The rest of Triton 3.6's type names in ``triton.language``: ``block_type`` (what a tile's
``.type`` is), ``slice`` and ``slice_type`` (the value of ``x[a:b:c]`` while compiling),
``void``, the base classes ``base_type``/``base_value``, and the small helpers
``get_int_dtype``, ``validate_block_shape`` and ``is_builtin`` (``triton/language/core.py``).

Every type here can be constructed and compared where Triton's can (on the host and, with
compile-time arguments, inside a kernel)."""
from __future__ import annotations

from ..ir import types as irt
from . import dtypes as dt

MAX_NUMEL = 1 << 20  # TRITON_MAX_TENSOR_NUMEL (triton/language/core.py)


class base_value:
    """Base class of the values a kernel handles (Triton's ``base_value``): tensors,
    descriptors and tuples carry a ``type``."""


class base_type:
    """Base class of the types of kernel values (Triton's ``base_type``)."""


def validate_block_shape(shape) -> int:
    """The number of elements of a tile of ``shape`` (a list of ints). Raises TypeError for a
    non-int dimension and ValueError for a dimension that is not a power of two or a tile
    over ``TRITON_MAX_TENSOR_NUMEL`` (1048576) elements, with Triton's words."""
    numel = 1
    for i, d in enumerate(shape):
        d = getattr(d, "value", d)
        if not isinstance(d, int):
            raise TypeError(f"Shape element {i} must have type `constexpr[int]`, got "
                            f"`constexpr[{type(d)}]")
        if d & (d - 1) != 0 or d <= 0:
            raise ValueError(f"Shape element {i} must be a power of 2")
        numel *= d
    if numel > MAX_NUMEL:
        raise ValueError(f"numel ({numel}) exceeds triton maximum tensor numel ({MAX_NUMEL})")
    return numel


class block_type(dt.dtype):
    """The type of a tile: ``element_ty`` (a dtype) and ``shape`` (tuple of ints, powers of
    two), as Triton's ``block_type``. ``tl.block_type(tl.float32, [16])`` prints as
    ``<(16,), fp32>``; it equals another block type with the same element and shape, never a
    scalar dtype (compare ``x.dtype`` for that). Raises TypeError for a 0-d shape."""

    def __init__(self, element_ty: dt.dtype, shape):
        if not isinstance(shape, (list, tuple)):
            raise TypeError(f"block_type needs a list of dims, got {shape!r}")
        self.element_ty = element_ty
        self.shape = tuple(int(s.value if hasattr(s, "value") else s) for s in shape)
        if not self.shape:
            raise TypeError("0d block_type is forbidden")
        self.numel = validate_block_shape(self.shape)
        self.name = f"<{self.shape}, {element_ty}>"

    def is_block(self) -> bool:
        return True

    def get_block_shapes(self) -> tuple:
        return self.shape

    def with_element_ty(self, scalar_ty: dt.dtype) -> "block_type":
        """The same shape with another element type."""
        return block_type(scalar_ty, self.shape)

    @property
    def scalar(self) -> dt.dtype:
        return self.element_ty

    @property
    def nbytes(self) -> int:
        """Bytes of the tile's elements."""
        return self.numel * (self.element_ty.primitive_bitwidth // 8)

    def to_ir(self) -> irt.Type:
        return irt.TensorType(self.shape, self.element_ty.to_ir())

    @property
    def short_name(self) -> str:
        return f"{self.element_ty.short_name}S{'_'.join(map(str, self.shape))}S"

    def mangle(self) -> str:
        """Triton's mangled spelling: ``fp32S16_32S``."""
        return f"{self.element_ty.mangle()}S{'_'.join(map(str, self.shape))}S"

    def __eq__(self, other) -> bool:
        return isinstance(other, block_type) and other.element_ty == self.element_ty \
            and other.shape == self.shape

    def __hash__(self) -> int:
        return hash(("block", self.element_ty, self.shape))

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


class _named_type(dt.dtype):
    """A dtype with no elements (``void``, ``slice_type``): only its name."""

    def __init__(self, name: str):
        self.name = name

    def is_void(self) -> bool:
        return self.name == "void"

    def is_floating(self) -> bool:
        return False

    def is_int(self) -> bool:
        return False

    def is_bool(self) -> bool:
        return False

    def is_ptr(self) -> bool:
        return False

    @property
    def short_name(self) -> str:
        return "V" if self.name == "void" else self.name

    def to_ir(self) -> irt.Type:
        raise TypeError(f"{self.name} has no IR type")

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


#: the type of a call that returns nothing (``tl.void``)
void = _named_type("void")


class slice_type(_named_type):
    """The type of a :class:`slice` (Triton's ``slice_type``)."""

    def __init__(self):
        super().__init__("slice_type")


class slice:
    """``start:stop:step`` of a subscript while compiling (``x[None, :]``), as Triton's
    ``tl.slice``; ``type`` is a :class:`slice_type`."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step
        self.type = slice_type()

    def __repr__(self) -> str:
        return f"slice({self.start!r}, {self.stop!r}, {self.step!r})"


def get_int_dtype(bitwidth: int, signed: bool) -> dt.dtype:
    """``tl.int<bitwidth>`` or ``tl.uint<bitwidth>`` (``int1`` for 1 bit either way). Raises
    ValueError for another width."""
    if bitwidth == 1:
        return dt.int1
    name = f"{'' if signed else 'u'}int{bitwidth}"
    if name not in dt.ALL:
        raise ValueError(f"Unsupported bitwidth {bitwidth} and signedness {signed}")
    return dt.ALL[name]


def is_builtin(fn) -> bool:
    """Whether ``fn`` is a language builtin (compiled by the frontend, not inlined)."""
    return bool(getattr(fn, "__workbench_builtin__", False))


__all__ = ["base_value", "base_type", "block_type", "void", "slice", "slice_type",
           "validate_block_shape", "get_int_dtype", "is_builtin"]
