"""What GPU code generation needs from a layout, thread by thread.

For a distributed layout and a tile shape, the coordinate of register ``r`` held by thread
(``warp``, ``lane``) is (linear layout over GF(2), arXiv:2505.23819)::

    coord = register_offsets[r]  XOR  (XOR of thread_bases["lane"][i] for set bits i of lane)
                                 XOR  (XOR of thread_bases["warp"][j] for set bits j of warp)

so generated code computes the lane/warp part once per thread and adds the compile-time register
part. XOR equals addition only when no bit is set in two of the XOR-ed terms:
:func:`is_disjoint` checks that (true for blocked, MMA and dot-operand layouts; false for
swizzled shared layouts, where code must use a real XOR).
"""
from __future__ import annotations

from collections.abc import Sequence

from .convert import to_linear


def num_registers(layout, shape: Sequence[int]) -> int:
    """Registers (elements, broadcast duplicates included) each thread holds for ``shape``.

    Equals Triton's ``getTotalElemsPerThread``. Raises LayoutError as :func:`to_linear`.
    """
    return to_linear(layout, shape).in_dim_size("register")


def elements_per_thread(layout, shape: Sequence[int]) -> int:
    """Same as :func:`num_registers` (Triton's name: elements per thread, duplicates included)."""
    return num_registers(layout, shape)


def register_offsets(layout, shape: Sequence[int]) -> list[tuple[int, ...]]:
    """For each register ``r`` (0 .. num_registers-1), the tensor coordinate contributed by the
    register bits alone (lane = warp = 0). A list of int tuples of length rank."""
    ll = to_linear(layout, shape)
    return [ll.apply(register=r) for r in range(ll.in_dim_size("register"))]


def thread_bases(layout, shape: Sequence[int]) -> dict[str, list[tuple[int, ...]]]:
    """Per-bit coordinates of the lane id (5 bits) and the warp id (log2 num_warps bits).

    Returns ``{"lane": [coord of lane bit 0, ...], "warp": [coord of warp bit 0, ...]}``; each
    coordinate is an int tuple of length rank. Zero tuples mean broadcast along that bit.
    """
    ll = to_linear(layout, shape)
    return {"lane": list(ll.in_dim_bases("lane")), "warp": list(ll.in_dim_bases("warp"))}


def is_disjoint(layout, shape: Sequence[int],
                in_dims: Sequence[str] = ("register", "lane", "warp")) -> bool:
    """True when no output bit is set by two different bases of ``in_dims``.

    Then every XOR in the formula above can be computed as an integer addition (and the
    register part, lane part and warp part can be added). Zero bases are ignored.
    """
    ll = to_linear(layout, shape)
    for k in range(ll.rank):
        seen = 0
        for name in in_dims:
            for vec in ll.in_dim_bases(name):
                if seen & vec[k]:
                    return False
                seen |= vec[k]
    return True


def thread_coords(layout, shape: Sequence[int], warp: int, lane: int) -> list[tuple[int, ...]]:
    """Coordinates held by one thread, register by register, computed the way generated code
    does (register part XOR lane part XOR warp part)."""
    regs = register_offsets(layout, shape)
    tb = thread_bases(layout, shape)
    part = [0] * (len(regs[0]) if regs else 0)
    for bits, vecs in ((lane, tb["lane"]), (warp, tb["warp"])):
        for i, vec in enumerate(vecs):
            if (bits >> i) & 1:
                part = [a ^ b for a, b in zip(part, vec, strict=False)]
    return [tuple(a ^ b for a, b in zip(r, part, strict=False)) for r in regs]
