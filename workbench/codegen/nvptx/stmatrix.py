"""Storing registers to shared memory with ``stmatrix`` (PTX ISA 9.7.9.17 stmatrix, sm_90), where
Triton 3.6 does: a layout conversion whose buffer plan pairs it
(:func:`.cvt_swizzle.plan_conversion`, instruction 1 or 2 on the source side) and a
``ttg.local_alloc`` whose register layout fits the instruction.

``stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16 [addr], {r0, ...}``: lane ``t`` gives
the address of row ``t % 8`` of matrix ``t // 8`` (a row: 16 contiguous bytes); thread ``T``
provides in its register ``j`` (32 bits) a piece of matrix ``j``:

* plain: the 32-bit word ``T % 4`` of row ``T // 4``;
* ``.trans`` (16-bit elements): the elements at column ``T // 4`` of rows ``2 (T % 4)`` (low
  half) and ``2 (T % 4) + 1`` (high half).

The rule, in terms of the map from a thread's register, lane and warp bits to element offsets
in the buffer (each basis one offset, combined by XOR; ``lowerLdStMatrix`` of
``third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/Utility.cpp``, read, not copied):

* plain (elements of at most 32 bits, ``p = log2(32 / bits)``): some registers must sit at
  offsets 1, 2, ... ``2**(p-1)`` (one 32-bit word; they become the first registers) and lanes
  0, 1 at ``2**p``, ``2**(p+1)``; every other basis a multiple of the 16-byte row. Lanes 2, 3,
  4 give the row addresses; the next ``log2 x`` registers select the matrix;
* ``.trans`` (16-bit elements): lanes 2, 3, 4 at offsets 1, 2, 4 and every other basis a
  multiple of 8 elements; register 0 gives row bit 0, lanes 0, 1 row bits 1, 2 and registers
  1, 2 the matrix;

``x = min(128 / bits, registers) / (32 / bits)`` (at most 4). The registers whose offsets miss
every lane and warp bit (and those that select the matrix) come first; each instruction's
offset is the lane/warp part XOR the constant of the remaining registers.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from .cvt_swizzle import deposit, xor_image
from .memory import pack_words
from .smem_access import smem_base
from .types import I32


@dataclass(frozen=True)
class MatrixStore:
    """How one thread's registers go out with ``stmatrix``: ``trans``; ``x`` matrices per
    instruction; ``addr_imgs``: the element offset of each lane bit's row address (lane bits
    past ``3 + log2 x`` give none: 0); ``warp_imgs``; ``instrs``: per instruction its constant
    element offset (the XOR of ``instr_imgs`` over the instruction's index bits) and, per
    32-bit word, the positions (indices into the register list given to
    :func:`plan_store`, as bit combinations) of its elements, low half first."""

    trans: bool
    x: int
    addr_imgs: tuple
    warp_imgs: tuple
    instrs: tuple
    row_elems: int
    instr_imgs: tuple = ()


def _log2(v: int) -> int:
    return v.bit_length() - 1


def _plain(imgs: list, lanes: list, warps: list, bits: int):
    """The plain form's (register order, the registers' offsets in that order with the
    word's registers zeroed, row-address offsets per lane bit, register bits one instruction
    takes, log2 of the matrices per instruction), or None when it does not fit."""
    p = _log2(32 // bits)
    tile = []
    for k in range(p):
        i = next((i for i, v in enumerate(imgs) if v == 1 << k and i not in tile), None)
        if i is None:
            return None
        tile.append(i)
    if lanes[0] != 1 << p or lanes[1] != 1 << (p + 1):
        return None
    order = tile + [i for i in range(len(imgs)) if i not in tile]
    low = (1 << (p + 2)) - 1
    if any(imgs[i] & low for i in order[p:]) or any(v & low for v in lanes[2:] + warps):
        return None
    reps = [0] * p + [imgs[i] for i in order[p:]]
    log2vec = min(_log2(128 // bits), len(imgs)) - p
    if log2vec < 0:
        return None
    return order, reps, list(lanes[2:5]) + reps[p:p + log2vec], p + log2vec, log2vec


def _trans(imgs: list, lanes: list, warps: list, bits: int):
    """As :func:`_plain` for the ``.trans`` form (16-bit elements only)."""
    if bits != 16 or not imgs or lanes[2:5] != [1, 2, 4]:
        return None
    if any(v & 7 for v in imgs + lanes[:2] + warps):
        return None
    order = list(range(len(imgs)))
    log2vec = min(3, len(imgs)) - 1
    reps = list(imgs)
    return order, reps, [reps[0], lanes[0], lanes[1]] + reps[1:1 + log2vec], 1 + log2vec, log2vec


def plan_store(imgs, lanes, warps, bits: int, trans: bool):
    """The :class:`MatrixStore` of a thread layout whose kept registers (broadcast registers
    removed), lanes and warps sit at element offsets ``imgs``, ``lanes`` (5), ``warps`` of the
    buffer, for ``bits``-bit elements, in the plain or ``.trans`` form; None when the layout
    does not fit the form (module docstring)."""
    imgs, lanes, warps = list(imgs), list(lanes), list(warps)
    if bits > 32 or bits < 8 or len(lanes) != 5:
        return None
    got = (_trans if trans else _plain)(imgs, lanes, warps, bits)
    if got is None:
        return None
    order, reps, addr, per_instr, log2vec = got
    mask = 0
    for v in addr + warps:
        mask |= v
    tile_bases = set(addr + warps)
    front = [j for j, v in enumerate(reps) if not v & mask or v in tile_bases]
    perm = front + [j for j in range(len(reps)) if j not in front]
    final = [order[j] for j in perm]   # register position of each permuted bit
    rimg = [reps[j] for j in perm]
    per_word = 2 if trans else 32 // bits
    x = 1 << log2vec
    instrs = []
    for g in range(1 << (len(rimg) - per_instr)):
        bits_g = g << per_instr
        off = xor_image(bits_g, rimg)
        words = []
        for w in range(x):
            elems = [deposit(bits_g | (w * per_word) | e, final) for e in range(per_word)]
            words.append(tuple(elems))
        instrs.append((off, tuple(words)))
    return MatrixStore(trans, x, tuple(addr) + (0,) * (5 - len(addr)), tuple(warps),
                       tuple(instrs), 128 // bits, tuple(rimg[per_instr:]))


def lane_offset(m: MatrixStore, lane: int, warp: int) -> int:
    """Element offset (before the instruction's constant) of the row lane ``lane`` gives."""
    return xor_image(lane, m.addr_imgs) ^ xor_image(warp, m.warp_imgs)


def _thread_part(kl, m: MatrixStore):
    b = kl.b
    acc = I32(0)
    for ident, imgs in ((kl.lane, m.addr_imgs), (kl.warp_uniform, m.warp_imgs)):
        for i, v in enumerate(imgs):
            if v:
                bit = b.and_(b.lshr(ident, I32(i)), I32(1))
                acc = b.xor(acc, b.mul(bit, I32(v)))
    return acc


def emit(kl, m: MatrixStore, base, vals: dict, elem_t, eb: int) -> None:
    """Emit the ``stmatrix`` instructions of ``m`` into the buffer at byte ``base`` (int or i32)
    of ``global_smem`` for ``eb``-byte elements of IR type ``elem_t``; ``vals``: {register
    position (bit combination): value}. A lane's address is its lane/warp part XOR the
    instruction's offset bits that part can touch, plus the others."""
    b = kl.b
    lw = _thread_part(kl, m)
    mask = 0
    for v in m.addr_imgs + m.warp_imgs:
        mask |= v
    start = b.add(b.ptrtoint(smem_base(kl), I32), base if not isinstance(base, int)
                  else I32(base))
    text = (f"stmatrix.sync.aligned.m8n8.x{m.x}{'.trans' if m.trans else ''}.shared.b16 "
            f"[$0], {{{', '.join(f'${i + 1}' for i in range(m.x))}}};")
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [I32] * (m.x + 1)), text,
                       ",".join(["r"] * (m.x + 1)) + ",~{memory}", side_effect=True)
    xors: dict = {}
    for off, words in m.instrs:
        x = off & mask
        if x not in xors:
            xors[x] = b.xor(lw, I32(x)) if x else lw
        idx = xors[x] if not off & ~mask else b.add(xors[x], I32(off & ~mask))
        addr = b.add(start, b.mul(idx, I32(eb)))
        regs = []
        for elems in words:
            regs += pack_words(b, [vals[e] for e in elems], elem_t, 32)
        b.call(asm, [addr] + regs)


__all__ = ["MatrixStore", "emit", "lane_offset", "plan_store"]
