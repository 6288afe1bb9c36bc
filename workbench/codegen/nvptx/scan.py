"""``tt.scan`` (inclusive, forward or reverse) as Triton's ScanOpToLLVM does it.

The axis coordinate of an element is the XOR of register, lane and warp bases along the axis
(linear layouts). For blocked layouts these bits stack as: low register bits (sizePerThread),
then lane bits, then warp bits, then high register bits (repetitions of the layout's tile).
The scan follows that order:

1. within a thread, a sequential scan of each run of low-register elements;
2. across lanes, a Kogge-Stone scan of the run totals with ``shfl.sync.up`` (``.down`` for a
   reverse scan; PTX ISA 9.7.8.6 shfl.sync), log2(lanes along the axis) rounds, then each
   element combines the exclusive prefix of the lanes before it;
3. across warps, every warp's total goes to shared memory; after ``bar.sync`` each thread
   combines the totals of the warps before it;
4. repetitions (high register bits) are scanned one after another, each starting from the
   total of the previous ones (broadcast by ``shfl.sync.idx`` or read from shared memory).

The combine region is inlined on scalars with the earlier partial as its first operand.
Layouts whose bits along the axis do not stack that way raise UnsupportedError.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import TensorType
from . import smem_access
from .reduce import inline_combine
from .threads import thread_layout
from .types import I32, byte_size


def shuffle(kl, value, kind: str, arg, clamp: int):
    """``shfl.sync.<kind>`` (``up``, ``down``, ``idx``, ``bfly``) of an 8..64-bit scalar;
    ``arg`` is the delta / lane (i32 LLVM value or int)."""
    b = kl.b
    fn = kl.intrinsic(f"llvm.nvvm.shfl.sync.{kind}.i32", I32, [I32, I32, I32, I32])
    arg = I32(arg) if isinstance(arg, int) else arg
    t = value.type
    bits = t.width if isinstance(t, ir.IntType) else {"half": 16, "float": 32,
                                                       "double": 64}[str(t)]
    as_int = b.bitcast(value, ir.IntType(bits)) if not isinstance(t, ir.IntType) else value
    if bits == 64:
        v2 = b.bitcast(as_int, ir.VectorType(I32, 2))
        parts = [b.call(fn, [I32(-1), b.extract_element(v2, I32(i)), arg, I32(clamp)])
                 for i in range(2)]
        v2 = ir.Constant(ir.VectorType(I32, 2), None)
        for i, p in enumerate(parts):
            v2 = b.insert_element(v2, p, I32(i))
        res = b.bitcast(v2, ir.IntType(64))
    elif bits < 32:
        res = b.trunc(b.call(fn, [I32(-1), b.zext(as_int, I32), arg, I32(clamp)]),
                      ir.IntType(bits))
    else:
        res = b.call(fn, [I32(-1), as_int, arg, I32(clamp)])
    return b.bitcast(res, t) if res.type != t else res


def _classify(vecs, axis, what, loc):
    """Split bases into (positions along axis with their axis value, other positions)."""
    along, other = [], []
    for i, v in enumerate(vecs):
        if not any(v):
            continue
        on = v[axis] != 0
        off = any(x for d, x in enumerate(v) if d != axis)
        if on and off:
            raise UnsupportedError(f"tt.scan over a layout whose {what} bases mix dims", loc)
        (along if on else other).append((i, v[axis]))
    return along, other


def _select(kl, cond, a, b):
    return [kl.b.select(cond, x, y) for x, y in zip(a, b, strict=True)]


def _bits_index(kl, ident, positions):
    """i32 value made of the bits ``positions`` of ``ident`` (bit k of the result = bit
    positions[k])."""
    b = kl.b
    out = None
    for k, j in enumerate(positions):
        bit = b.and_(b.lshr(ident, I32(j)), I32(1))
        term = b.shl(bit, I32(k)) if k else bit
        out = term if out is None else b.or_(out, term)
    return out if out is not None else I32(0)


def _axis_bits(tl, axis: int, loc) -> tuple[list, list, int, int]:
    """Where the scanned axis lives in thread layout ``tl``: the lane and warp id bits along
    it (in coordinate order) and the masks of the axis coordinate held by register bits below
    (``lo``) and above (``hi``) the lanes and warps. Raises UnsupportedError for layouts the
    three-level scan cannot take."""
    nreg_bits = tl.num_regs.bit_length() - 1
    reg_bases = [tl.regs[1 << i] for i in range(nreg_bits)]
    r_along, _ = _classify(reg_bases, axis, "register", loc)
    l_along, _ = _classify(tl.lane, axis, "lane", loc)
    w_along, _ = _classify(tl.warp, axis, "warp", loc)
    thread_vals = [v for _, v in l_along + w_along]
    lo_min = min(thread_vals) if thread_vals else None
    lane_vals = [v for _, v in l_along]
    warp_vals = [v for _, v in w_along]
    if lane_vals and warp_vals and max(lane_vals) > min(warp_vals):
        raise UnsupportedError("tt.scan: warps below lanes along the axis", loc)
    lane_pos = [j for j, _ in sorted(l_along, key=lambda p: p[1])]
    if lane_pos and lane_pos != list(range(lane_pos[0], lane_pos[0] + len(lane_pos))):
        raise UnsupportedError("tt.scan: lanes along the axis are not consecutive lane bits",
                               loc)
    warp_pos = [j for j, _ in sorted(w_along, key=lambda p: p[1])]
    lo_mask = hi_mask = 0
    for _, v in r_along:
        if lo_min is None or v < lo_min:
            lo_mask |= v
        elif v > max(thread_vals):
            hi_mask |= v
        else:
            raise UnsupportedError("tt.scan: register bits between lane/warp bits", loc)
    return lane_pos, warp_pos, lo_mask, hi_mask


def _rows(tl, axis: int, lo_mask: int, hi_mask: int) -> dict:
    """Each distinct register by (non-axis coordinate) -> {hi chunk -> [(lo, register)]}."""
    rows: dict = {}
    seen = set()
    for r, c in enumerate(tl.regs):
        if c in seen:
            continue
        seen.add(c)
        key = tuple(x for d, x in enumerate(c) if d != axis)
        rows.setdefault(key, {}).setdefault(c[axis] & hi_mask, []).append((c[axis] & lo_mask, r))
    return rows


def lower_scan(kl, op) -> None:
    """Lower ``tt.scan {axis, reverse}`` with N operands (one layout) to N results."""
    axis = op.attributes["axis"]
    reverse = bool(op.attributes.get("reverse", False))
    src_t = op.operands[0].type
    if not isinstance(src_t, TensorType):
        raise UnsupportedError("tt.scan of a scalar", op.loc)
    tl = kl.layout(src_t)
    srcs = [kl.get(v) for v in op.operands]
    block = op.regions[0].block
    lane_pos, warp_pos, lo_mask, hi_mask = _axis_bits(tl, axis, op.loc)
    rows = _rows(tl, axis, lo_mask, hi_mask)
    vals = {r: [s[r] for s in srcs] for r in range(tl.num_regs)}
    comb = lambda a, x: inline_combine(kl, block, a, x)  # noqa: E731
    lane_idx = _bits_index(kl, kl.lane, lane_pos)
    warp_idx = _bits_index(kl, kl.warp, warp_pos)
    n_lanes, n_warps = 1 << len(lane_pos), 1 << len(warp_pos)
    smem_off = _smem_plan(kl, op, src_t, axis, n_warps, rows) if warp_pos else None
    runs = []
    for key, chunks in rows.items():
        for h in sorted(chunks, reverse=reverse):
            regs = [r for _, r in sorted(chunks[h], reverse=reverse)]
            for prev, cur in zip(regs, regs[1:], strict=False):  # 1. in the thread
                vals[cur] = comb(vals[prev], vals[cur])
            total = vals[regs[-1]]
            if lane_pos:  # 2. across lanes
                total = _lane_scan(kl, total, regs, vals, lane_idx, lane_pos, n_lanes, reverse,
                                   comb)
            base = None
            if warp_pos:  # 3a. every warp's run totals to shared memory
                base = _warp_store(kl, op, total, warp_idx, n_warps, smem_off, src_t, axis,
                                   key, h, hi_mask)
            runs.append((key, regs, total, base))
    if warp_pos:  # one barrier between all stores and all loads
        smem_access.barrier(kl)
    carry, last_key = None, None
    for key, regs, total, base in runs:
        if key != last_key:
            carry, last_key = None, key
        if base is not None:  # 3b. the totals of the warps before this one
            total = _warp_load(kl, op, regs, vals, warp_idx, n_warps, reverse, comb, smem_off,
                               base)
        if carry is not None:  # 4. repetitions
            for r in regs:
                vals[r] = comb(carry, vals[r])
            carry = comb(carry, total)
        else:
            carry = total
    for i, res in enumerate(op.results):
        out = []
        for c in tl.regs:
            out.append(vals[tl.regs.index(c)][i])
        kl.set(res, out)


def _lane_scan(kl, total, regs, vals, lane_idx, lane_pos, n_lanes, reverse, comb):
    """Kogge-Stone over lanes; updates the run's elements; returns the warp's run total."""
    b = kl.b
    kind, clamp = ("down", 0x1F) if reverse else ("up", 0)
    inc = total
    for k, j in enumerate(lane_pos):
        got = [shuffle(kl, v, kind, 1 << j, clamp) for v in inc]
        if reverse:
            cond = b.icmp_unsigned("<", lane_idx, I32(n_lanes - (1 << k)))
        else:
            cond = b.icmp_unsigned(">=", lane_idx, I32(1 << k))
        inc = _select(kl, cond, comb(got, inc), inc)
    excl = [shuffle(kl, v, kind, 1 << lane_pos[0], clamp) for v in inc]
    has = b.icmp_unsigned("!=", lane_idx, I32(n_lanes - 1 if reverse else 0))
    for r in regs:
        vals[r] = _select(kl, has, comb(excl, vals[r]), vals[r])
    last = (~sum(1 << j for j in lane_pos)) & 31 if reverse else None
    if reverse:
        src = b.and_(kl.lane, I32(last))
    else:
        src = b.or_(kl.lane, I32(sum(1 << j for j in lane_pos)))
    return [shuffle(kl, v, "idx", src, 0x1F) for v in inc]


def _smem_layout(op, src_t, axis, n_warps, rows):
    """Byte offsets of the operands' warp totals, the end, rows and chunks per row."""
    rows_numel = 1
    for d, s in enumerate(src_t.shape):
        if d != axis:
            rows_numel *= s
    n_chunks = max(len(c) for c in rows.values())
    offs, off = [], 0
    for v in op.operands:
        offs.append(off)
        off += (rows_numel * n_chunks * n_warps * byte_size(v.type.scalar) + 15) // 16 * 16
    return offs, off, rows_numel, n_chunks


def scratch_bytes(op) -> int:
    """Bytes of shared scratch ``tt.scan`` ``op`` needs: each warp's run totals per row and
    register chunk, per operand; 0 when no warps lie along the axis (or the layout cannot be
    scanned: the lowering reports that)."""
    src_t = op.operands[0].type
    if not isinstance(src_t, TensorType):
        return 0
    axis = op.attributes["axis"]
    tl = thread_layout(src_t)
    try:
        _, warp_pos, lo_mask, hi_mask = _axis_bits(tl, axis, op.loc)
    except UnsupportedError:
        return 0
    if not warp_pos:
        return 0
    rows = _rows(tl, axis, lo_mask, hi_mask)
    return _smem_layout(op, src_t, axis, 1 << len(warp_pos), rows)[1]


def _smem_plan(kl, op, src_t, axis, n_warps, rows):
    offs, _, rows_numel, n_chunks = _smem_layout(op, src_t, axis, n_warps, rows)
    kl.need_shared(scratch_bytes(op))
    return offs, rows_numel, n_chunks


def _warp_store(kl, op, total, warp_idx, n_warps, plan, src_t, axis, key, h, hi_mask):
    """Store this warp's run totals at its slot of row ``key``, chunk ``h``; returns the
    slot base (i32 element index of warp 0)."""
    b = kl.b
    offs, rows_numel, _ = plan
    part = kl.parts[(src_t.encoding, tuple(src_t.shape))]
    coords = [b.xor(p, I32(c)) if c else p
              for p, c in zip([x for d, x in enumerate(part) if d != axis], key, strict=True)]
    rshape = tuple(s for d, s in enumerate(src_t.shape) if d != axis)
    row = smem_access.linear_index(kl, coords, rshape) if rshape else I32(0)
    chunk = _chunk_index(h, hi_mask)
    base = b.mul(b.add(b.mul(I32(chunk), I32(rows_numel)), row), I32(n_warps))
    for v, val, o in zip(op.operands, total, offs, strict=True):
        ptr = smem_access.slot(kl, o, b.add(base, warp_idx), v.type.scalar)
        smem_access.store_value(kl, ptr, val, v.type.scalar)
    return base


def _warp_load(kl, op, regs, vals, warp_idx, n_warps, reverse, comb, plan, base):
    """Combine the totals of the warps before this one into the run's elements (after the
    barrier); returns the run total over all warps."""
    b = kl.b
    offs = plan[0]
    order = range(n_warps - 1, -1, -1) if reverse else range(n_warps)
    running, prefix = None, None
    for w in order:
        got = [smem_access.load_value(kl, smem_access.slot(kl, o, b.add(base, I32(w)),
                                                           v.type.scalar), v.type.scalar)
               for v, o in zip(op.operands, offs, strict=True)]
        if running is not None:
            is_me = b.icmp_unsigned("==", warp_idx, I32(w))
            prefix = running if prefix is None else _select(kl, is_me, running, prefix)
        running = got if running is None else comb(running, got)
    first = n_warps - 1 if reverse else 0
    has = b.icmp_unsigned("!=", warp_idx, I32(first))
    for r in regs:
        vals[r] = _select(kl, has, comb(prefix, vals[r]), vals[r])
    return running


def _chunk_index(h: int, hi_mask: int) -> int:
    """Rank of the high-register value ``h`` among the values of ``hi_mask``'s bits."""
    k, idx = 0, 0
    for bit in range(hi_mask.bit_length()):
        if (hi_mask >> bit) & 1:
            if (h >> bit) & 1:
                idx |= 1 << k
            k += 1
    return idx


__all__ = ["lower_scan", "shuffle"]
