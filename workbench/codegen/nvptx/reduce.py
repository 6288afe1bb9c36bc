"""``tt.reduce`` in three levels, as Triton's ReduceOpToLLVM.

1. Within a thread: registers with the same coordinate outside ``axis`` are combined in
   register order (duplicate registers from broadcasting are skipped).
2. Within a warp: for each lane bit whose basis runs along ``axis``, a butterfly
   ``shfl.sync.bfly.b32`` with that lane mask (PTX ISA 9.7.8.6 shfl.sync), then the combine.
   Lane bits with zero bases hold copies and are not combined (that would double count).
3. Across warps, when warp bits run along ``axis``: every thread writes its partial to shared
   memory at ``[result element][warp index along axis]``, ``bar.sync``, and every thread reads
   the partials of its result elements and combines them in warp order.

The result is in the slice layout ``#ttg.slice<{dim = axis, parent = src}>`` (a scalar for 1-D
inputs). The combine region is inlined on scalars for every combine.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import TensorType
from . import smem_access
from .threads import ThreadLayout, register_map, thread_layout
from .types import I32, byte_size


def inline_combine(kl, region_block, accs, xs):
    """Inline the combine region of a ``tt.reduce`` / ``tt.scan`` on scalars: block args
    (accs..., xs...) -> returned values. Raises UnsupportedError without a return op."""
    for a, v in zip(region_block.args, list(accs) + list(xs), strict=True):
        kl.set(a, [v])
    for op in region_block.ops:
        if op.name in ("tt.reduce.return", "tt.scan.return"):
            return [kl.get(v)[0] for v in op.operands]
        kl.lower_op(op)
    raise UnsupportedError("tt.reduce region has no tt.reduce.return")


def shuffle_xor(kl, value, lane_mask: int):
    """``shfl.sync.bfly`` of any 8..64-bit scalar (split into 32-bit words)."""
    b = kl.b
    fn = kl.intrinsic("llvm.nvvm.shfl.sync.bfly.i32", I32, [I32, I32, I32, I32])
    t = value.type
    bits = t.width if isinstance(t, ir.IntType) else {"half": 16, "float": 32, "double": 64}[str(t)]
    as_int = b.bitcast(value, ir.IntType(bits)) if not isinstance(t, ir.IntType) else value
    if bits == 64:
        v2 = b.bitcast(as_int, ir.VectorType(I32, 2))
        parts = [b.call(fn, [I32(-1), b.extract_element(v2, I32(i)), I32(lane_mask), I32(31)])
                 for i in range(2)]
        v2 = ir.Constant(ir.VectorType(I32, 2), None)
        for i, p in enumerate(parts):
            v2 = b.insert_element(v2, p, I32(i))
        res = b.bitcast(v2, ir.IntType(64))
    elif bits < 32:
        res = b.trunc(b.call(fn, [I32(-1), b.zext(as_int, I32), I32(lane_mask), I32(31)]),
                      ir.IntType(bits))
    else:
        res = b.call(fn, [I32(-1), as_int, I32(lane_mask), I32(31)])
    return b.bitcast(res, t) if res.type != t else res


def _project(axis):
    return lambda c: tuple(x for i, x in enumerate(c) if i != axis)


def _within_thread(kl, tl, srcs, proj, block) -> tuple[dict, list]:
    """Step 1: combine each thread's registers that share a result coordinate (duplicate
    registers skipped); returns {result key: values} and the keys in register order."""
    groups: dict = {}
    order = []
    seen = set()
    for r, reg in enumerate(tl.regs):
        if reg in seen:
            continue
        seen.add(reg)
        key = proj(reg)
        vals = [s[r] for s in srcs]
        if key not in groups:
            groups[key] = vals
            order.append(key)
        else:
            groups[key] = inline_combine(kl, block, groups[key], vals)
    return groups, order


def _across_lanes(kl, op, tl, axis, groups, order) -> None:
    """Step 2: a butterfly shuffle and combine per lane bit along ``axis``."""
    block = op.regions[0].block
    for i, basis in enumerate(tl.lane):
        if basis[axis] == 0:
            continue
        if any(x for d, x in enumerate(basis) if d != axis):
            raise UnsupportedError("reduction over a layout whose lanes mix dims", op.loc)
        for key in order:
            shuffled = [shuffle_xor(kl, v, 1 << i) for v in groups[key]]
            groups[key] = inline_combine(kl, block, groups[key], shuffled)


def _slots(op, n: int) -> list:
    """Byte offset of each operand's ``n`` partials in the scratch, and the end."""
    offsets, off = [], 0
    for v in op.operands:
        offsets.append(off)
        off += (n * byte_size(v.type.scalar) + 7) // 8 * 8
    return offsets + [off]


def scratch_bytes(op) -> int:
    """Bytes of shared scratch ``tt.reduce`` ``op`` needs: one slot per result element, warp
    along the axis and operand (8-byte aligned per operand); 0 when no warps lie along the
    axis (the reduction stays within warps)."""
    src_t = op.operands[0].type
    if not isinstance(src_t, TensorType):
        return 0
    axis = op.attributes["axis"]
    nw = 1 << sum(1 for v in thread_layout(src_t).warp if v[axis])
    if nw == 1:
        return 0
    numel = 1
    for i, s in enumerate(src_t.shape):
        if i != axis:
            numel *= s
    return _slots(op, numel * nw)[-1]


def _across_warps(kl, op, wbits, res_shape, proj, groups, order) -> None:
    """Step 3: each warp's partials through shared memory (one slot per warp along the axis),
    then every thread combines them in warp order."""
    b = kl.b
    block = op.regions[0].block
    src_t = op.operands[0].type
    nw = 1 << len(wbits)
    numel = 1
    for s in res_shape:
        numel *= s
    widx = None
    for k, j in enumerate(wbits):
        bit = b.and_(b.lshr(kl.warp, I32(j)), I32(1))
        term = b.shl(bit, I32(k)) if k else bit
        widx = term if widx is None else b.or_(widx, term)
    offsets = _slots(op, numel * nw)[:-1]
    kl.need_shared(scratch_bytes(op))
    part = kl.parts[(src_t.encoding, tuple(src_t.shape))]
    rpart = proj(part) if res_shape else ()
    res_index = {}
    for key in order:
        coords = [b.xor(p, I32(c)) if c else p for p, c in zip(rpart, key, strict=True)]
        ridx = smem_access.linear_index(kl, coords, res_shape) if res_shape else I32(0)
        res_index[key] = ridx
        base = b.mul(ridx, I32(nw)) if nw > 1 else ridx
        idx = b.add(base, widx)
        for v, val, o in zip(op.operands, groups[key], offsets, strict=True):
            smem_access.store_value(kl, smem_access.slot(kl, o, idx, v.type.scalar), val,
                                    v.type.scalar)
    smem_access.barrier(kl)
    for key in order:
        base = b.mul(res_index[key], I32(nw)) if nw > 1 else res_index[key]
        acc = None
        for w in range(nw):
            idx = b.add(base, I32(w)) if w else base
            vals = [smem_access.load_value(kl, smem_access.slot(kl, o, idx, v.type.scalar),
                                           v.type.scalar)
                    for v, o in zip(op.operands, offsets, strict=True)]
            acc = vals if acc is None else inline_combine(kl, block, acc, vals)
        groups[key] = acc


def lower_reduce(kl, op) -> None:
    """Lower ``tt.reduce {axis}`` with N operands (same layout) to N results.

    Raises UnsupportedError for a scalar operand or a layout whose lanes or warps along
    ``axis`` also move along other dims."""
    axis = op.attributes["axis"]
    srcs = [kl.get(v) for v in op.operands]
    src_t = op.operands[0].type
    if not isinstance(src_t, TensorType):
        raise UnsupportedError("tt.reduce of a scalar", op.loc)
    tl = kl.layout(src_t)
    block = op.regions[0].block
    proj = _project(axis)
    groups, order = _within_thread(kl, tl, srcs, proj, block)
    _across_lanes(kl, op, tl, axis, groups, order)
    wbits = [j for j, v in enumerate(tl.warp) if v[axis]]
    if any(any(x for d, x in enumerate(tl.warp[j]) if d != axis) for j in wbits):
        raise UnsupportedError("reduction over a layout whose warps mix dims", op.loc)
    res_shape = tuple(s for i, s in enumerate(src_t.shape) if i != axis)
    if wbits:
        _across_warps(kl, op, wbits, res_shape, proj, groups, order)
    # 4. into the result (slice) layout
    if not res_shape:
        (key,) = order
        for i, res in enumerate(op.results):
            kl.set(res, [groups[key][i]])
        return
    res_t = op.results[0].type
    group_tl = ThreadLayout(res_shape, tuple(order), tuple(proj(v) for v in tl.lane),
                            tuple(proj(v) for v in tl.warp))
    m = register_map(group_tl, kl.layout(res_t), lambda c: c)
    for i, res in enumerate(op.results):
        kl.set(res, [groups[order[g]][i] for g in m])
