"""Host-built tensor descriptors (Triton 3.6's ``triton.tools.tensor_descriptor``).

A :class:`TensorDescriptor` passed to a kernel arrives as a ``tl.tensor_descriptor`` whose
block shape and element type are part of the kernel's specialisation (Triton's signature
``tensordesc<fp16[32, 64]>``) and whose base, shape, strides and padding are launch values.
The checks are Triton's (TMA's rules): 1 to 5 dimensions, a 16-byte aligned base, leading
strides of a multiple of 16 bytes, the last dimension contiguous, positive sizes, block dims
powers of two, padding ``"zero"`` or ``"nan"`` (floating point only).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_MAX_NUMEL = 1 << 20  # Triton's TRITON_MAX_TENSOR_NUMEL


def _data_ptr(base) -> int:
    """The address of ``base``'s first element (torch ``data_ptr()``, numpy ``ctypes``, or
    ``__cuda_array_interface__``)."""
    if hasattr(base, "data_ptr"):
        return int(base.data_ptr())
    if hasattr(base, "__array_interface__"):
        return int(base.__array_interface__["data"][0])
    if hasattr(base, "__cuda_array_interface__"):
        return int(base.__cuda_array_interface__["data"][0])
    raise TypeError(f"TensorDescriptor base must be an array, not {type(base).__name__}")


def _itemsize(base) -> int:
    dt = base.dtype
    size = getattr(dt, "itemsize", None)
    return int(size) if size is not None else int(base.element_size())


def _is_float(base) -> bool:
    dt = base.dtype
    if hasattr(dt, "is_floating_point"):
        return bool(dt.is_floating_point)
    if callable(getattr(dt, "is_floating", None)):  # a workbench.language dtype (TensorWrapper)
        return bool(dt.is_floating())
    return getattr(dt, "kind", "") == "f" or "float" in str(dt)


def _strides(base) -> list:
    """Element strides: torch ``stride()``, numpy byte ``strides`` divided by the itemsize."""
    s = base.stride() if callable(getattr(base, "stride", None)) else None
    if s is not None:
        return [int(x) for x in s]
    return [int(x) // _itemsize(base) for x in base.strides]


@dataclass
class TensorDescriptor:
    """A descriptor of ``base`` (a numpy array, a torch tensor or a CUDA array) seen as a
    ``shape`` tensor with element ``strides``, moved in ``block_shape`` tiles; ``padding``
    (``"zero"`` or ``"nan"``) is what out-of-bounds elements of a loaded tile read as.
    Raises AssertionError for what Triton asserts (see the module docstring) and TypeError for
    a non-integer block dimension."""

    base: Any
    shape: list
    strides: list
    block_shape: list
    padding: str = "zero"

    def __post_init__(self):
        rank = len(self.shape)
        assert len(self.strides) == rank, f"rank mismatch: {self}"
        assert len(self.block_shape) == rank, f"rank mismatch: {self}"
        assert rank > 0, "rank must not be zero"
        assert rank <= 5, "rank cannot be more than 5"
        assert _data_ptr(self.base) % 16 == 0, "base must be 16-byte aligned"
        numel = 1
        for i, d in enumerate(self.block_shape):
            if not isinstance(d, int) or isinstance(d, bool):
                raise TypeError(f"Shape element {i} must have type `constexpr[int]`, got "
                                f"`constexpr[{type(d)}]")
            if d < 1 or d & (d - 1):
                raise ValueError(f"Shape element {i} must be a power of 2")
            numel *= d
        if numel > _MAX_NUMEL:
            raise ValueError(f"numel ({numel}) exceeds triton maximum tensor numel "
                             f"({_MAX_NUMEL})")
        elem_bytes = _itemsize(self.base)
        for stride in self.strides[:-1]:
            assert (int(stride) * elem_bytes) % 16 == 0, "strides must be 16-byte aligned"
        for dim in self.shape:
            assert int(dim) > 0, "shape must be positive"
        assert int(self.strides[-1]) == 1, "Last dimension must be contiguous"
        assert self.padding in ("zero", "nan"), "Illegal value for padding"
        if self.padding == "nan":
            assert _is_float(self.base), \
                "Padding option `nan` is only supported for floating point tensors"

    @staticmethod
    def from_tensor(tensor: Any, block_shape: list, padding: str = "zero"):
        """The descriptor of the whole of ``tensor`` (its shape and strides)."""
        return TensorDescriptor(tensor, [int(s) for s in tensor.shape], _strides(tensor),
                                list(block_shape), padding)
