"""The shared-memory layout of a layout conversion, chosen as Triton 3.6 chooses it.

Everything here works on *flattened* linear layouts over GF(2): a tensor element's index is
``dim0 + S0 * (dim1 + S1 * (dim2 ...))`` (Triton's ``flattenOuts``: the first output dim is the
most minor) and each basis of a layout is one int of ``dim = log2(numel)`` bits. A
:class:`Flat` holds the register, lane and warp bases of one distributed layout (register
bases that are zero, i.e. broadcast registers, removed as ``actionRemoveBroadcastedRegs``
does).

The scratch buffer is a bijection from the bits of a shared index to the tensor's bits, in four
groups of bases (:class:`SmemPlan`): ``vector`` (consecutive elements one thread moves in one
instruction), ``bank`` (the rest of one 128-byte bank line), ``segment`` (the lines) and
``reps``: bases that are registers in both layouts and can be moved in separate rounds, so the
buffer holds only ``numel / 2**len(reps)`` elements. The rules (which bases go where, the
segment that avoids bank conflicts, the ``ldmatrix``/``stmatrix`` tiles and the choice between
instruction pairs) follow ``lib/Tools/GenericSwizzling.cpp`` (``optimalSwizzling``,
``optimalSwizzlingLdSt``, ``optimalSwizzlingTile``, ``computeSegment``, ``buildReps``) and the
tiles of ``getSrcDstTiles`` (``lib/Conversion/TritonGPUToLLVM/Utility.cpp``); the GF(2)
algebra (reduced row echelon form with the pivot at the lowest set bit, null spaces,
complements) is written here so that ties resolve in the same order.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Flat:
    """Flattened bases of one distributed layout (``reg`` without zero bases)."""

    reg: tuple
    lane: tuple
    warp: tuple
    dim: int


@dataclass(frozen=True)
class SmemPlan:
    """The scratch layout: bases of the shared index bits, lowest first (module docstring).
    ``instr``: (source instruction, destination instruction), each 0 for ``st/ld.shared``, 1
    for ``stmatrix/ldmatrix``, 2 for their ``.trans`` forms."""

    vector: tuple
    bank: tuple
    segment: tuple
    reps: tuple
    instr: tuple = (0, 0)
    conflicts: int = field(default=0, compare=False)

    @property
    def tile_bits(self) -> int:
        """log2 of the elements the buffer holds (one round)."""
        return len(self.vector) + len(self.bank) + len(self.segment)

    @property
    def columns(self) -> list:
        """Every basis, shared index bit 0 first (the reps last)."""
        return list(self.vector) + list(self.bank) + list(self.segment) + list(self.reps)


def _ctz(x: int) -> int:
    return (x & -x).bit_length() - 1


def _log2(x: int) -> int:
    """LLVM's ``Log2_32``: floor(log2(x)), -1 for 0."""
    return x.bit_length() - 1


def deposit(value: int, positions) -> int:
    """The bits of ``value`` placed at ``positions`` (bit j of ``value`` goes to bit
    ``positions[j]``): the register index of one combination of free register bits."""
    out = 0
    for j, i in enumerate(positions):
        if value >> j & 1:
            out |= 1 << i
    return out


def xor_image(bits: int, images) -> int:
    """The xor of ``images[i]`` over the set bits ``i`` of ``bits`` (a linear map over GF(2)
    applied to a register index)."""
    out = 0
    for i, v in enumerate(images):
        if bits >> i & 1:
            out ^= v
    return out


def rref(vectors, dim: int) -> list:
    """Reduced row echelon form over GF(2) of the bit vectors ``vectors`` (``dim`` bits),
    each pivot at its row's lowest set bit; zero rows dropped."""
    rows = [int(v) for v in vectors if v]
    out: list = []
    for col in range(dim):
        bit = 1 << col
        k = next((i for i, r in enumerate(rows) if r & bit), None)
        if k is None:
            continue
        piv = rows.pop(k)
        rows = [r ^ piv if r & bit else r for r in rows]
        out = [r ^ piv if r & bit else r for r in out]
        out.append(piv)
        rows = [r for r in rows if r]
    return out


def nullspace(vectors, dim: int) -> list:
    """Basis of ``{x : popcount(x & v) even for every v}``, one vector per free column in
    increasing order (``nullspaceBasis``)."""
    red = rref(vectors, dim)
    pivots = {_ctz(r) for r in red}
    basis = []
    for free in range(dim):
        if free in pivots:
            continue
        v = 1 << free
        for r in red:
            if r & (1 << free):
                v ^= 1 << _ctz(r)
        basis.append(v)
    return basis


def intersection(b1, b2, dim: int) -> list:
    """Basis of span(b1) & span(b2) (``intersectionBasis``): when every vector is a power of
    two, the members of ``b1`` found in ``b2``, in ``b1``'s order."""
    pow2 = all(x > 0 and x & (x - 1) == 0 for x in list(b1) + list(b2))
    if pow2:
        s2 = set(b2)
        return [b for b in b1 if b and b in s2]
    return nullspace(nullspace(b1, dim) + nullspace(b2, dim), dim)


def complement(basis, dim: int) -> list:
    """Unit vectors of the columns without a pivot in ``basis``'s echelon form."""
    pivots = {_ctz(r) for r in rref(basis, dim)}
    return [1 << i for i in range(dim) if i not in pivots]


def _segment(bank_src, bank_dst, dim: int, length: int) -> list:
    """``computeSegment``: the segment bases, conflict-free where the tiles allow."""
    ssrc = {x for x in bank_src if x}
    sdst = {x for x in bank_dst if x}
    seg = [1 << b for b in range(dim) if (1 << b) not in ssrc and (1 << b) not in sdst]
    if len(seg) >= length:
        return seg[:length]
    a = sorted(v for v in ssrc if v not in sdst)
    bb = sorted(v for v in sdst if v not in ssrc)
    if len(a) > len(bb):
        a, bb = bb, a
    conflicts = min(max(0, length - len(a) - len(seg)), len(a))
    seg += [a[i] ^ bb[i] for i in range(conflicts, len(a))]
    seg += a[:conflicts] + bb[:conflicts]
    return seg[:length]


def _with_reps(src: Flat, dst: Flat, vector, bank, segment, leave: int) -> SmemPlan:
    """``buildReps``: segment bases held in registers by both layouts become rounds (the first
    ``leave`` of them stay, for the ``.x2``/``.x4`` forms of ldmatrix/stmatrix)."""
    regs_s, regs_d = set(src.reg), set(dst.reg)
    seg, reps = [], []
    for s in segment:
        if s in regs_s and s in regs_d:
            if leave > 0:
                leave -= 1
                seg.append(s)
            else:
                reps.append(s)
        else:
            seg.append(s)
    return SmemPlan(tuple(vector), tuple(bank), tuple(seg), tuple(reps))


def _core(src: Flat, dst: Flat, bitwidth: int, vbasis, tile_src, tile_dst,
          leave: int = 0) -> SmemPlan:
    """The plan for a given vector and per-side bank tiles (``optimalSwizzling``, inner)."""
    dim = src.dim
    len_b = min(_log2(1024 // ((1 << len(vbasis)) * bitwidth)), dim - len(vbasis))
    len_s = dim - len_b - len(vbasis)
    seg = _segment(list(vbasis) + list(tile_src), list(vbasis) + list(tile_dst), dim, len_s)
    bank = complement(list(vbasis) + seg, dim)
    return _with_reps(src, dst, vbasis, bank, seg, leave)


def _remove_vec(vbasis, vec) -> list:
    return [r for r in vec if r not in vbasis]


def _fill_bank(src: Flat, dst: Flat, bitwidth: int, vbasis: list):
    """Below 32 bits of vector: add register bases of one side that are warps on the other,
    then warp bases, up to one 32-bit bank word. Returns whether the source filled it."""
    dim = src.dim
    per_bank = _log2(32 // bitwidth)
    wsrc = [w for w in src.warp if w]
    wdst = [w for w in dst.warp if w]
    rs = intersection(_remove_vec(vbasis, src.reg), wdst, dim)
    rd = intersection(_remove_vec(vbasis, dst.reg), wsrc, dim)
    if len(rs) == len(rd) and rs:
        src_fills = min(rs) < min(rd)
    else:
        src_fills = len(rs) > len(rd)
    vbasis += rs if src_fills else rd
    if len(vbasis) < per_bank:
        vbasis += intersection(wsrc, wdst, dim)
    i = 0
    while len(vbasis) < per_bank and (i < len(wsrc) or i < len(wdst)):
        if i < len(wsrc) and wsrc[i] not in vbasis:
            vbasis.append(wsrc[i])
        if len(vbasis) < per_bank and i < len(wdst) and wdst[i] not in vbasis:
            vbasis.append(wdst[i])
        i += 1
    del vbasis[per_bank:]
    return src_fills


def plan_ldst(src: Flat, dst: Flat, bitwidth: int) -> SmemPlan:
    """``optimalSwizzlingLdSt``: the plan when both sides use ``st/ld.shared``."""
    dim = src.dim
    vbasis = intersection(src.reg, dst.reg, dim)[:_log2(128 // bitwidth)]
    src_fills = None
    if (1 << len(vbasis)) * bitwidth < 32:
        src_fills = _fill_bank(src, dst, bitwidth, vbasis)
    log2vec = _log2(max(1, ((1 << len(vbasis)) * bitwidth) // 32))
    tile_src = list(src.lane[:len(src.lane) - log2vec])
    tile_dst = list(dst.lane[:len(dst.lane) - log2vec])
    plan = _core(src, dst, bitwidth, vbasis, tile_src, tile_dst)
    if log2vec >= 2:
        return plan
    banks = list(plan.bank)
    in_src = [i for i, r in enumerate(banks) if r in src.reg]
    in_dst = [i for i, r in enumerate(banks) if r in dst.reg]
    if src_fills is True:
        order = in_src
    elif src_fills is False:
        order = in_dst
    else:
        order = in_src if len(in_src) > len(in_dst) else in_dst
    order = order + [i for i in range(len(banks)) if i not in order]
    return SmemPlan(plan.vector, tuple(banks[i] for i in order), plan.segment, plan.reps)


def preimage(f: Flat, x: int):
    """A (reg, lane, warp) index triple that ``f`` maps to flat index ``x`` (free bits zero,
    earlier inputs preferred as pivots), or None when ``x`` is outside the span."""
    cols = [(0, i, v) for i, v in enumerate(f.reg)] + \
        [(1, i, v) for i, v in enumerate(f.lane)] + [(2, i, v) for i, v in enumerate(f.warp)]
    basis: list = []  # (vector, combination of cols)
    for k, (_, _, v) in enumerate(cols):
        comb = 1 << k
        for bv, bc in basis:
            if v & (1 << _ctz(bv)):
                v ^= bv
                comb ^= bc
        if v:
            basis.append((v, comb))
    comb = 0
    for bv, bc in basis:
        if x & (1 << _ctz(bv)):
            x ^= bv
            comb ^= bc
    if x:
        return None
    out = [0, 0, 0]
    for k, (kind, i, _) in enumerate(cols):
        if comb >> k & 1:
            out[kind] |= 1 << i
    return tuple(out)


def _tile(a: Flat, b: Flat, nreg_a: int, nreg_b: int, lane_a, lane_b):
    """``optimalSwizzlingTile``: the shared vector both instructions can use, or None."""
    if nreg_a < nreg_b:
        return _tile(b, a, nreg_b, nreg_a, lane_b, lane_a)
    vbasis = intersection(a.reg, b.reg, a.dim)
    if len(vbasis) < nreg_b:
        return None
    vbasis = vbasis[:nreg_b]
    tile_a = [a.lane[i] for i in lane_a]
    tile_b = [b.lane[i] for i in lane_b]
    if not all(tile_a) or not all(tile_b):
        return None
    for i in range(nreg_a - nreg_b):
        pre = preimage(a, b.lane[lane_b[i]])
        if pre is None or pre[0] == 0:
            return None
    for ia, ib in zip(lane_a, list(lane_b)[len(lane_b) - len(lane_a):], strict=True):
        pre = preimage(a, b.lane[ib])
        if pre is None or pre[1] != 1 << ia:
            return None
    return vbasis + tile_b


#: (lanes whose addresses are contiguous, lanes that give addresses) per instruction kind:
#: 0 ld/st.shared, 1 ldmatrix/stmatrix, 2 their .trans forms (``getSrcDstTiles``)
_TILES = {0: ((), (0, 1, 2)), 1: ((0, 1), (2, 3, 4)), 2: ((2, 3, 4), (0, 1))}


def instruction_kinds(arch: int, bitwidth: int) -> tuple:
    """(source kinds, destination kinds) usable for ``bitwidth``-bit elements on sm_``arch``:
    ldmatrix from sm_75, stmatrix from sm_90 (PTX ISA 9.7.9.16/17), for at most 32-bit
    elements; the ``.trans`` forms for 16-bit elements."""
    src, dst = [0], [0]
    if arch >= 75 and bitwidth <= 32:
        if arch >= 90:
            src.append(1)
        dst.append(1)
    if arch >= 75 and bitwidth == 16:
        if arch >= 90:
            src.append(2)
        dst.append(2)
    return tuple(src), tuple(dst)


def _side_tile(kind: int, regs, lanes, vbasis):
    need = 3 - len(_TILES[kind][1])
    tile = [r for r in regs if r not in vbasis][:need]
    if len(tile) < need:
        return None
    return tile + [lanes[i] for i in _TILES[kind][1]]


def _conflicts(plan: SmemPlan, tile_src, tile_dst, dim: int) -> int:
    def cnt(tile):
        return (1 << len(intersection(list(plan.segment), list(tile), dim))) - 1
    return cnt(tile_src) + cnt(tile_dst)


def plan_conversion(src: Flat, dst: Flat, bitwidth: int, arch: int) -> SmemPlan:
    """``optimalSwizzling``: every (source, destination) instruction pair whose tiles fit is
    planned; the fewest bank conflicts win, then the most rounds (the smallest buffer), then
    the first pair. Without any pair: :func:`plan_ldst` with plain loads and stores."""
    total = _log2(128 // bitwidth)
    kinds_src, kinds_dst = instruction_kinds(arch, bitwidth)
    best = None
    for ks in kinds_src:
        cs, as_ = _TILES[ks]
        for kd in kinds_dst:
            cd, ad = _TILES[kd]
            vb = _tile(src, dst, total - len(cs), total - len(cd), cs, cd)
            if vb is None:
                continue
            ts = _side_tile(ks, src.reg, src.lane, vb)
            td = _side_tile(kd, dst.reg, dst.lane, vb)
            if ts is None or td is None:
                continue
            leave = min(len(cs) + len(as_) - 3, len(cd) + len(ad) - 3)
            plan = _core(src, dst, bitwidth, vb, ts, td, leave)
            c = _conflicts(plan, ts, td, src.dim)
            key = (c, -len(plan.reps))
            if best is None or key < best[0]:
                best = (key, SmemPlan(plan.vector, plan.bank, plan.segment, plan.reps,
                                      (ks, kd), c))
    if best is None:
        return plan_ldst(src, dst, bitwidth)
    return best[1]


__all__ = ["Flat", "SmemPlan", "complement", "instruction_kinds", "intersection",
           "nullspace", "plan_conversion", "plan_ldst", "preimage", "rref"]


def flatten_coord(coord, shape) -> int:
    """Flat index of a coordinate tuple, dim 0 the most minor (Triton's ``flattenOuts``)."""
    flat, stride = 0, 1
    for c, s in zip(coord, shape, strict=True):
        flat += int(c) * stride
        stride *= int(s)
    return flat


def flat_of(tl) -> tuple:
    """(:class:`Flat`, kept) for a :class:`~.threads.ThreadLayout`: ``kept`` lists the
    register-index bits whose bases are not zero (broadcast registers removed)."""
    shape = tl.shape
    nbits = tl.num_regs.bit_length() - 1
    regs, kept = [], []
    for i in range(nbits):
        v = flatten_coord(tl.regs[1 << i], shape)
        if v:
            regs.append(v)
            kept.append(i)
    numel = 1
    for s in shape:
        numel *= int(s)
    flat = Flat(tuple(regs), tuple(flatten_coord(v, shape) for v in tl.lane),
                tuple(flatten_coord(v, shape) for v in tl.warp), numel.bit_length() - 1)
    return flat, tuple(kept)
