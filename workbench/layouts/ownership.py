"""Which (warp, lane, register) owns each element of a tile.

Everything here is derived from :func:`workbench.layouts.convert.to_linear`, the single source
of truth shared with code generation and the pictures.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .convert import to_linear
from .errors import LayoutError
from .linear import LinearLayout


@dataclass(frozen=True, eq=False)
class Ownership:
    """Owner of every element of a tile under a distributed layout.

    Attributes:
        layout: the encoding (or LinearLayout) it was computed from.
        shape: the tile's shape (tuple of ints).
        linear: the layout's :class:`LinearLayout` for ``shape``.
        warp, lane, register: int64 arrays of ``shape``; for an element held by several
            (warp, lane, register) triples (broadcast) the owner with the lowest warp, then lane,
            then register.
        copies: int64 array of ``shape``: how many triples hold the element (>= 1).
    """

    layout: object
    shape: tuple[int, ...]
    linear: LinearLayout
    warp: np.ndarray
    lane: np.ndarray
    register: np.ndarray
    copies: np.ndarray

    @property
    def num_warps(self) -> int:
        """Warps of the layout."""
        return self.linear.in_dim_size("warp")

    @property
    def num_registers(self) -> int:
        """Registers per thread (including broadcast duplicates)."""
        return self.linear.in_dim_size("register")

    def __repr__(self) -> str:
        """One line: layout, shape, warps x lanes x registers and broadcast copies (the
        owner arrays are in ``warp``, ``lane``, ``register`` and ``copies``)."""
        text = str(self.layout)
        if len(text) > 160:
            text = text[:157] + "..."
        lanes = self.linear.in_dim_size("lane")
        most = int(self.copies.max()) if self.copies.size else 1
        copies = "each element held once" if most == 1 else \
            f"elements held by up to {most} threads/registers (broadcast)"
        return (f"Ownership({text} over {list(self.shape)}: {self.num_warps} warps x {lanes} "
                f"lanes x {self.num_registers} registers, {copies})")

    def thread_elements(self, warp: int, lane: int) -> list[tuple[int, ...]]:
        """Tensor coordinates held by thread (``warp``, ``lane``), in register order.

        Returns a list of ``num_registers`` tuples (duplicates included when registers
        broadcast). Raises LayoutError for a warp or lane out of range.
        """
        if not 0 <= warp < self.num_warps or not 0 <= lane < self.linear.in_dim_size("lane"):
            raise LayoutError(f"thread (warp={warp}, lane={lane}) is outside the layout's "
                              f"{self.num_warps} warps x {self.linear.in_dim_size('lane')} lanes")
        regs = np.arange(self.num_registers)
        pts = self.linear.apply_array(register=regs, lane=np.int64(lane), warp=np.int64(warp))
        return [tuple(int(x) for x in p) for p in pts]


def ownership(layout, shape: Sequence[int]) -> Ownership:
    """Owner arrays of a distributed layout over a tile of ``shape``.

    Args:
        layout: a distributed encoding (blocked, slice, nvidia_mma, dot_op, linear) or a
            LinearLayout with register/lane/warp in-dims.
        shape: tile shape, extents powers of two.
    Returns: :class:`Ownership` with int64 arrays of ``shape``.
    Raises: LayoutError for a shared layout or a bad shape.
    Source: the owner is the first hardware index in (warp, lane, register) lexicographic order
    whose linear-layout image is the element (arXiv:2505.23819 for the linear layouts).
    """
    if not getattr(layout, "distributed", True):
        raise LayoutError(
            f"ownership needs a distributed (register) layout; {type(layout).__name__} is a "
            f"shared-memory layout: use bank_conflicts or to_linear for it")
    shape = tuple(int(s) for s in shape)
    ll = to_linear(layout, shape)
    if "offset" in ll.in_dims:
        raise LayoutError("ownership needs a distributed layout, got a shared (offset) layout")
    coords = ll.coords()  # [W, L, R, rank]
    W, L, R, rank = coords.shape
    flat = np.ravel_multi_index(tuple(coords.reshape(-1, rank).T), shape) if rank else \
        np.zeros(W * L * R, np.int64)
    size = int(np.prod(shape)) if shape else 1
    copies = np.bincount(flat, minlength=size)
    if np.any(copies == 0):
        missing = np.unravel_index(int(np.argmin(copies)), shape)
        raise LayoutError(f"layout does not cover element {tuple(int(m) for m in missing)} of "
                          f"shape {list(shape)}")
    uniq, first = np.unique(flat, return_index=True)
    w_idx, l_idx, r_idx = np.unravel_index(first, (W, L, R))
    warp = np.empty(size, np.int64)
    lane = np.empty(size, np.int64)
    reg = np.empty(size, np.int64)
    warp[uniq], lane[uniq], reg[uniq] = w_idx, l_idx, r_idx
    return Ownership(layout=layout, shape=shape, linear=ll, warp=warp.reshape(shape),
                     lane=lane.reshape(shape), register=reg.reshape(shape),
                     copies=copies.reshape(shape).astype(np.int64))
