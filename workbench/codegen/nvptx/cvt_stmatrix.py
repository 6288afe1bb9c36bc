"""Storing a layout conversion's source with ``stmatrix`` when Triton's plan pairs it
(:func:`.cvt_swizzle.plan_conversion`, instruction 1 or 2 on the source side; sm_90).

The registers that select the round (:mod:`.cvt_lower`) are set aside; the others, at their
element offsets in one round of the buffer, go through :func:`.stmatrix.plan_store` (Triton's
``lowerLdStMatrix`` on the round's ``storeCvt``, ``ConvertLayoutOpToLLVM.cpp``)."""
from __future__ import annotations

from dataclasses import dataclass

from .cvt_swizzle import deposit, xor_image
from .stmatrix import MatrixStore, emit, plan_store


@dataclass(frozen=True)
class CvtStore:
    """``m``: the instructions of one round; ``tile_pos``: the kept-register bases (indices
    into the side's list) inside a round, in order; ``rounds``: round -> the kept-register bits
    that select it; ``kept``: register-index bit of each kept basis; ``round_imgs``: buffer
    offsets (round bits included) of the round-selecting bases."""

    m: MatrixStore
    tile_pos: tuple
    rounds: dict
    kept: tuple
    round_imgs: tuple

    @property
    def trans(self) -> bool:
        """The ``.trans`` form."""
        return self.m.trans


def matrix_store(s, plan, bits: int):
    """The :class:`CvtStore` of store side ``s`` (:class:`.cvt_lower.Side`) of ``plan`` with
    ``bits``-bit elements, or None when the layout does not fit the planned form."""
    tile = 1 << plan.tile_bits
    tile_pos = [i for i, v in enumerate(s.reg_img) if v < tile]
    rnd_pos = [i for i in range(len(s.reg_img)) if i not in tile_pos]
    if any(s.reg_img[i] & (tile - 1) for i in rnd_pos):
        return None
    m = plan_store([s.reg_img[i] for i in tile_pos], s.lane_img, s.warp_img, bits,
                   plan.instr[0] == 2)
    if m is None:
        return None
    rounds = {}
    for c in range(1 << len(rnd_pos)):
        sel = deposit(c, rnd_pos)
        rounds[xor_image(sel, s.reg_img) >> plan.tile_bits] = sel
    return CvtStore(m, tuple(tile_pos), rounds, s.kept,
                    tuple(s.reg_img[i] for i in rnd_pos))


def _reg(kept, bits: int) -> int:
    r = 0
    for i, k in enumerate(kept):
        if bits >> i & 1:
            r |= 1 << k
    return r


def store_round(kl, cs: CvtStore, plan, rnd: int, elem_t, eb: int, src) -> None:
    """Emit round ``rnd``'s ``stmatrix`` instructions (the scratch buffer at
    ``kl.scratch_base``) from the source registers ``src``."""
    sel = cs.rounds[rnd]
    vals = {}
    for _, words in cs.m.instrs:
        for elems in words:
            for p in elems:
                vals[p] = src[_reg(cs.kept, deposit(p, cs.tile_pos) | sel)]
    emit(kl, cs.m, kl.scratch_base, vals, elem_t, eb)


__all__ = ["CvtStore", "matrix_store", "store_round"]
