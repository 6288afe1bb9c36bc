"""Tensor descriptors (Triton 3.6's ``tl.make_tensor_descriptor``, ``tensor_descriptor`` and
its ``load``/``store``/``atomic_*``/``gather``/``scatter`` methods; the rules of
``language/semantic.py``, ``make_tensor_descriptor`` and ``descriptor_*``).

A descriptor names a ``shape`` tensor in global memory at ``base`` with element ``strides``
(the last one 1) and a tile ``block_shape``; each access moves a whole tile at integer element
offsets. Elements of a tile outside ``[0, shape)`` read as the padding (zero, or NaN with
``padding_option="nan"``) and are not written: the semantics of NVIDIA's TMA unit, which
Triton uses on sm_90. The frontend emits Triton's ops (``tt.make_tensor_descriptor``,
``tt.descriptor_load`` ...); the backends run them through the
``rewrite-tensor-descriptor-to-pointer`` pass (:mod:`workbench.passes.rewrite_descriptors`),
except on ``cuda:90``, where the loads, stores and atomics of rank-2 descriptors become TMA
copies and reductions (:mod:`workbench.passes.tma_lowering`). As in Triton, ``atomic_min`` and
``atomic_max`` of float16/bfloat16 exist only there (the TMA unit reduces them; there is no
16-bit float ``atom.min``): other targets refuse them at compile time.
"""
from __future__ import annotations

from ..ir import types as irt
from . import dtypes as dt
from .core import LanguageError, builtin, tensor
from .semantic import ir_type, unwrap, validate_block_shape
from .target_info import current_target
from .typesys import block_type

#: element dtypes each atomic kind accepts (Triton's ``descriptor_atomic_*`` asserts); the
#: 16-bit float min/max of :data:`_NATIVE_ONLY` need the TMA unit (sm_90 and later)
_ATOMIC_DTYPES = {
    "add": ("uint32", "int32", "uint64", "float32", "float16", "bfloat16"),
    "min": ("uint32", "int32", "uint64", "int64", "float16", "bfloat16"),
    "max": ("uint32", "int32", "uint64", "int64", "float16", "bfloat16"),
    "and": ("uint32", "int32", "uint64", "int64"),
    "or": ("uint32", "int32", "uint64", "int64"),
    "xor": ("uint32", "int32", "uint64", "int64"),
}
#: kinds and dtypes only TMA's ``cp.reduce.async.bulk.tensor`` reduces (Triton's
#: ``_descriptor_atomic_min_max_supported``): there is no 16-bit float ``atom.min``/``max``
_NATIVE_ONLY = {("min", "float16"), ("max", "float16"), ("min", "bfloat16"),
                ("max", "bfloat16")}


def has_native_tma() -> bool:
    """Whether the kernel is compiled for a GPU with the TMA unit (``cuda:90`` and later:
    Triton's ``_has_native_tma``, which asks the active GPU; here the compile target
    decides, so a kernel compiled for ``cuda:90`` on a machine without one behaves as on an
    H100/H200). False on ``cuda:80``, ``cpu`` and the interpreter."""
    t = current_target()
    return t is not None and t.backend == "cuda" and t.arch >= 90


def desc_ir_type(element: dt.dtype, block_shape) -> irt.TensorDescType:
    """``!tt.tensordesc<tensor<...>>`` of a ``block_shape`` tile of ``element`` (integer
    elements keep their signedness, as Triton's ``create_tensor_descriptor_type`` does)."""
    sign = ""
    if element.is_int() and not element.is_bool():
        sign = "u" if element.is_int_unsigned() else "s"
    return irt.TensorDescType(irt.TensorType(tuple(block_shape), element.to_ir()), sign)


class tensor_descriptor_type(dt.pointer_type):
    """The dtype of a descriptor's own IR value (``!tt.tensordesc<...>``), so a descriptor
    can cross a loop or an ``if`` as an aggregate of that value, its shape and its strides
    (Triton's ``tensor_descriptor._flatten_ir``)."""

    def __init__(self, element: dt.dtype, block_shape=None, strides_type=None):
        if isinstance(element, block_type):  # Triton's form: (block_type, shape, strides)
            block_shape = element.shape
            element = element.element_ty
        if block_shape is None:
            raise TypeError("tensor_descriptor_type needs an element dtype and a block shape, "
                            "or a tl.block_type")
        super().__init__(element)
        self.block_shape = tuple(block_shape)
        self.name = f"tensor_descriptor<{element.name}{list(self.block_shape)}>"

    def is_ptr(self) -> bool:
        return False

    def to_ir(self) -> irt.Type:
        return desc_ir_type(self.element_ty, self.block_shape)

    def __eq__(self, other) -> bool:
        return isinstance(other, tensor_descriptor_type) and \
            other.element_ty == self.element_ty and other.block_shape == self.block_shape

    def __hash__(self) -> int:
        return hash(("tensordesc", self.element_ty, self.block_shape))

    def __repr__(self) -> str:
        return self.name


class tensor_descriptor:
    """A descriptor value in a kernel: ``handle`` (IR value of type ``!tt.tensordesc``),
    ``dtype`` (element dtype), ``block_shape`` (list of ints, as Triton's), ``shape`` (int32 scalar
    tensors) and ``strides`` (int64 scalar tensors), one per dimension."""

    def __init__(self, handle, element: dt.dtype, block_shape, shape, strides):
        self.handle, self.dtype = handle, element
        self.block_shape = [int(b) for b in block_shape]
        self.shape, self.strides = tuple(shape), tuple(strides)

    @property
    def block_type(self):
        """The dtype and shape of one tile, as ``(dtype, block_shape)``."""
        return self.dtype, self.block_shape

    def __repr__(self) -> str:
        return f"tensor_descriptor<{self.dtype}{list(self.block_shape)}>"

    # an aggregate for loops and ifs (workbench.frontend.carry): the descriptor value, then
    # its shape and strides, as Triton flattens it
    def _flatten(self) -> list:
        own = tensor(self.handle, tensor_descriptor_type(self.dtype, self.block_shape))
        return [own, *self.shape, *self.strides]

    def _unflatten(self, leaves) -> "tensor_descriptor":
        n = len(self.block_shape)
        return tensor_descriptor(leaves[0].handle, self.dtype, self.block_shape,
                                 leaves[1:1 + n], leaves[1 + n:1 + 2 * n])

    def _structure(self):
        return ("tensor_descriptor", self.dtype, tuple(self.block_shape))

    def _check_offsets(self, offsets, sem, what: str) -> list:
        offsets = unwrap(offsets)
        if isinstance(offsets, tensor) or not isinstance(offsets, (tuple, list)):
            offsets = [offsets]
        n = len(self.block_shape)
        if len(offsets) != n:
            raise LanguageError(f"{what}: expected {n} offsets, but got {len(offsets)}",
                                "pass one offset per dimension of the block")
        return [_int_scalar(o, dt.int32, sem, f"{what} offsets") for o in offsets]

    def _check_value(self, value, sem, what: str) -> tensor:
        value = sem.to_tensor(unwrap(value))
        if list(value.shape) != self.block_shape:
            raise LanguageError(f"{what}: the value's shape {list(value.shape)} is not the "
                                f"descriptor's block shape {list(self.block_shape)}",
                                "store a tile of exactly the block shape")
        return value

    @builtin
    def load(self, offsets, _semantic=None) -> tensor:
        """The ``block_shape`` tile at element ``offsets`` (one int32 per dim); elements
        outside the tensor read as the padding value (``tt.descriptor_load``)."""
        sem = _semantic
        offs = self._check_offsets(offsets, sem, "descriptor load")
        op = sem.builder.create("tt.descriptor_load", [self.handle] + [o.handle for o in offs],
                                [ir_type(self.dtype, self.block_shape)])
        return sem.wrap(op.result, self.dtype, self.block_shape)

    @builtin
    def store(self, offsets, value, _semantic=None):
        """Store ``value`` (the block shape; cast to the element type) at ``offsets``;
        elements outside the tensor are not written (``tt.descriptor_store``)."""
        sem = _semantic
        value = sem.cast(self._check_value(value, sem, "descriptor store"), self.dtype)
        offs = self._check_offsets(offsets, sem, "descriptor store")
        sem.builder.create("tt.descriptor_store",
                           [self.handle] + [o.handle for o in offs] + [value.handle], [])

    def _reduce(self, kind: str, offsets, value, sem):
        value = self._check_value(value, sem, f"descriptor atomic_{kind}")
        if self.dtype.name not in _ATOMIC_DTYPES[kind]:
            raise LanguageError(f"descriptor atomic_{kind} does not support {self.dtype}",
                                "supported: " + ", ".join(_ATOMIC_DTYPES[kind]))
        if (kind, self.dtype.name) in _NATIVE_ONLY and not has_native_tma():
            raise LanguageError("16-bit float types require native tma support",
                                f"descriptor atomic_{kind} of {self.dtype} needs the TMA unit "
                                "of sm_90 (target='cuda:90'); on cuda:80, the CPU and the "
                                f"interpreter atomic_{kind} takes 32/64-bit integers only")
        offs = self._check_offsets(offsets, sem, f"descriptor atomic_{kind}")
        sem.builder.create("tt.descriptor_reduce",
                           [self.handle] + [o.handle for o in offs] + [value.handle], [],
                           {"kind": kind})

    @builtin
    def atomic_add(self, offsets, value, _semantic=None):
        """Atomically add ``value`` into the block at ``offsets`` (``tt.descriptor_reduce``)."""
        self._reduce("add", offsets, value, _semantic)

    @builtin
    def atomic_min(self, offsets, value, _semantic=None):
        """Atomic minimum of ``value`` into the block at ``offsets``."""
        self._reduce("min", offsets, value, _semantic)

    @builtin
    def atomic_max(self, offsets, value, _semantic=None):
        """Atomic maximum of ``value`` into the block at ``offsets``."""
        self._reduce("max", offsets, value, _semantic)

    @builtin
    def atomic_and(self, offsets, value, _semantic=None):
        """Atomic bitwise and of ``value`` into the block at ``offsets``."""
        self._reduce("and", offsets, value, _semantic)

    @builtin
    def atomic_or(self, offsets, value, _semantic=None):
        """Atomic bitwise or of ``value`` into the block at ``offsets``."""
        self._reduce("or", offsets, value, _semantic)

    @builtin
    def atomic_xor(self, offsets, value, _semantic=None):
        """Atomic bitwise xor of ``value`` into the block at ``offsets``."""
        self._reduce("xor", offsets, value, _semantic)

    def _check_rows(self, x_offsets, sem, what: str) -> tensor:
        if len(self.block_shape) != 2 or self.block_shape[0] != 1:
            raise LanguageError(f"descriptor {what} needs a 2-D descriptor with a block of 1 "
                                f"row, but the block is {list(self.block_shape)}")
        x = sem.to_tensor(unwrap(x_offsets))
        if len(x.shape) != 1 or not x.dtype.is_int():
            raise LanguageError(f"descriptor {what}: x offsets must be a 1-D integer tile, "
                                f"got {x!r}")
        if x.shape[0] < 8:
            raise LanguageError(f"descriptor {what} must have at least 8 rows, but got "
                                f"{x.shape[0]}")
        min_cols = 32 // self.dtype.primitive_bitwidth * 8
        if self.block_shape[1] < min_cols:
            raise LanguageError(f"descriptor {what} of {self.dtype} must have at least "
                                f"{min_cols} columns, but got {self.block_shape[1]}")
        return sem.cast(x, dt.int32)

    @builtin
    def gather(self, *args, _semantic=None) -> tensor:
        """``gather(x_offsets, y_offset)``: rows ``x_offsets`` (1-D int tile of N >= 8) of a
        1-row 2-D descriptor, each from column ``y_offset``; an ``N x block_shape[1]`` tile
        (``tt.descriptor_gather``)."""
        sem = _semantic
        if len(args) != 2:
            raise LanguageError(f"descriptor gather only supports 2D indexing, but got "
                                f"{len(args)} indices")
        x = self._check_rows(args[0], sem, "gather")
        y = _int_scalar(args[1], dt.int32, sem, "descriptor gather y offset")
        shape = (x.shape[0], self.block_shape[1])
        op = sem.builder.create("tt.descriptor_gather", [self.handle, x.handle, y.handle],
                                [ir_type(self.dtype, shape)])
        return sem.wrap(op.result, self.dtype, shape)

    @builtin
    def scatter(self, value, *args, _semantic=None):
        """``scatter(value, x_offsets, y_offset)``: store row i of ``value`` at row
        ``x_offsets[i]`` from column ``y_offset`` (``tt.descriptor_scatter``)."""
        sem = _semantic
        if len(args) != 2:
            raise LanguageError(f"descriptor scatter only supports 2D indexing, but got "
                                f"{len(args)} indices")
        x = self._check_rows(args[0], sem, "scatter")
        y = _int_scalar(args[1], dt.int32, sem, "descriptor scatter y offset")
        value = sem.to_tensor(unwrap(value))
        if tuple(value.shape) != (x.shape[0], self.block_shape[1]):
            raise LanguageError(f"descriptor scatter: the value's shape {list(value.shape)} "
                                f"is not [{x.shape[0]}, {self.block_shape[1]}]")
        value = sem.cast(value, self.dtype)
        sem.builder.create("tt.descriptor_scatter",
                           [self.handle, x.handle, y.handle, value.handle], [])


def parse_desc_type(text: str) -> tuple:
    """``(element dtype, block shape)`` of Triton's signature type ``tensordesc<fp16[32,
    64]>``; raises ValueError for other text."""
    import re
    m = re.fullmatch(r"\s*tensordesc<\s*(\w+)\s*\[([\d,\s]+)\]\s*>\s*", text)
    if not m:
        raise ValueError(f"not a tensor descriptor type: {text!r}")
    block = tuple(int(x) for x in m.group(2).split(",") if x.strip())
    return dt.from_short_name(m.group(1)), block


def param_types(text: str) -> list:
    """The kernel parameter types a descriptor parameter of type ``text`` stands for:
    the descriptor, then its shape (i32) and its strides (i64), one per dimension, as in
    Triton's ttir signature."""
    element, block = parse_desc_type(text)
    n = len(block)
    return [desc_ir_type(element, block)] + [irt.i32] * n + [irt.i64] * n


def from_params(text: str, args: list, sem) -> tensor_descriptor:
    """The ``tensor_descriptor`` of a parameter from its kernel arguments ``args`` (the
    values :func:`param_types` lists)."""
    element, block = parse_desc_type(text)
    n = len(block)
    shape = [sem.wrap(a, dt.int32) for a in args[1:1 + n]]
    strides = [sem.wrap(a, dt.int64) for a in args[1 + n:1 + 2 * n]]
    return tensor_descriptor(args[0], element, block, shape, strides)


def _int_scalar(v, d: dt.dtype, sem, what: str) -> tensor:
    """An integer scalar tensor of dtype ``d`` for an int or a scalar integer tensor."""
    v = unwrap(v)
    if isinstance(v, bool):
        raise LanguageError(f"{what} must be integers, got {v!r}")
    if isinstance(v, int):
        return sem.constant(v, d)
    t = sem.to_tensor(v)
    if t.shape or not t.dtype.is_int():
        raise LanguageError(f"{what} must be integer scalars, got {t!r}")
    return t if t.dtype == d else sem.cast(t, d)


def _list(values, what: str) -> list:
    values = unwrap(values)
    if isinstance(values, tensor) or not isinstance(values, (tuple, list)):
        values = [values]
    return [unwrap(v) for v in values]


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero",
                           _semantic=None) -> tensor_descriptor:
    """A descriptor of the tensor at ``base`` (a scalar pointer, 16-byte aligned) with
    ``shape`` (int32) and ``strides`` (int64, in elements, the last one the constant 1), for
    tiles of ``block_shape`` (powers of two, at least 16 bytes in the last dimension), 1 to 5
    dimensions. ``padding_option``: ``"zero"`` or ``"nan"`` (floating point only), the value
    out-of-bounds elements read as. Raises LanguageError where Triton raises ValueError."""
    sem = _semantic
    shape, strides, block = _list(shape, "shape"), _list(strides, "strides"), \
        _list(block_shape, "block_shape")
    ndim = len(shape)
    if not 1 <= ndim <= 5:
        raise LanguageError(f"Expected 1 <= ndim <= 5 but got {ndim} dimensions")
    if len(strides) != ndim:
        raise LanguageError(f"Expected {ndim} strides but got {len(strides)}")
    if len(block) != ndim:
        raise LanguageError(f"Expected block_shape to have {ndim} dimensions but got "
                            f"{len(block)}")
    base = sem.to_tensor(unwrap(base))
    if not base.dtype.is_ptr() or base.shape:
        raise LanguageError(f"make_tensor_descriptor needs a scalar pointer as base, got "
                            f"{base!r}")
    element = base.dtype.element_ty
    block_t = validate_block_shape(block)
    elem_bytes = element.primitive_bitwidth // 8
    if block_t[-1] * elem_bytes < 16:
        raise LanguageError("Descriptor block shape must have at least 16 bytes in the last "
                            f"dimension, but got {block_t[-1]} * {elem_bytes} = "
                            f"{block_t[-1] * elem_bytes} bytes")
    if isinstance(strides[-1], tensor) or strides[-1] != 1:
        raise LanguageError(f"Tensor descriptor last dim must be 1 but got {strides[-1]!r}",
                            "the last dimension must be contiguous (stride 1 as a constant)")
    padding = unwrap(padding_option) or "zero"
    if padding not in ("zero", "nan"):
        raise LanguageError(f"padding option {padding!r} is not supported",
                            "use padding_option='zero' or 'nan'")
    if padding == "nan" and element.is_int():
        raise LanguageError("Padding option `nan` is not supported for integer blocks")
    shape_t = [_int_scalar(s, dt.int32, sem, "make_tensor_descriptor shape") for s in shape]
    strides_t = [_int_scalar(s, dt.int64, sem, "make_tensor_descriptor strides")
                 for s in strides]
    attrs = {"padding": padding} if padding != "zero" else {}
    op = sem.builder.create("tt.make_tensor_descriptor",
                            [base.handle] + [s.handle for s in shape_t + strides_t],
                            [desc_ir_type(element, block_t)], attrs)
    return tensor_descriptor(op.result, element, block_t, shape_t, strides_t)


@builtin
def load_tensor_descriptor(desc, offsets, _semantic=None) -> tensor:
    """``desc.load(offsets)``."""
    return _desc(desc).load(offsets, _semantic=_semantic)


@builtin
def store_tensor_descriptor(desc, offsets, value, _semantic=None):
    """``desc.store(offsets, value)``."""
    return _desc(desc).store(offsets, value, _semantic=_semantic)


def _desc(d) -> tensor_descriptor:
    d = unwrap(d)
    if not isinstance(d, tensor_descriptor):
        raise LanguageError(f"expected a tensor descriptor, got {d!r}",
                            "make one with tl.make_tensor_descriptor or pass a "
                            "TensorDescriptor argument")
    return d
