"""Block pointers (Triton's ``language/semantic.py``): ``tl.make_block_ptr``, ``tl.advance`` and
loads/stores through them with ``boundary_check`` and ``padding_option``.

As Triton 3.6's ``triton-rewrite-tensor-pointer`` pass does, a block pointer is sugar over an
ordinary tile of pointers: the frontend keeps its parts (base pointer, shape and strides as
int64 scalars, offsets as int64 scalars) in a :class:`block_pointer` and each access builds

* ``ptrs = splat(base) + sum_d broadcast(expand(splat(off_d) + extsi(arange(0, B_d))) *
  splat(stride_d))`` with int64 offsets, and
* for every dim in ``boundary_check`` a mask ``0 <= idx_d < shape_d``, the masks and-ed,
* ``other`` = zeros (``padding_option="zero"``) or NaNs (``"nan"``); none for ``""``.

A block pointer is an *aggregate* (``_flatten``/``_unflatten``): loops and runtime ``if``
carry its five kinds of parts as separate values, as Triton's rewrite does.
"""
from __future__ import annotations

from . import dtypes as dt
from .core import LanguageError, builtin, tensor
from .semantic import unwrap, validate_block_shape


class block_pointer:
    """A pointer to a ``block_shape`` tile inside a ``shape`` tensor with ``strides``,
    positioned at ``offsets``. ``base`` is a scalar pointer tensor; ``shape``, ``strides``
    and ``offsets`` are tuples of int64 scalar tensors; ``block_shape`` and ``order`` are
    compile-time tuples."""

    def __init__(self, base, shape, strides, offsets, block_shape, order):
        self.base, self.shape, self.strides, self.offsets = base, tuple(shape), \
            tuple(strides), tuple(offsets)
        self.block_shape, self.order = tuple(block_shape), tuple(order)

    @builtin
    def advance(self, offsets, _semantic=None):
        """``bp.advance(offsets)``: Triton's method form of :func:`advance`."""
        return advance(self, offsets, _semantic=_semantic)

    @property
    def dtype(self):
        """``pointer_type(element)``: the type of the pointers the block pointer expands to."""
        return self.base.dtype

    @property
    def element_ty(self):
        return self.base.dtype.element_ty

    def _flatten(self):
        return [self.base, *self.shape, *self.strides, *self.offsets]

    def _unflatten(self, leaves):
        n = len(self.block_shape)
        return block_pointer(leaves[0], leaves[1:1 + n], leaves[1 + n:1 + 2 * n],
                             leaves[1 + 2 * n:1 + 3 * n], self.block_shape, self.order)

    def _structure(self):
        return ("block_ptr", self.base.dtype, self.block_shape, self.order)

    def __repr__(self):
        return (f"block_ptr<{self.element_ty}, block_shape={list(self.block_shape)}, "
                f"order={list(self.order)}>")


def _ints(values, what, n=None):
    values = unwrap(values)
    if isinstance(values, tensor) or not isinstance(values, (tuple, list)):
        values = [values]
    values = [unwrap(v) for v in values]
    if n is not None and len(values) != n:
        raise LanguageError(f"make_block_ptr: {what} has {len(values)} entries, expected {n} "
                            "(one per dimension)")
    return values


def _scalar_int(v, d, sem, what):
    if isinstance(v, int) and not isinstance(v, bool):
        return sem.constant(v, d)
    t = sem.to_tensor(v)
    if t.shape or not t.dtype.is_int():
        raise LanguageError(f"make_block_ptr: {what} entries must be integer scalars, got "
                            f"{t!r}")
    return sem.cast(t, d)


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order, _semantic=None):
    """A block pointer into the tensor at ``base`` (a scalar pointer) of ``shape`` and
    ``strides`` (elements), at ``offsets``, for tiles of ``block_shape`` (powers of two);
    ``order`` (a permutation) is the memory order hint, kept for Triton compatibility.
    Raises LanguageError for mismatched lengths, a non-pointer base or bad block shapes."""
    sem = _semantic
    base = sem.to_tensor(unwrap(base))
    if not base.dtype.is_ptr() or base.shape:
        raise LanguageError(f"make_block_ptr needs a scalar pointer as base, got {base!r}")
    block_shape = validate_block_shape(_ints(block_shape, "block_shape"))
    n = len(block_shape)
    order = _ints(order, "order", n)
    if sorted(order) != list(range(n)):
        raise LanguageError(f"make_block_ptr: order must be a permutation of "
                            f"{list(range(n))}, got {order}")
    shape = [_scalar_int(v, dt.int64, sem, "shape") for v in _ints(shape, "shape", n)]
    strides = [_scalar_int(v, dt.int64, sem, "strides") for v in _ints(strides, "strides", n)]
    offsets = [_scalar_int(v, dt.int64, sem, "offsets") if isinstance(v, int) else
               sem.cast(_scalar_int(v, dt.int32, sem, "offsets"), dt.int64)
               for v in _ints(offsets, "offsets", n)]
    return block_pointer(base, shape, strides, offsets, block_shape, order)


@builtin
def advance(base, offsets, _semantic=None):
    """A new block pointer moved by ``offsets`` (int32 scalars, one per dim); the original
    is unchanged (reassign the result)."""
    sem = _semantic
    bp = unwrap(base)
    if not isinstance(bp, block_pointer):
        raise LanguageError(f"tl.advance needs a block pointer, got {bp!r}",
                            "make one with tl.make_block_ptr")
    deltas = _ints(offsets, "offsets", len(bp.block_shape))
    new = [sem.add(o, sem.cast(_scalar_int(d, dt.int32, sem, "offsets"), dt.int64))
           if not (isinstance(d, int) and d == 0) else o
           for o, d in zip(bp.offsets, deltas, strict=False)]
    return block_pointer(bp.base, bp.shape, bp.strides, new, bp.block_shape, bp.order)


def _dims(boundary_check, rank):
    dims = unwrap(boundary_check)
    if dims is None:
        return []
    dims = [unwrap(d) for d in (dims if isinstance(dims, (tuple, list)) else [dims])]
    for d in dims:
        if not isinstance(d, int) or not 0 <= d < rank:
            raise LanguageError(f"boundary_check dimension {d!r} is out of range for a block "
                                f"of rank {rank}")
    return sorted(set(dims))


def expand(bp: block_pointer, boundary_check, sem):
    """The pointer tile and the mask (None without checks) of an access through ``bp``."""
    shape = bp.block_shape
    rank = len(shape)
    idx, total = [], None
    base = sem.broadcast_to_shape(bp.base, shape)  # the ops in the order of Triton's rewrite
    for d in range(rank):
        off = sem.broadcast_to_shape(bp.offsets[d], (shape[d],))
        r = sem._op("tt.make_range", [], dt.int32, (shape[d],), {"start": 0, "end": shape[d]})
        i = sem.add(off, sem.cast(r, dt.int64))
        for a in range(rank):
            if a != d:
                i = sem.expand_dims(i, a)
        idx.append(i)
        term = sem.broadcast_to_shape(sem.mul(i, bp.strides[d]), shape)
        total = term if total is None else sem.add(total, term)
    ptrs = sem.addptr(base, total)
    mask = None
    for d in _dims(boundary_check, rank):
        ok = sem.logical("and", sem.compare("ge", idx[d], 0), sem.compare("lt", idx[d],
                                                                          bp.shape[d]))
        ok = sem.broadcast_to_shape(ok, shape)
        mask = ok if mask is None else sem.bitwise("and", mask, ok)
    return ptrs, mask


def padding(bp: block_pointer, padding_option):
    """The ``other`` value of a load: None, 0 or NaN (``padding_option`` "", "zero", "nan")."""
    p = unwrap(padding_option) or ""
    if p not in ("", "zero", "nan"):
        raise LanguageError(f"padding option {p!r} is not supported",
                            "use padding_option='zero' or 'nan'")
    if p == "nan":
        if not bp.element_ty.is_floating():
            raise LanguageError("padding_option='nan' is only supported for floating point "
                                "blocks")
        return float("nan")
    return 0 if p == "zero" else None


def check_access(mask, other, what):
    if unwrap(mask) is not None or unwrap(other) is not None:
        raise LanguageError(f"`mask` and `other` arguments cannot be specified for {what} "
                            "block pointers", "use boundary_check=(dims...) and "
                            "padding_option instead")
