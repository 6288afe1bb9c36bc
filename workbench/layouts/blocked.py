"""Builders of blocked layouts, reproducing Triton 3.6 exactly.

* :func:`blocked_for_shape` is Triton's shape-based builder ``BlockedEncodingAttr::get(shape,
  sizePerThread, order, numWarps, threadsPerWarp, CTALayout)`` (``TritonGPUAttrDefs.td``).
* :func:`default_blocked` is ``getDefaultBlockedEncoding`` (``lib/Dialect/TritonGPU/IR/
  Dialect.cpp``), used by the ``convert-triton-to-tritongpu`` pass for every tensor.
* :func:`coalesced_blocked` is the last step of the coalescing pass (``Coalesce.cpp`` /
  ``CoalesceUtils.cpp``, ``buildCoalescedEncoding``) once the order and per-thread width are known.
"""
from __future__ import annotations

from collections.abc import Sequence
from math import prod

from .encodings import WARP_SIZE, BlockedLayout
from .errors import LayoutError
from .linear import is_pow2


def _clamp(x: int, lo: int, hi: int) -> int:
    return max(lo, min(x, hi))


def blocked_for_shape(shape: Sequence[int], size_per_thread: Sequence[int], order: Sequence[int],
                      num_warps: int, threads_per_warp: int = WARP_SIZE) -> BlockedLayout:
    """Triton's shape-based blocked layout builder.

    Walks the dims in ``order`` except the last; for dim ``i``::

        threadsPerCTA     = clamp(remainingThreads, 1, max(1, shape[i] // sizePerThread[i]))
        threadsPerWarp[i] = clamp(threadsPerCTA, 1, remainingLanes)
        warpsPerCTA[i]    = clamp(threadsPerCTA // threadsPerWarp[i], 1, remainingWarps)

    then divides the remaining lanes, warps and threads; the last dim of ``order`` takes all
    remaining lanes and warps.

    Args:
        shape: tensor shape (ints >= 1), one per dim.
        size_per_thread: elements per thread per dim (powers of two).
        order: dims from fastest to slowest varying (a permutation).
        num_warps: warps per CTA (power of two).
        threads_per_warp: must be 32 (NVIDIA).
    Returns: the :class:`BlockedLayout`.
    Raises: LayoutError for mismatched lengths, non powers of two, or a warp of other than 32.
    Source: ``BlockedEncodingAttr::get`` builder in Triton 3.6 ``TritonGPUAttrDefs.td``.
    Example: shape (128, 64), spt (1, 8), order (1, 0), 8 warps ->
    threadsPerWarp (4, 8), warpsPerCTA (8, 1).
    """
    shape = tuple(int(s) for s in shape)
    spt = tuple(int(s) for s in size_per_thread)
    order = tuple(int(o) for o in order)
    rank = len(shape)
    if len(spt) != rank or len(order) != rank:
        raise LayoutError(
            f"shape {list(shape)}, sizePerThread {list(spt)} and order {list(order)} must have "
            f"the same length")
    if rank == 0:
        raise LayoutError("shape must have at least one dim")
    if any(s < 1 for s in shape):
        raise LayoutError(f"shape {list(shape)} must have positive extents")
    if sorted(order) != list(range(rank)):
        raise LayoutError(f"order = {list(order)} must be a permutation of 0..{rank - 1}")
    if threads_per_warp != WARP_SIZE:
        raise LayoutError(
            f"threads_per_warp = {threads_per_warp}: a warp has {WARP_SIZE} threads on NVIDIA GPUs")
    if not is_pow2(num_warps):
        raise LayoutError(f"num_warps = {num_warps} must be a power of two")
    if any(not is_pow2(s) for s in spt):
        raise LayoutError(f"sizePerThread = {list(spt)}: every entry must be a power of two")

    tpw = [1] * rank
    wpc = [1] * rank
    remaining_lanes = threads_per_warp
    remaining_threads = num_warps * threads_per_warp
    remaining_warps = num_warps
    prev_lanes = 1
    prev_warps = 1
    for i in order[:-1]:
        threads_per_cta = _clamp(remaining_threads, 1, max(1, shape[i] // spt[i]))
        tpw[i] = _clamp(threads_per_cta, 1, remaining_lanes)
        wpc[i] = _clamp(threads_per_cta // tpw[i], 1, remaining_warps)
        remaining_warps //= wpc[i]
        remaining_lanes //= tpw[i]
        remaining_threads //= threads_per_cta
        prev_lanes *= tpw[i]
        prev_warps *= wpc[i]
    last = order[-1]
    tpw[last] = threads_per_warp // prev_lanes
    wpc[last] = num_warps // prev_warps
    return BlockedLayout(spt, tuple(tpw), tuple(wpc), order)


def default_blocked(shape: Sequence[int], num_warps: int,
                    threads_per_warp: int = WARP_SIZE) -> BlockedLayout:
    """The layout ``convert-triton-to-tritongpu`` gives a tensor of ``shape`` (Triton 3.6).

    ``sizePerThread`` all 1, ``order`` row-major ``(rank-1, ..., 0)``, then
    :func:`blocked_for_shape`. E.g. ``(1024,)`` with 4 warps -> spt (1,), tpw (32,), wpc (4,);
    ``(32, 64)`` with 4 warps -> tpw (1, 32), wpc (2, 2).
    Raises LayoutError as :func:`blocked_for_shape`.
    Source: ``getDefaultBlockedEncoding`` in ``lib/Dialect/TritonGPU/IR/Dialect.cpp``.
    """
    rank = len(shape)
    return blocked_for_shape(shape, (1,) * rank, tuple(range(rank - 1, -1, -1)), num_warps,
                             threads_per_warp)


def coalesced_blocked(shape: Sequence[int], order: Sequence[int], per_thread: int,
                      num_warps: int, threads_per_warp: int = WARP_SIZE) -> BlockedLayout:
    """The blocked layout the coalescing pass builds once ``order`` and ``per_thread`` are known.

    Applies the pass's cap ``per_thread = min(per_thread, max(numel // (num_warps * 32), 1))``,
    puts it in ``sizePerThread[order[0]]`` (others 1) and calls :func:`blocked_for_shape`.
    ``per_thread`` is in elements (e.g. 4 for 16-byte fp32 accesses).
    Source: ``buildCoalescedEncoding`` in Triton 3.6 ``lib/Dialect/TritonGPU/Transforms/
    Coalesce.cpp``.
    """
    rank = len(shape)
    numel = prod(int(s) for s in shape)
    per_thread = min(int(per_thread), max(numel // (num_warps * threads_per_warp), 1))
    spt = [1] * rank
    spt[int(order[0])] = per_thread
    return blocked_for_shape(shape, spt, order, num_warps, threads_per_warp)
