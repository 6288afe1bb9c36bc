"""``ttg.local_load`` of an MMA v2 operand with ``ldmatrix`` (PTX ISA 9.7.9.15 ldmatrix).

One ``ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16`` loads four 8x8 matrices of 16-bit
words; lane ``l`` supplies the address of row ``l % 8`` of matrix ``l / 8`` and receives, per
matrix, the 32-bit word at (row ``l / 4``, words ``l % 4``) (``.trans``: the transpose). An
``mma.sync`` fragment register is exactly such a word (PTX ISA 9.7.14.5.8 matrix
fragments for mma.m16n8k16):

* A (opIdx 0), tile 16 x Kin: register ``j`` = rows ``8 (j & 1) + l/4``, K ``Kin/2 (j >> 1) +
  kWidth (l % 4)`` -> one x4 per tile;
* B (opIdx 1), tile Kin x 8: register ``j`` = K ``Kin/2 j + kWidth (l % 4)``, column ``l / 4``
  -> one x4 per two tiles (x2 for an odd one);

with ``Kin = 32 / bytes`` (16 for fp16/bf16, 8 for tf32, 32 for int8). When K is the buffer's
contiguous dim the matrices' rows run along the non-K dim and the plain form is used; when the
non-K dim is contiguous (16-bit types only) ``.trans`` is used with rows along K. Each matrix
row must be 16 contiguous bytes at a 16-byte boundary: swizzle ``vec * bytes`` and the row
length must be multiples of 16 bytes. Otherwise :func:`ldmatrix_load` returns None and the
caller uses ``ld.shared``.
"""
from __future__ import annotations

from llvmlite import ir

from .memory import unpack_words
from .smem_access import (
    matrix_rows_layout,
    record_access,
    shared_order,
    smem_base,
    swizzle_offset,
    swizzle_offset_py,
)
from .threads import emit_thread_part
from .types import I32, byte_size


def _fragments(tl, op_idx, kin, kwidth):
    """Per register: (tile origin (nonK, K) of the register part, matrix j, element e)."""
    tnk = 16 if op_idx == 0 else 8
    out = []
    for c in tl.regs:
        nk, k = (c[0], c[1]) if op_idx == 0 else (c[1], c[0])
        nk_in, k_in = nk % tnk, k % kin
        if op_idx == 0:
            j = (k_in // (kin // 2)) * 2 + nk_in // 8
        else:
            j = k_in // (kin // 2)
        out.append(((nk - nk_in, k - k_in), j, k_in % kwidth))
    return out


def _issues(op_idx, tiles):
    """The ldmatrix instructions: list of (x, [(tile, j) per matrix], d_bit0, d_bit1) where the
    origin of matrix ``mi`` is tile0 + (mi & 1) * d_bit0 + (mi >> 1) * d_bit1."""
    out = []
    if op_idx == 0:
        for t in tiles:
            out.append((4, [(t, j) for j in range(4)], "nk8", "khalf"))
        return out
    for i in range(0, len(tiles), 2):
        pair = tiles[i:i + 2]
        if len(pair) == 2:
            delta = (pair[1][0] - pair[0][0], pair[1][1] - pair[0][1])
            out.append((4, [(pair[0], 0), (pair[0], 1), (pair[1], 0), (pair[1], 1)], "khalf",
                        delta))
        else:
            out.append((2, [(pair[0], 0), (pair[0], 1)], "khalf", (0, 0)))
    return out


def _delta(name, kin):
    if name == "nk8":
        return (8, 0)
    if name == "khalf":
        return (0, kin // 2)
    return name


def ldmatrix_load(kl, op, enc, base: int, elem_t):
    """Registers of the dot operand loaded with ldmatrix, or None when it does not apply."""
    dst_t = op.result.type
    lay = dst_t.encoding
    op_idx, kwidth = lay.op_idx, lay.k_width
    nbytes = byte_size(elem_t)
    shape = tuple(op.operands[0].type.shape)
    if len(shape) != 2 or kwidth * nbytes != 4 or lay.parent.version_major != 2:
        return None
    kdim = 1 if op_idx == 0 else 0
    contig = enc.order[0]
    trans = contig != kdim
    if trans and nbytes != 2:
        return None
    if (enc.vec * nbytes) % 16 or (shape[contig] * nbytes) % 16:
        return None
    kin = 2 * (16 // nbytes)
    tl = kl.layout(dst_t)
    frags = _fragments(tl, op_idx, kin, kwidth)
    tiles = sorted({f[0] for f in frags})
    if any(t[1] + kin > shape[kdim] or t[0] + (16 if op_idx == 0 else 8) > shape[1 - kdim]
           for t in tiles):
        return None
    b = kl.b
    part = emit_thread_part(b, tl, I32(0), kl.warp)  # warp part only, tensor dims
    wnk, wk = (part[0], part[1]) if op_idx == 0 else (part[1], part[0])
    lane = kl.lane
    mi = b.lshr(lane, I32(3))
    q = b.and_(lane, I32(7))
    bit0, bit1 = b.and_(mi, I32(1)), b.lshr(mi, I32(1))
    words = {}
    report = []
    for x, mats, d0, d1 in _issues(op_idx, tiles):
        t0 = mats[0][0]
        dd0, dd1 = _delta(d0, kin), _delta(d1, kin)
        nk = b.add(b.add(b.add(wnk, I32(t0[0])), b.mul(bit0, I32(dd0[0]))),
                   b.mul(bit1, I32(dd1[0])))
        k = b.add(b.add(b.add(wk, I32(t0[1])), b.mul(bit0, I32(dd0[1]))),
                  b.mul(bit1, I32(dd1[1])))
        if trans:
            k = b.add(k, q)
        else:
            nk = b.add(nk, q)
        coords = [nk, k] if op_idx == 0 else [k, nk]
        off = swizzle_offset(kl, enc, shape, coords)
        base_v = I32(base) if isinstance(base, int) else base
        addr = b.add(b.ptrtoint(smem_base(kl), I32), b.add(base_v, b.mul(off, I32(nbytes))))
        regs = ", ".join(f"${i}" for i in range(x))
        text = (f"ldmatrix.sync.aligned.m8n8.x{x}{'.trans' if trans else ''}.shared.b16 "
                f"{{{regs}}}, [${x}];")
        rty = ir.LiteralStructType([I32] * x)
        asm = ir.InlineAsm(ir.FunctionType(rty, [I32]), text, ",".join(["=r"] * x + ["r"]),
                           side_effect=True)
        res = b.call(asm, [addr])
        for i, m in enumerate(mats):
            words[m] = unpack_words(b, [b.extract_value(res, i)], elem_t, kwidth)
        report.append((x, [(m[0], _delta(d0, kin), _delta(d1, kin)) for m in mats[:1]], mats,
                       dd0, dd1))
    _record_ldmatrix(kl, op, enc, shape, nbytes, op_idx, trans, kin, tl, report, lay)
    return [words[(t, j)][e] for t, j, e in frags]


def _row_start(tl, op_idx, trans, report, warp: int, instr: int, lane: int) -> tuple:
    """Tensor coordinate of the row lane ``lane`` of warp ``warp`` addresses in instruction
    ``instr`` (the arithmetic :func:`ldmatrix_load` emits: matrix ``lane >> 3``, row
    ``lane & 7``; lanes past an ``.x2``'s matrices repeat, as they do there)."""
    part = tl.thread_part(warp, 0)
    wnk, wk = (part[0], part[1]) if op_idx == 0 else (part[1], part[0])
    _, _, mats, dd0, dd1 = report[instr]
    t0 = mats[0][0]
    mi, q = lane >> 3, lane & 7
    nk = wnk + t0[0] + (mi & 1) * dd0[0] + (mi >> 1) * dd1[0]
    k = wk + t0[1] + (mi & 1) * dd0[1] + (mi >> 1) * dd1[1]
    if trans:
        k += q
    else:
        nk += q
    return (nk, k) if op_idx == 0 else (k, nk)


def _xor(a, b) -> list:
    return [int(x) ^ int(y) for x, y in zip(a, b, strict=True)]


def _rows_layout(tl, op_idx, trans, report, enc, nbytes):
    """The rows the lanes address as a linear layout (:func:`.smem_access.
    matrix_rows_layout`), or None when the instructions' rows are not linear in the lane,
    warp and instruction bits (an ``.x2`` after ``.x4`` s, a count not a power of two)."""
    n = len(report)
    if n & (n - 1) or any(r[0] != 4 for r in report):
        return None
    nw = 1 << len(tl.warp)

    def at(w, i, t):
        return _row_start(tl, op_idx, trans, report, w, i, t)
    origin = at(0, 0, 0)
    if any(origin):
        return None
    lanes = [list(at(0, 0, 1 << b)) for b in range(5)]
    warps = [list(at(1 << b, 0, 0)) for b in range(len(tl.warp))]
    instr = [list(at(0, 1 << b, 0)) for b in range(n.bit_length() - 1)]
    for w in range(nw):
        for i in range(n):
            for t in range(32):
                want = [0, 0]
                for bits, bases in ((t, lanes), (w, warps), (i, instr)):
                    for b, v in enumerate(bases):
                        if bits >> b & 1:
                            want = _xor(want, v)
                if want != list(at(w, i, t)):
                    return None
    contig = shared_order(enc)[0]
    rows = []
    for k in range((16 // nbytes).bit_length() - 1):
        c = [0, 0]
        c[contig] = 1 << k
        rows.append(c)
    return matrix_rows_layout(rows, lanes, warps, instr, 4)


def _record_ldmatrix(kl, op, enc, shape, nbytes, op_idx, trans, kin, tl, report,
                     lay) -> None:
    """Record the ldmatrix requests by the rows their lanes address (each matrix one phase of
    8 lanes x 16 bytes), analysed by :func:`.smem_access.record_access`; when those rows are
    not linear (:func:`_rows_layout`), warp 0's requests are counted here and the record
    names the destination layout."""
    what = f"ttg.local_load (ldmatrix.x4{'.trans' if trans else ''}, 16 B/lane)"
    rows = _rows_layout(tl, op_idx, trans, report, enc, nbytes)
    if rows is not None:
        record_access(kl, op, what, enc, rows, shape, op.result.type.element, 16)
        return
    total, worst = 0, 1
    for i, (x, *_rest) in enumerate(report):
        for mi in range(x):
            words: set = set()
            for q in range(8):
                coord = _row_start(tl, op_idx, trans, report, 0, i, 8 * mi + q)
                start = swizzle_offset_py(enc, shape, coord) * nbytes
                words.update(range(start // 4, start // 4 + 4))
            per_bank: dict = {}
            for w in words:
                per_bank.setdefault(w % 32, set()).add(w)
            wf = max(len(s) for s in per_bank.values())
            total += wf
            worst = max(worst, wf)
    kl.shared_accesses.append({
        "op": what, "loc": op.loc,
        "layout": str(enc), "access_layout": str(lay), "vector_bytes": 16,
        "conflict_degree": float(worst), "wavefronts": int(total)})


__all__ = ["ldmatrix_load"]
