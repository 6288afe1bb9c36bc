"""Shape builtins (``triton.language``'s shape manipulation ops): ``reshape``, ``broadcast_to``,
``broadcast``, ``expand_dims``, ``view``, ``ravel``, ``join``, ``split``, ``interleave``, ``cat``,
``flip`` and ``sort``.

They emit Triton's ops (``tt.join``, ``tt.split``, ``tt.reshape``, ``tt.trans``, ``tt.cat``);
``flip`` and ``sort`` are built from those and elementwise ops, as Triton builds them in
``standard.py`` (so every backend that runs the primitives runs them).
"""
from __future__ import annotations

from . import dtypes as dt
from .core import LanguageError, builtin, tensor
from .reductions import reduce_tiles
from .semantic import ir_type, unwrap, validate_block_shape


def _axis(axis) -> int:
    axis = unwrap(axis)
    if isinstance(axis, tensor) or not isinstance(axis, int) or isinstance(axis, bool):
        raise LanguageError(f"axis must be a compile-time int, got {axis!r}")
    return axis


@builtin
def broadcast_to(input, *shape, _semantic=None):
    """Broadcast ``input`` to ``shape`` (size-1 dims only)."""
    if len(shape) == 1 and isinstance(unwrap(shape[0]), (tuple, list)):
        shape = unwrap(shape[0])
    return _semantic.broadcast_to_shape(unwrap(input), validate_block_shape(shape))


@builtin
def broadcast(input, other, _semantic=None):
    """Broadcast two tiles to their common shape; returns both."""
    a, b = _semantic.to_tensor(unwrap(input)), _semantic.to_tensor(unwrap(other))
    return _semantic.broadcast_values(a, b)


@builtin
def expand_dims(input, axis, _semantic=None):
    """Insert size-1 dims at ``axis`` (an int or a sequence, relative to the result rank).
    Raises LanguageError for an axis outside ``[-rank, rank)`` of the result ("invalid axis
    N") or two axes naming one dim ("duplicate axes"), as Triton does."""
    x = _semantic.to_tensor(unwrap(input))
    axes = unwrap(axis)
    axes = list(axes) if isinstance(axes, (tuple, list)) else [axes]
    rank = len(x.shape) + len(axes)
    for a in axes:
        if not -rank <= _axis(a) < rank:
            raise LanguageError(f"invalid axis {_axis(a)}. Expected {-rank} <= axis < {rank}")
    normalized = [_axis(a) % rank for a in axes]
    if len(set(normalized)) != len(normalized):
        raise LanguageError(f"duplicate axes, normalized axes = {normalized}")
    axes = sorted(normalized)
    for a in axes:
        x = _semantic.expand_dims(x, a)
    return x


@builtin
def unsqueeze(input, dim, _semantic=None):
    """A size-1 dim inserted at ``dim`` (Triton's ``tl.unsqueeze``: :func:`expand_dims` with
    one axis)."""
    return expand_dims(input, dim, _semantic=_semantic)


@builtin
def squeeze(input, dim, _semantic=None):
    """The size-1 dim ``dim`` removed (Triton's ``tl.squeeze``; ``dim`` may be negative).
    Raises :class:`LanguageError` when that dim is not of size 1."""
    x = _semantic.to_tensor(unwrap(input))
    d = unwrap(dim)
    rank = len(x.shape)
    if not isinstance(d, int) or not -rank <= d < rank:
        raise LanguageError(f"squeeze: dim {d!r} is out of range for a {rank}-D tile")
    d %= rank
    if x.shape[d] != 1:
        raise LanguageError(f"squeeze: dim {d} has size {x.shape[d]}, not 1",
                            "squeeze only removes dims of size 1; use a reduction otherwise")
    return reshape(x, [n for i, n in enumerate(x.shape) if i != d], _semantic=_semantic)


@builtin
def reshape(input, *shape, can_reorder=False, _semantic=None):
    """Same elements, new ``shape`` (``tt.reshape``); numel must match."""
    x = _semantic.to_tensor(unwrap(input))
    if len(shape) == 1 and isinstance(unwrap(shape[0]), (tuple, list)):
        shape = unwrap(shape[0])
    shape = tuple(unwrap(s) for s in shape)
    if not shape:
        if x.numel != 1:
            raise LanguageError("reshape to a scalar needs a 1-element tile")
        return _semantic.wrap(_semantic.builder.create(
            "tt.unsplat", [x.handle], [ir_type(x.dtype)], {}).result, x.dtype)
    shape = validate_block_shape(shape)
    n = 1
    for s in shape:
        n *= s
    if n != x.numel:
        raise LanguageError(f"cannot reshape {list(x.shape)} ({x.numel} elements) to "
                            f"{list(shape)} ({n} elements)")
    if shape == x.shape:
        return x
    attrs = {"allow_reorder": True} if unwrap(can_reorder) else {}
    return _semantic._op("tt.reshape", [x], x.dtype, shape, attrs)


def _t(x, sem):
    return sem.to_tensor(unwrap(x))


def _log2(n: int) -> int:
    if n < 1 or n & (n - 1):
        raise LanguageError(f"size {n} is not a power of two")
    return n.bit_length() - 1


@builtin
def view(input, *shape, _semantic=None):
    """``reshape(input, shape, can_reorder=True)`` (deprecated in Triton; may reorder, here
    it keeps row-major order)."""
    return reshape(input, *shape, can_reorder=True, _semantic=_semantic)


@builtin
def ravel(x, can_reorder=False, _semantic=None):
    """The elements of ``x`` as a 1-D tile (row-major)."""
    x = _t(x, _semantic)
    return reshape(x, x.numel, can_reorder=can_reorder, _semantic=_semantic)


@builtin
def join(a, b, _semantic=None):
    """Stack ``a`` and ``b`` (broadcast to one shape) along a new minor dim of size 2
    (``tt.join``); two scalars give a ``[2]`` tile."""
    sem = _semantic
    a, b = _t(a, sem), _t(b, sem)
    a, b = sem.binary_checked(a, b, arithmetic=False)
    if a.dtype != b.dtype:
        raise LanguageError(f"join needs one dtype, got {a.dtype} and {b.dtype}")
    scalar = not a.shape
    if scalar:
        a, b = sem.expand_dims(a, 0), sem.expand_dims(b, 0)
    out = sem._op("tt.join", [a, b], a.dtype, a.shape + (2,))
    return reshape(out, 2, _semantic=sem) if scalar else out


@builtin
def split(a, _semantic=None):
    """The two halves of ``a`` along its last dim, which must be 2 (``tt.split``); a ``[2]``
    tile gives two scalars."""
    sem = _semantic
    a = _t(a, sem)
    if not a.shape or a.shape[-1] != 2:
        raise LanguageError(f"split needs a tile whose last dim is 2, got shape "
                            f"{list(a.shape)}", "use tl.reshape to make the last dim 2")
    scalar = len(a.shape) == 1
    if scalar:
        a = sem.expand_dims(a, 0)
    shape = a.shape[:-1]
    op = sem.builder.create("tt.split", [a.handle], [ir_type(a.dtype, shape)] * 2)
    if op.results[0].name is None:   # the result names Triton's tt.split prints
        op.results[0].name, op.results[1].name = "outLHS", "outRHS"
    lo, hi = (sem.wrap(r, a.dtype, shape) for r in op.results)
    if scalar:
        lo, hi = (reshape(v, (), _semantic=sem) for v in (lo, hi))
    return lo, hi


@builtin
def interleave(a, b, _semantic=None):
    """``a[0], b[0], a[1], b[1], ...`` along the last dim (join, then reshape)."""
    c = join(a, b, _semantic=_semantic)
    if len(c.shape) == 1:
        return c
    return reshape(c, *(c.shape[:-2] + (2 * c.shape[-2],)), _semantic=_semantic)


@builtin
def cat(input, other, can_reorder=False, _semantic=None):
    """Concatenate along dim 0 (``tt.cat``). As in Triton 3.6 only ``can_reorder=True`` is
    accepted; here the order is kept (``input`` then ``other``)."""
    sem = _semantic
    if not unwrap(can_reorder):
        raise LanguageError("current implementation of `cat` always may reorder elements",
                            "pass can_reorder=True (Triton 3.6 requires it too)")
    a, b = _t(input, sem), _t(other, sem)
    if a.dtype != b.dtype or a.shape[1:] != b.shape[1:] or not a.shape:
        raise LanguageError(f"cat needs tiles of one dtype and trailing shape, got {a!r} and "
                            f"{b!r}")
    shape = (a.shape[0] + b.shape[0],) + a.shape[1:]
    if shape[0] & (shape[0] - 1):
        raise LanguageError(f"cat result dim {shape[0]} is not a power of two")
    return sem._op("tt.cat", [a, b], a.dtype, shape)


def _flip_dim(dim, rank):
    dim = unwrap(dim)
    if dim is None:
        return rank - 1
    if not isinstance(dim, int) or not -rank <= dim < rank:
        raise LanguageError(f"dim {dim!r} is out of range for a tile of rank {rank}")
    return dim % rank


def _int_view(x, sem):
    bits = max(8, x.dtype.primitive_bitwidth)
    it = {8: dt.int8, 16: dt.int16, 32: dt.int32, 64: dt.int64}[bits]
    if x.dtype.is_bool():
        return sem.cast(x, dt.int8), lambda y: sem.cast(y, dt.int1)
    return sem.bitcast(x, it), lambda y: sem.bitcast(y, x.dtype)


@builtin
def flip(x, dim=None, _semantic=None):
    """Reverse ``x`` along ``dim`` (default: the last); the extent must be a power of two.
    Built as Triton does: view the dim as ``[2] * log2(n)`` and swap each pair with an xor
    of the pair's xor-sum."""
    sem = _semantic
    x = _t(x, sem)
    if not x.shape:
        raise LanguageError("flip needs a tile")
    d = _flip_dim(dim, len(x.shape))
    steps = _log2(x.shape[d])
    if steps == 0:
        return x
    y, back = _int_view(x, sem)
    y = sem._op("tt.reshape", [y], y.dtype, x.shape[:d] + (2,) * steps + x.shape[d + 1:])
    for i in range(steps):
        s = reduce_tiles(y, d + i, lambda s_, a, b: s_.bitwise("xor", a, b), sem, True)
        y = sem.bitwise("xor", y, s)
    return back(sem._op("tt.reshape", [y], y.dtype, x.shape))


def _compare_swap(x, flip_bits, j, n, sem, descending_const):
    """One compare-and-swap step of a bitonic network over the last dim (size 2**n):
    partners differ in bit ``n - 1 - j`` of the index. ``flip_bits`` (a tile like ``x``,
    or None) says, per element, whether the pair's order is descending."""
    outer = x.numel >> n
    shape3 = (outer * (1 << j), 2, 1 << (n - j - 1))

    def halves(v):
        v = sem._op("tt.reshape", [v], v.dtype, shape3)
        v = sem._op("tt.trans", [v], v.dtype, (shape3[0], shape3[2], 2), {"order": [0, 2, 1]})
        return split(v, _semantic=sem)

    left, right = halves(x)
    if flip_bits is None and descending_const:
        cond = sem.compare("lt", left, right)
    else:
        cond = sem.compare("gt", left, right)
    if flip_bits is not None:
        fl, _ = halves(flip_bits)
        cond = sem.bitwise("xor", cond, fl)
    lo, hi = sem.where(cond, right, left), sem.where(cond, left, right)
    y = join(lo, hi, _semantic=sem)
    y = sem._op("tt.trans", [y], y.dtype, shape3, {"order": [0, 2, 1]})
    return sem._op("tt.reshape", [y], y.dtype, x.shape)


@builtin
def sort(x, dim=None, descending=False, _semantic=None):
    """Sort ``x`` along its last dim (a power of two) with a bitonic network, ascending or
    ``descending`` (Triton 3.6: only the last dim; ties keep no particular order; NaNs are
    not ordered)."""
    sem = _semantic
    x = _t(x, sem)
    if not x.shape:
        raise LanguageError("sort needs a tile")
    d = _flip_dim(dim, len(x.shape))
    if d != len(x.shape) - 1:
        raise LanguageError("only minor dimension is currently supported",
                            "sort along the last dim (tl.trans the tile first)")
    n = _log2(x.shape[-1])
    if n == 0:
        return x
    descending = bool(unwrap(descending))
    pos = sem.broadcast_to_shape(sem._op("tt.make_range", [], dt.int32, (x.shape[-1],),
                                         {"start": 0, "end": x.shape[-1]}), x.shape)
    for stage in range(1, n + 1):
        if stage < n:  # alternate directions in blocks of 2**stage
            bits = sem.bitwise("and", sem.bitwise("rshift", pos, stage), 1)
            flip_bits = sem.cast(bits, dt.int1)
        else:
            flip_bits = None
        for i in range(stage):
            x = _compare_swap(x, flip_bits, i + (n - stage), n, sem, descending)
    return x


@builtin
def item(input, _semantic=None):
    """The single element of a one-element tile as a scalar (Triton's ``tensor.item()``,
    ``tt.unsplat``);
    a scalar is returned as it is. Raises LanguageError for a tile of several elements."""
    x = _t(input, _semantic)
    if not x.shape:
        return x
    if x.numel != 1:
        raise LanguageError(f"item() needs a tile of one element, got shape {list(x.shape)}")
    return _semantic.wrap(_semantic.builder.create(
        "tt.unsplat", [x.handle], [ir_type(x.dtype)], {}).result, x.dtype)


@builtin
def histogram(input, num_bins, mask=None, _semantic=None):
    """int32 counts of the values of a 1-D integer tile in bins ``0 .. num_bins - 1``
    (``tt.histogram``; values outside are not counted; ``mask`` leaves elements out).
    Raises LanguageError for other ranks or dtypes, or a ``num_bins`` that is not a
    compile-time power of 2 (a tile's length must be one, as in Triton)."""
    sem = _semantic
    x = _t(input, sem)
    if len(x.shape) != 1 or not x.dtype.is_int():
        raise LanguageError("histogram only supports 1-D integer input, got "
                            f"{x.dtype} of shape {list(x.shape)}")
    n = unwrap(num_bins)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1 or n & (n - 1):
        raise LanguageError(f"num_bins must be a compile-time power of 2, got {n!r}",
                            "pass a tl.constexpr power of 2 such as 8 or 64")
    operands = [x]
    if unwrap(mask) is not None:
        m = sem.broadcast_to_shape(_t(mask, sem), x.shape)
        if m.dtype != dt.int1:
            raise LanguageError("the histogram's mask must be boolean")
        operands.append(m)
    return sem._op("tt.histogram", operands, dt.int32, (int(n),))


@builtin
def gather(src, index, axis, _semantic=None):
    """Elements of ``src`` picked along ``axis`` by the integer tile ``index`` (``tt.gather``;
    Triton's ``tl.gather``, like ``torch.gather``): the result has ``index``'s shape and
    ``src``'s dtype, ``out[c] = src[c with c[axis] = index[c]]``; for 2-D and ``axis=0``,
    ``out[i][j] = src[index[i][j]][j]``. ``index`` must have ``src``'s rank and match its
    shape on every other dim (as Triton's ``semantic.gather`` checks); ``axis`` may be
    negative. Indices outside ``[0, src.shape[axis])`` raise on the interpreter and the CPU
    backend and give an unspecified value on CUDA. Raises LanguageError otherwise."""
    sem = _semantic
    x, idx, a = _t(src, sem), _t(index, sem), _axis(axis)
    if not idx.dtype.is_int():
        raise LanguageError(f"gather: index must be an integer tensor, got {idx.dtype}")
    rank = len(x.shape)
    if len(idx.shape) != rank or not rank:
        raise LanguageError(f"gather: source and index tensors must have the same rank, got "
                            f"{list(x.shape)} and {list(idx.shape)}")
    if not -rank <= a < rank:
        raise LanguageError(f"gather axis {a} must be < source rank ({rank})")
    a %= rank
    for d in range(rank):
        if d != a and idx.shape[d] != x.shape[d]:
            raise LanguageError(f"gather: index dim {d} ({idx.shape[d]}) must match the "
                                f"corresponding source dim ({x.shape[d]})",
                                "only the gathered axis may differ in size")
    return sem._op("tt.gather", [x, idx], x.dtype, tuple(idx.shape), {"axis": a})


@builtin
def topk(x, k, dim=None, _semantic=None):
    """The ``k`` largest elements along the last dim of ``x`` (both powers of two, k <= n),
    in descending order: shape ``x.shape[:-1] + (k,)``. As Triton 3.6's ``sort_impl`` with
    ``k`` (bitonic top-k, Shanbhag et al., "Efficient Top-K Query Processing on Massively
    Parallel Hardware"): blocks of ``k`` are sorted, then adjacent blocks are merged by an
    elementwise maximum of one block against the other reversed (a bitonic sequence holding
    the pair's top ``k``), which is sorted again, until one block is left. When ``k < n`` the
    values are compared as ``tl.max`` compares them, so floats narrower than 32 bits come back
    as fp32 and ints as int32 (as Triton's result does). Raises LanguageError for another dim
    or sizes that are not powers of two."""
    sem = _semantic
    x = _t(x, sem)
    if not x.shape:
        raise LanguageError("topk needs a tile")
    if _flip_dim(dim, len(x.shape)) != len(x.shape) - 1:
        raise LanguageError("only minor dimension is currently supported",
                            "take the top k along the last dim (tl.trans the tile first)")
    n, k = x.shape[-1], unwrap(k)
    if not isinstance(k, int) or k > n:
        raise LanguageError(f"topk needs a compile-time k <= {n}, got {k!r}")
    _log2(n), _log2(k)
    if k == n:
        return sort(x, descending=True, _semantic=sem)
    if x.dtype.primitive_bitwidth < 32:
        x = sem.cast(x, dt.float32 if x.dtype.is_floating() else dt.int32)
    lead, nb = x.shape[:-1], n // k
    y = sort(sem._op("tt.reshape", [x], x.dtype, lead + (nb, k)), _semantic=sem)
    perm = list(range(len(lead) + 1)) + [len(lead) + 2, len(lead) + 1]
    while nb > 1:
        nb //= 2
        pairs = sem._op("tt.reshape", [y], y.dtype, lead + (nb, 2, k))
        pairs = sem._op("tt.trans", [pairs], y.dtype, lead + (nb, k, 2), {"order": perm})
        first, second = split(pairs, _semantic=sem)
        y = sem.minmax("max", first, flip(second, _semantic=sem))
        y = sort(y, _semantic=sem)
    y = sem._op("tt.reshape", [y], y.dtype, lead + (k,))
    return flip(y, _semantic=sem)


__all__ = ["reshape", "broadcast_to", "broadcast", "expand_dims", "view", "ravel", "join",
           "split", "interleave", "cat", "flip", "sort", "topk", "item", "histogram",
           "gather"]
