"""Closed-form ownership of blocked layouts, written from the formula of Triton's
``BlockedEncodingAttr`` (TritonGPUAttrDefs.td) with plain loops, independently of
workbench.layouts.convert."""
from itertools import product
from math import prod


def mixed_radix(index, radices, order):
    """Digits of ``index`` with radix ``radices[d]``; the fastest digit is ``order[0]``."""
    out = [0] * len(radices)
    for d in order:
        out[d] = index % radices[d]
        index //= radices[d]
    return out


def blocked_elements(spt, tpw, wpc, order, shape, warp, lane):
    """Coordinates held by (warp, lane), in register order: the sizePerThread block along
    order[0], order[1], ..., then the repetitions k along order[0], order[1], ...

    idx_d = (s + spt[d] * (lane_d + tpw[d] * warp_d) + T[d] * k) mod shape[d]."""
    rank = len(shape)
    T = [spt[d] * tpw[d] * wpc[d] for d in range(rank)]
    reps = [max(1, shape[d] // T[d]) for d in range(rank)]
    lane_d = mixed_radix(lane, tpw, order)
    warp_d = mixed_radix(warp, wpc, order)
    out = []
    for k_flat in range(prod(reps)):
        k = mixed_radix(k_flat, reps, order)
        for s_flat in range(prod(spt)):
            s = mixed_radix(s_flat, spt, order)
            out.append(tuple((s[d] + spt[d] * (lane_d[d] + tpw[d] * warp_d[d]) + T[d] * k[d])
                             % shape[d] for d in range(rank)))
    return out


def blocked_owner_table(spt, tpw, wpc, order, shape):
    """{coordinate: sorted list of (warp, lane, register)} for every element."""
    table = {c: [] for c in product(*(range(s) for s in shape))}
    for w in range(prod(wpc)):
        for ln in range(32):
            for r, c in enumerate(blocked_elements(spt, tpw, wpc, order, shape, w, ln)):
                table[c].append((w, ln, r))
    return table
