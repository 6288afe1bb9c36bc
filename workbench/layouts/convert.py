"""Conversion of every encoding to its canonical :class:`LinearLayout` for a tensor shape.

This is the one source of truth for "which thread holds which element": code generation, the
ownership arrays, the pictures and the bank analysis all call :func:`to_linear`.

The constructions follow Triton 3.6 ``lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp``
(``toLinearLayout``, ``combineCtaCgaWithShape``, ``ensureLayoutNotLargerThan``/``...SmallerThan``,
``nvidiaMmaTile``, ``fmaDotToLinearLayout``, ``swizzledSharedToLinearLayout``,
``nvmmaSharedToLinearLayout``), the PTX ISA section "Matrix Fragments for mma.m16n8k16"
(9.7.14.5.8) for the MMA fragments, and arXiv:2505.23819.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod

from .encodings import (
    BlockedLayout,
    DotOperandLayout,
    LinearEncoding,
    MmaLayout,
    NVMMASharedLayout,
    SliceLayout,
    SwizzledSharedLayout,
)
from .errors import LayoutError
from .linear import LinearLayout, is_pow2, log2_exact, product, standard_out_dims


def _check_shape(shape: Sequence[int], rank: int | None) -> tuple[int, ...]:
    shape = tuple(int(s) for s in shape)
    if rank is not None and len(shape) != rank:
        raise LayoutError(f"shape {list(shape)} has rank {len(shape)}, the layout has rank {rank}")
    for s in shape:
        if not is_pow2(s):
            raise LayoutError(
                f"shape {list(shape)}: every extent must be a power of two (Triton's rule for "
                f"tensor shapes), got {s}")
    return shape


def _dim(d: int) -> str:
    return f"dim{d}"


def identity_nd(in_dim: str, sizes: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Identity over an N-d box (Triton's ``identityStandardND``): dims taken in ``order``
    (fastest first); out-dims are listed in that order too."""
    return product(LinearLayout.identity1d(sizes[d], in_dim, _dim(d)) for d in order)


def _broadcast_nd(in_dim: str, sizes: Sequence[int], order: Sequence[int],
                  broadcast_dim: int) -> LinearLayout:
    """Like :func:`identity_nd` but dim ``broadcast_dim`` gets zero bases
    (``broadcastedDotOperandLayout``)."""
    parts = []
    for d in order:
        make = LinearLayout.zeros1d if d == broadcast_dim else LinearLayout.identity1d
        parts.append(make(sizes[d], in_dim, _dim(d)))
    return product(parts)


def ensure_not_larger(ll: LinearLayout, shape: dict[str, int]) -> LinearLayout:
    """Zero the largest bases of each out-dim until it fits ``shape`` (broadcast).

    Source: Triton ``ensureLayoutNotLargerThan`` (broadcastRegisters = true): zeroed register
    bases are kept, so registers may hold duplicates.
    """
    bases = {k: [list(v) for v in vecs] for k, vecs in ll.bases.items()}
    sizes = ll.out_dim_sizes
    for k, name in enumerate(ll.out_dims):
        actual, desired = sizes[name], shape.get(name, 1)
        if actual <= desired:
            continue
        cands = [(vecs[i][k], in_name, i) for in_name, vecs in bases.items()
                 for i in range(len(vecs)) if vecs[i][k] != 0]
        cands.sort(key=lambda t: -t[0])
        for _val, in_name, i in cands:
            if actual <= desired:
                break
            bases[in_name][i][k] = 0
            actual >>= 1
        sizes[name] = min(sizes[name], desired)
    return LinearLayout(bases, sizes)


def ensure_not_smaller(ll: LinearLayout, shape: dict[str, int],
                       in_dim: str = "register") -> LinearLayout:
    """Append ``in_dim`` bases (repetitions) to each out-dim, in out-dim order, until it covers
    ``shape``. Source: Triton ``ensureLayoutNotSmallerThan``."""
    for name in ll.out_dims:
        actual, desired = ll.out_dim_size(name), shape.get(name, 1)
        if desired > actual:
            ll = ll * LinearLayout.identity1d(desired // actual, in_dim, name)
    return ll


def combine_with_shape(cta: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """Fit a CTA-tile layout to ``shape`` (broadcast or repeat) and order out-dims dim0, dim1...

    Source: Triton ``combineCtaCgaWithShape`` for a single CTA (the CGA layout is trivial).
    """
    labeled = {_dim(d): s for d, s in enumerate(shape)}
    ll = ensure_not_smaller(ensure_not_larger(cta, labeled), labeled)
    # Out-dims the tile never mentioned (size 1) must still be present.
    missing = [n for n in labeled if n not in ll.out_dims]
    if missing:
        ll = ll * LinearLayout({}, {n: 1 for n in missing})
        ll = ensure_not_smaller(ll, labeled)
    ll = ll.transpose_outs(standard_out_dims(len(shape)))
    for req in ("register", "lane", "warp", "block"):
        if req not in ll.in_dims:
            ll = LinearLayout({**ll.bases, req: []}, ll.out_dim_sizes)
    return ll.transpose_ins(("register", "lane", "warp", "block"))


# ---------------------------------------------------------------------- distributed
def blocked_to_linear(layout: BlockedLayout, shape: Sequence[int]) -> LinearLayout:
    """Blocked: identity on register over sizePerThread, lane over threadsPerWarp, warp over
    warpsPerCTA (each in ``order``), then repetitions as extra register bases (order[0] first)
    and broadcast (zero bases, largest first) for shapes smaller than the CTA tile.
    Source: ``BlockedEncodingAttr::toLinearLayout`` (Triton 3.6 ``LinearLayoutConversions.cpp``)."""
    shape = _check_shape(shape, layout.rank)
    cta = (identity_nd("register", layout.size_per_thread, layout.order)
           * identity_nd("lane", layout.threads_per_warp, layout.order)
           * identity_nd("warp", layout.warps_per_cta, layout.order))
    return combine_with_shape(cta, shape)


def _mma_tile(tile_shape: Sequence[int], k_width: int, order: Sequence[int],
              rep_order: Sequence[int]) -> LinearLayout:
    """One warp's MMA tile (Triton's ``nvidiaMmaTile``).

    Inner dim (``order[0]``): ``k_width`` registers, then 4 lanes; outer dim: 8 lanes, then
    ``m/8`` registers; then ``n/(4*k_width)`` registers along the inner dim. With the 16x8
    accumulator and k_width 2 this is PTX ISA 9.7.14.5.8: row = groupID + 8*(i >= 2),
    col = 2*threadID_in_group + (i & 1).
    """
    inner, outer = order[0], order[1]
    m, n = tile_shape[outer], tile_shape[inner]
    if m % 8 or n % (4 * k_width):
        raise LayoutError(f"MMA tile {list(tile_shape)} is not a multiple of 8 x {4 * k_width}")
    base = LinearLayout({"register": []}, {_dim(d): 1 for d in rep_order})
    return product([
        base,
        LinearLayout.identity1d(k_width, "register", _dim(inner)),
        LinearLayout.identity1d(4, "lane", _dim(inner)),
        LinearLayout.identity1d(8, "lane", _dim(outer)),
        LinearLayout.identity1d(m // 8, "register", _dim(outer)),
        LinearLayout.identity1d(n // (4 * k_width), "register", _dim(inner)),
    ])


def _matrix_order(rank: int, row_major: bool) -> tuple[int, ...]:
    """Triton's ``getMatrixOrder``: fastest dim first, batch dims last; ``row_major`` False
    swaps the two matrix dims (rank 3: (2, 1, 0) or (1, 2, 0))."""
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return tuple(order)


def _mma_warp_order(mma: MmaLayout) -> tuple[int, ...]:
    # getMatrixOrder(rank, rowMajor = !isHopper): v2 row-major warps, v3 warps along M first.
    return _matrix_order(mma.rank, mma.version_major == 2)


def mma_to_linear(layout: MmaLayout, shape: Sequence[int]) -> LinearLayout:
    """MMA accumulator (v2: 16x8 per warp; v3: 16xN per warp, warps stacked along M first).

    Repetitions are register bases with N fastest (row-major repOrder).
    Source: ``NvidiaMmaEncodingAttr::toLinearLayout``; PTX ISA 9.7.14.5.8 (mma.m16n8k16 C/D
    fragment) and 9.7.15.5.1 (wgmma D fragment)."""
    shape = _check_shape(shape, layout.rank)
    tile = layout.instr_shape if layout.version_major == 2 else layout.instr_shape[:2]
    order = _matrix_order(layout.rank, True)
    cta = _mma_tile(tile, 2, order, order)
    warps = identity_nd("warp", layout.warps_per_cta, _mma_warp_order(layout))
    cta = cta * warps.transpose_outs(cta.out_dims)
    return combine_with_shape(cta, shape)


def dot_operand_to_linear(layout: DotOperandLayout, shape: Sequence[int]) -> LinearLayout:
    """Dot operand A (opIdx 0, M x K) or B (opIdx 1, K x N).

    * MMA parent: tile ``16 x 8*kWidth`` (A) or ``8*kWidth x 8`` (B) laid out like the
      accumulator with K as the inner dim, K repetitions first, warps broadcast along K
      (PTX ISA 9.7.14.5.8 A/B fragments: A row = groupID + 8*((i>>1)&1), k = 2*tig + (i&1) +
      8*(i>>2); B k = 2*tig + (i&1) + 8*(i>>1), n = groupID for kWidth 2).
    * Blocked parent (FMA): each thread holds the whole K extent; the other dim follows the
      parent; lanes and warps along K are broadcast.
    Source: ``nvidiaDotToLinearLayout`` and ``fmaDotToLinearLayout`` in Triton 3.6.
    """
    parent = layout.parent
    shape = _check_shape(shape, parent.rank)
    rank = len(shape)
    is_a = layout.op_idx == 0
    k_dim = rank - 1 if is_a else rank - 2
    if isinstance(parent, BlockedLayout):
        spt = list(parent.size_per_thread)
        spt[k_dim] = shape[k_dim]
        order = parent.order
        cta = (identity_nd("register", spt, order)
               * _broadcast_nd("lane", parent.threads_per_warp, order, k_dim)
               * _broadcast_nd("warp", parent.warps_per_cta, order, k_dim))
        return combine_with_shape(cta, shape)
    k_width = layout.k_width
    batch = (1,) * (rank - 2)
    tile = batch + ((16, 8 * k_width) if is_a else (8 * k_width, 8))
    order = _matrix_order(rank, is_a)   # K fastest (getOrderForDotOperand, kContig)
    cta = _mma_tile(tile, k_width, order, order)
    warps = _broadcast_nd("warp", parent.warps_per_cta, _mma_warp_order(parent), k_dim)
    cta = cta * warps.transpose_outs(cta.out_dims)
    return combine_with_shape(cta, shape)


def slice_to_linear(layout: SliceLayout, shape: Sequence[int]) -> LinearLayout:
    """Slice: the parent's layout for ``shape`` with a 1 inserted at ``dim``, that out-dim
    projected away, and the register bases that became zero removed.
    Source: ``SliceEncodingAttr::toLinearLayout`` (Triton 3.6 ``LinearLayoutConversions.cpp``)."""
    shape = _check_shape(shape, layout.rank)
    parent_shape = list(shape)
    parent_shape.insert(layout.dim, 1)
    pl = to_linear(layout.parent, parent_shape)
    keep = [k for k in range(pl.rank) if k != layout.dim]
    bases = {}
    for name, vecs in pl.bases.items():
        proj = [tuple(v[k] for k in keep) for v in vecs]
        if name == "register":
            proj = [v for v in proj if any(v)]
        bases[name] = proj
    return LinearLayout(bases, {_dim(i): s for i, s in enumerate(shape)})


def linear_encoding_to_linear(layout: LinearEncoding, shape: Sequence[int]) -> LinearLayout:
    """``#ttg.linear``: its own layout, broadcast or repeated to ``shape`` like every layout."""
    shape = _check_shape(shape, layout.rank)
    return combine_with_shape(layout.linear_layout, shape)


# ---------------------------------------------------------------------- shared
def swizzled_shared_to_linear(layout: SwizzledSharedLayout, shape: Sequence[int]) -> LinearLayout:
    """Map from shared-memory ``offset`` (in elements) to tensor coordinate.

    Column bits map to columns; row bit ``2**i`` maps to ``(row 2**i, col (vec * ((2**i //
    perPhase) % maxPhase)) % numCols)``; dims beyond the two fastest stack outside.
    Source: ``swizzledSharedToLinearLayout`` (Triton 3.6 ``LinearLayoutConversions.cpp``).
    """
    shape = _check_shape(shape, layout.rank)
    rank = len(shape)
    if rank == 1:
        return LinearLayout.identity1d(shape[0], "offset", "dim0")
    col_dim, row_dim = layout.order[0], layout.order[1]
    ncols, nrows = shape[col_dim], shape[row_dim]
    bases = [(0, 1 << c) for c in range(log2_exact(ncols))]
    for b in range(log2_exact(nrows)):
        row = 1 << b
        phase = (row // layout.per_phase) % layout.max_phase
        bases.append((row, (layout.vec * phase) % ncols))
    ll = LinearLayout({"offset": bases}, {_dim(row_dim): nrows, _dim(col_dim): ncols})
    for d in layout.order[2:]:
        ll = ll * LinearLayout.identity1d(shape[d], "offset", _dim(d))
    return ll.transpose_outs(standard_out_dims(rank))


def nvmma_shared_to_linear(layout: NVMMASharedLayout, shape: Sequence[int]) -> LinearLayout:
    """Map from shared ``offset`` (elements) to tensor coordinate for ``#ttg.nvmma_shared``.

    A swizzle atom is 8 rows x ``swizzlingByteWidth`` bytes (``tileCols`` elements), with row bit
    ``2**i`` XOR-ing the column by ``vec * ((2**i // perPhase) % maxPhase)``; then the rest of the
    rows stack, then further column tiles ("leading dimension offset"). ``transposed`` swaps the
    roles of the two dims. Without swizzle: plain row-major (column-major when transposed).
    Leading dims of a rank > 2 shape are flattened into rows.
    Source: ``nvmmaSharedToLinearLayout`` / ``getCoreMatrixLinearLayout`` (Triton 3.6); PTX ISA
    9.7.15.5.1 (wgmma shared memory matrix layout, swizzling modes).
    Raises: LayoutError when the tile is smaller than one swizzle atom or rank < 2.
    """
    shape = _check_shape(shape, None)
    rank = len(shape)
    if rank < 2:
        raise LayoutError(f"nvmma_shared needs a tensor of rank >= 2, got shape {list(shape)}")
    if layout.transposed and rank > 2:
        raise LayoutError("transposed nvmma_shared is supported for rank-2 tensors only")
    rows, cols = prod(shape[:-1]), shape[-1]
    if layout.transposed:
        rows, cols = cols, rows
    if layout.swizzling_byte_width == 0:
        ll2 = (LinearLayout.identity1d(cols, "offset", "c")
               * LinearLayout.identity1d(rows, "offset", "r"))
    else:
        tile_cols = layout.swizzling_byte_width * 8 // layout.element_bit_width
        if cols < tile_cols or rows < 8:
            raise LayoutError(
                f"nvmma_shared with swizzlingByteWidth = {layout.swizzling_byte_width} needs at "
                f"least 8 rows x {tile_cols} contiguous elements, got shape {list(shape)}")
        bases = [(0, 1 << c) for c in range(log2_exact(tile_cols))]
        for b in range(3):
            row = 1 << b
            bases.append((row, layout.vec * ((row // layout.per_phase) % layout.max_phase)))
        ll2 = LinearLayout({"offset": bases}, {"r": 8, "c": tile_cols})
        ll2 = ensure_not_smaller(ll2, {"r": rows, "c": cols}, in_dim="offset")
    ll2 = ll2.transpose_outs(("r", "c"))
    if layout.transposed:
        # r runs along dim1 (the outer, contiguous dim), c along dim0.
        vecs: list[tuple[int, ...]] = [(v[1], v[0]) for v in ll2.in_dim_bases("offset")]
        return LinearLayout({"offset": vecs}, {"dim0": shape[0], "dim1": shape[1]})
    # split the flattened row index into the leading dims (row-major).
    outs = standard_out_dims(rank)
    vecs = []
    for r, c in ll2.in_dim_bases("offset"):
        coord = [0] * rank
        rem = r
        for d in range(rank - 2, -1, -1):
            coord[d] = rem % shape[d]
            rem //= shape[d]
        coord[-1] = c
        vecs.append(tuple(coord))
    return LinearLayout({"offset": vecs}, dict(zip(outs, shape, strict=False)))


# ---------------------------------------------------------------------- dispatch
def to_linear(layout, shape: Sequence[int]) -> LinearLayout:
    """The canonical linear layout of ``layout`` for a tensor of ``shape``.

    Args:
        layout: any encoding of :mod:`workbench.layouts.encodings` (or a LinearLayout, returned
            as is after a shape check).
        shape: the tensor's shape; every extent a power of two.
    Returns: for distributed layouts a LinearLayout with in-dims ``register, lane, warp, block``
        (lane of size 32) and out-dims ``dim0..``; for shared layouts in-dim ``offset``
        (elements) and out-dims ``dim0..``.
    Raises: LayoutError for a rank mismatch, a non power-of-two extent, or an unsupported layout.
    Source: Triton 3.6 ``LinearLayoutConversions.cpp``; arXiv:2505.23819.
    Results are cached per (layout, shape) (see ``_CACHE``); a layout that raises is not.
    """
    try:
        key = (layout, tuple(int(s) for s in shape))
        hit = _CACHE.get(key)
    except TypeError:  # an unhashable layout or shape: computed, not cached
        return _to_linear(layout, shape)
    if hit is None:
        hit = _to_linear(layout, shape)
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        _CACHE[key] = hit
    return hit


#: (layout, shape) -> LinearLayout: layouts are immutable and the conversion is a pure
#: function of them, so a compile that asks again (every op of a tensor type, every pass,
#: every autotune configuration sharing the layout) gets the same object back at once
_CACHE: dict = {}
_CACHE_SIZE = 8192


def _to_linear(layout, shape: Sequence[int]) -> LinearLayout:
    if isinstance(layout, LinearLayout):
        _check_shape(shape, layout.rank)
        if tuple(layout.out_dim_sizes.values()) != tuple(int(s) for s in shape):
            raise LayoutError(f"linear layout of out sizes {layout.out_dim_sizes} does not "
                              f"match shape {list(shape)}")
        return layout
    converters: dict[type, Callable[..., LinearLayout]] = {
        BlockedLayout: blocked_to_linear,
        MmaLayout: mma_to_linear,
        DotOperandLayout: dot_operand_to_linear,
        SliceLayout: slice_to_linear,
        LinearEncoding: linear_encoding_to_linear,
        SwizzledSharedLayout: swizzled_shared_to_linear,
        NVMMASharedLayout: nvmma_shared_to_linear,
    }
    fn = converters.get(type(layout))
    if fn is None:
        raise LayoutError(f"no linear layout for {layout!r}")
    return fn(layout, shape)


__all__ = ["to_linear", "identity_nd", "ensure_not_larger", "ensure_not_smaller",
           "combine_with_shape"]
