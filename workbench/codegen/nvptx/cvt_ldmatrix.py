"""Loading a layout conversion's destination with ``ldmatrix`` (PTX ISA 9.7.9.16
ldmatrix), when Triton's plan pairs it (:func:`.cvt_swizzle.plan_conversion`, instruction 1 or
2 on the destination side).

``ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16``: lane ``t`` gives the address of
row ``t % 8`` of matrix ``t // 8`` (a row: 16 contiguous bytes); thread ``T`` receives, in its
register ``j`` (32 bits), from matrix ``j``:

* plain: the 32-bit word ``T % 4`` of row ``T // 4``;
* ``.trans`` (16-bit elements): the elements at column ``T // 4`` of rows ``2 (T % 4)`` (low
  half) and ``2 (T % 4) + 1`` (high half).

In the destination layout's terms (element offsets of the plan's buffer, see
:mod:`.cvt_lower`): plain needs the registers packed in one 32-bit word and lanes 0, 1 to step
through the row's words (offsets 1, 2, ... ``32/bits - 1``, then ``32/bits``,
``2 * 32/bits``); the row addresses come from lanes 2, 3, 4. ``.trans`` needs lanes 2, 3, 4
at offsets 1, 2, 4 and takes the row addresses from the first register and lanes 0, 1. The
matrices of one instruction are the next register bases in order (as Triton's
``lowerLdStMatrix`` of ``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/Utility.cpp``). Every
other basis must leave a row's 16 bytes aligned.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from .cvt_swizzle import deposit, xor_image
from .memory import unpack_words
from .smem_access import matrix_access_layout, smem_base
from .types import I32


@dataclass(frozen=True)
class MatrixLoad:
    """How one thread's registers come from ``ldmatrix``: ``trans``; ``word_regs``: kept
    register bases inside one 32-bit word (plain) or the row bit (``.trans``); ``mat_regs``:
    register bases selecting the matrix (``x = 2**len``); ``rest``: bases iterated per
    instruction; ``row_imgs``: the offsets of a lane's row-address bits (its bits 0-2);
    ``mat_imgs``: of the matrix bits (lane bits 3-4); ``reg_img``/``warp_img`` as in
    :class:`.cvt_lower.Side`."""

    trans: bool
    per_word: int
    word_regs: tuple
    mat_regs: tuple
    rest: tuple
    row_imgs: tuple
    mat_imgs: tuple
    reg_img: tuple
    warp_img: tuple
    kept: tuple


def matrix_load(s, trans: bool, bits: int, tile_bits: int):
    """The :class:`MatrixLoad` of load side ``s`` (:class:`.cvt_lower.Side`) for a buffer of
    ``2**tile_bits`` elements, or None when the layout does not fit the instruction. Registers
    that select the round never enter an address."""
    if (trans and bits != 16) or bits > 32:
        return None
    per = 32 // bits
    img, lane = list(s.reg_img), list(s.lane_img)
    in_tile = [i for i, v in enumerate(img) if v >> tile_bits == 0]
    if len(lane) != 5:
        return None
    if trans:
        if [lane[2], lane[3], lane[4]] != [1, 2, 4] or not in_tile:
            return None
        word, row_imgs = [in_tile[0]], (img[in_tile[0]], lane[0], lane[1])
        row_elems = 8
    else:
        word = []
        for k in range(per.bit_length() - 1):
            i = next((i for i, v in enumerate(img) if v == 1 << k), None)
            if i is None:
                return None
            word.append(i)
        if lane[0] != per or lane[1] != 2 * per:
            return None
        row_imgs = (lane[2], lane[3], lane[4])
        row_elems = 4 * per
    others = [i for i in range(len(img)) if i not in word]
    mats = [i for i in others if i in in_tile][:2]
    rest = tuple(i for i in others if i not in mats)
    aligned = list(row_imgs) + [img[i] for i in others] + list(s.warp_img)
    if any(v % row_elems for v in aligned):
        return None
    return MatrixLoad(trans, per, tuple(word), tuple(mats), rest, row_imgs,
                      tuple(img[i] for i in mats), tuple(img), tuple(s.warp_img), s.kept)


def _reg(m: MatrixLoad, bits: int) -> int:
    r = 0
    for i, k in enumerate(m.kept):
        if bits >> i & 1:
            r |= 1 << k
    return r


def issues(m: MatrixLoad) -> list:
    """Per instruction: (constant offset, [[original register per element] per result
    word])."""
    out = []
    x = 1 << len(m.mat_regs)
    for g in range(1 << len(m.rest)):
        bits = deposit(g, m.rest)
        off = xor_image(bits, m.reg_img)
        words = []
        for j in range(x):
            wb = bits | deposit(j, m.mat_regs)
            elems = [_reg(m, wb | deposit(e, m.word_regs))
                     for e in range(m.per_word if not m.trans else 2)]
            words.append(elems)
        out.append((off, words))
    return out


def lane_address(m: MatrixLoad, lane: int, warp: int) -> int:
    """Element offset (before the instruction's constant) of the row lane ``lane`` gives."""
    a = 0
    for i, v in enumerate(m.row_imgs):
        a ^= v if lane >> i & 1 else 0
    for i, v in enumerate(m.mat_imgs):
        a ^= v if lane >> (3 + i) & 1 else 0
    for i, v in enumerate(m.warp_img):
        a ^= v if warp >> i & 1 else 0
    return a


def access_layout(m: MatrixLoad, coord_of, rank: int) -> tuple:
    """(label, addressing layout) of the loads of ``m``: ``"ldmatrix.x4"`` or
    ``"ldmatrix.x4.trans"`` and the rows its lanes address
    (:func:`.smem_access.matrix_access_layout`, ``coord_of`` mapping a buffer offset to its
    tensor coordinate of ``rank`` ints)."""
    x = 1 << len(m.mat_regs)
    lanes = tuple(m.row_imgs) + tuple(m.mat_imgs)
    lanes += (0,) * (5 - len(lanes))
    row_elems = 8 if m.trans else 4 * m.per_word
    lay = matrix_access_layout(coord_of, rank, row_elems, x, lanes, m.warp_img,
                               [m.reg_img[i] for i in m.rest])
    return f"ldmatrix.x{x}{'.trans' if m.trans else ''}", lay


def emit(kl, m: MatrixLoad, rnd: int, tile_bits: int, elem_t, eb: int, base=None) -> dict:
    """Emit the instructions of round ``rnd`` (buffer of ``2**tile_bits`` elements of
    ``eb`` bytes at byte ``base`` of ``global_smem``: an int or an i32 value, the
    conversion scratch when None); returns {original register: value}."""
    b = kl.b
    x = 1 << len(m.mat_regs)
    a = I32(0)
    for src_bits, imgs, ident in ((0, m.row_imgs, kl.lane), (3, m.mat_imgs, kl.lane),
                                  (0, m.warp_img, kl.warp_uniform)):
        for i, v in enumerate(imgs):
            if v:
                bit = b.and_(b.lshr(ident, I32(src_bits + i)), I32(1))
                a = b.xor(a, b.mul(bit, I32(v)))
    mask = 0
    for v in m.row_imgs + m.mat_imgs + m.warp_img:
        mask |= v
    if base is None:
        base = kl.scratch_base
    base = b.add(b.ptrtoint(smem_base(kl), I32), I32(base) if isinstance(base, int) else base)
    out: dict = {}
    regs = ", ".join(f"${i}" for i in range(x))
    text = (f"ldmatrix.sync.aligned.m8n8.x{x}{'.trans' if m.trans else ''}.shared.b16 "
            f"{{{regs}}}, [${x}];")
    rty = ir.LiteralStructType([I32] * x) if x > 1 else I32
    asm = ir.InlineAsm(ir.FunctionType(rty, [I32]), text,
                       ",".join(["=r"] * x + ["r"]) + ",~{memory}", side_effect=True)
    for off, words in issues(m):
        if off >> tile_bits != rnd:
            continue
        off &= (1 << tile_bits) - 1
        idx = b.xor(a, I32(off & mask)) if off & mask else a
        if off & ~mask:
            idx = b.add(idx, I32(off & ~mask))
        res = b.call(asm, [b.add(base, b.mul(idx, I32(eb)))])
        for j, elems in enumerate(words):
            word = b.extract_value(res, j) if x > 1 else res
            vals = unpack_words(b, [word], elem_t, len(elems))
            for r, v in zip(elems, vals, strict=True):
                out[r] = v
    return out


__all__ = ["MatrixLoad", "access_layout", "emit", "issues", "lane_address", "matrix_load"]
