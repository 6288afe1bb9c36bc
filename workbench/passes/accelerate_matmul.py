"""``tritongpu-accelerate-matmul``: put ``tt.dot`` on the tensor cores (MMA v2, ``mma.sync``).

Triton 3.6 ``AccelerateMatmul.cpp`` for Ampere-style MMA (reference 4.4-4.6, 5.2): a dot whose
inputs the tensor cores take gets

* a result in ``#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = W,
  instrShape = [16, 8]}>`` with ``W`` from :func:`workbench.layouts.mma.warps_per_tile_v2`
  (all warps along M when the result feeds another dot);
* operands staged through shared memory, as Triton's ttgir reads after its operand
  optimisation: ``ttg.local_alloc`` of the operand's blocked registers into the
  ``#ttg.swizzled_shared`` layout :func:`workbench.layouts.mma.mma_operand_shared` chooses,
  then ``ttg.local_load`` into ``#ttg.dot_op<{opIdx, parent = #mma, kWidth}>`` with
  ``kWidth = 32 / bitwidth`` (one 32-bit register of K elements);
* the accumulator converted to ``#mma``: a splat constant is re-made in ``#mma``; a
  loop-carried accumulator (``scf.for`` iter arg yielded by the dot) is carried in ``#mma``
  (converted once before the loop and once after), so the K loop has no conversion of it;
  other users of the result get a ``ttg.convert_layout`` back to the old layout.

Then, as Triton's second ``tritongpu-remove-layout-conversions`` (reference 3.4 step 7), the
``#mma`` results are *anchors*: their layout flows forward through elementwise ops,
reductions (``#ttg.slice`` of ``#mma``), ``expand_dims``/``broadcast`` and ``scf.for``
iter args, and cheap producers are rematerialised in it (:func:`propagate_mma`). Attention's
``acc * alpha[:, None]`` then stays in the accumulator registers. Finally an operand staged
through shared memory whose value already lives in an ``#mma`` layout that owns the same
elements per thread as the ``#ttg.dot_op`` (a chained dot: ``P @ V`` with ``P`` from
``Q @ K^T``; kWidth = 32 / bits) becomes a register ``ttg.convert_layout``
(:func:`operands_in_registers`; Triton's ``shared-memory-free`` mma -> dot_op conversion).

"Chained" (all warps along M, ``warpsPerTileV2``) is decided as Triton does: another dot in
the same block lies in the dot's backward or forward slice.

Taken: fp16/bf16 -> fp32, fp32 with ``inputPrecision = tf32`` -> fp32, int8 -> int32, with
M % 16 == 0, N % 8 == 0, K a multiple of the instruction's K (16, 8, 32), on ``cuda:80`` and
newer (we emit v2 on sm_90 too: no wgmma yet). Others keep the FMA layout
(``convert-triton-to-tritongpu``'s blocked parent).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation, functions
from ..ir.types import FloatType, IntType, MemDescType, TensorType
from ..layouts.encodings import BlockedLayout, DotOperandLayout
from ..layouts.mma import mma_layout_for, mma_operand_shared
from .manager import Pass
from .mma_propagation import (cleanup, hoist_invariant_operands, operands_in_registers,
                              propagate_mma)


def _arch(target) -> int:
    text = str(target)
    if not text.startswith("cuda:"):
        return 0
    try:
        return int(text.split(":", 1)[1])
    except ValueError:
        return 0


def mma_kind(dot: Operation):
    """(kWidth, Kin) when ``dot`` can use mma.sync, else None."""
    a_t, c_t = dot.operands[0].type, dot.result.type
    e, r = a_t.element, c_t.element
    m, k = a_t.shape
    n = c_t.shape[1]
    prec = dot.attributes.get("inputPrecision", "tf32") or "tf32"
    if isinstance(e, FloatType) and e.name in ("f16", "bf16") and r == FloatType("f32"):
        kw, kin = 2, 16
    elif e == FloatType("f32") and r == FloatType("f32") and prec == "tf32":
        kw, kin = 1, 8
    elif e == IntType(8) and r == IntType(32):
        kw, kin = 4, 32
    else:
        return None
    if m % 16 or n % 8 or k % kin:
        return None
    return kw, kin


def _feeds_dot(v, depth=3) -> bool:
    for user, i in v.uses:
        if user.name == "tt.dot" and i == 0:
            return True
        if depth and user.results and user.name in ("ttg.convert_layout", "arith.truncf",
                                                    "arith.extf", "tt.fp_to_fp"):
            if _feeds_dot(user.result, depth - 1):
                return True
    return False


def _bits(t) -> int:
    return t.width if isinstance(t, IntType) else {"f16": 16, "bf16": 16, "f32": 32}[t.name]


def _stage_operand(dot, idx, mma, kw):
    v = dot.operands[idx]
    conv = v.defining_op if (v.defining_op is not None and
                             v.defining_op.name == "ttg.convert_layout") else None
    src = conv.operands[0] if conv is not None else v
    shape = tuple(v.type.shape)
    enc = src.type.encoding
    order = tuple(enc.order) if isinstance(enc, BlockedLayout) else (1, 0)
    sh = mma_operand_shared(idx, shape, order, kw, _bits(v.type.element))
    alloc = Operation("ttg.local_alloc", [src],
                      [MemDescType(shape, v.type.element, sh, mutable=False)], loc=dot.loc)
    load = Operation("ttg.local_load", [alloc.result],
                     [TensorType(shape, v.type.element, DotOperandLayout(idx, mma, kw))],
                     loc=dot.loc)
    dot.parent.insert_before(dot, alloc)
    dot.parent.insert_before(dot, load)
    dot.set_operand(idx, load.result)
    if conv is not None and not conv.result.uses:
        conv.erase()


def _to_layout(v, enc, before: Operation) -> object:
    """``v`` in layout ``enc``: a re-made splat constant or a convert_layout before ``before``."""
    t = v.type.with_encoding(enc)
    d = v.defining_op
    if d is not None and d.name == "arith.constant":
        new = Operation("arith.constant", [], [t], dict(d.attributes), loc=d.loc)
    else:
        new = Operation("ttg.convert_layout", [v], [t], loc=before.loc)
    new.result.name = v.name
    before.parent.insert_before(before, new)
    return new.result


def _convert_uses_back(value, old_enc, after: Operation, skip=()) -> None:
    users = [(u, i) for u, i in value.uses if u not in skip]
    for u, i in list(users):  # convert(convert(x)) is convert(x)
        if u.name == "ttg.convert_layout":
            users.remove((u, i))
    if not users:
        return
    conv = Operation("ttg.convert_layout", [value], [value.type.with_encoding(old_enc)],
                     loc=after.loc)
    blk = after.parent
    blk.insert(blk.ops.index(after) + 1, conv)
    for u, i in users:
        u.set_operand(i, conv.result)


def _loop_carried(dot):
    """(for op, iter index) when the accumulator is an scf.for iter arg yielded by ``dot``."""
    c = dot.operands[2]
    block = c.owner
    if c.defining_op is not None or block is None or block.parent is None:
        return None
    loop = block.parent.parent
    if loop is None or loop.name != "scf.for" or c.index == 0:
        return None
    i = c.index - 1
    term = block.ops[-1]
    if term.name != "scf.yield" or term.operands[i] is not dot.result:
        return None
    if any(u is not dot for u, _ in c.uses):
        return None
    return loop, i


def _slice_ops(dot: Operation, forward: bool) -> set:
    """Ops of ``dot``'s block reachable from it through def-use edges (forward: users;
    backward: producers), both restricted to the block (``multiRootGetSlice`` with Triton's
    same-region filter)."""
    block, seen, work = dot.parent, set(), [dot]
    while work:
        op = work.pop()
        nxt = ([u for r in op.results for u, _ in r.uses] if forward else
               [v.defining_op for v in op.operands if v.defining_op is not None])
        for o in nxt:
            while o is not None and o.parent is not block:  # nested op: its top-level op
                o = o.parent_op() if o.parent is not None else None
            if o is not None and id(o) not in seen:
                seen.add(id(o))
                work.append(o)
    return {i for i in seen}


def is_chained(dot: Operation) -> bool:
    """True when another ``tt.dot`` of the same block is in ``dot``'s backward or forward
    slice (attention's ``Q @ K^T`` and ``P @ V``)."""
    others = {id(o) for o in dot.parent.ops if o.name == "tt.dot" and o is not dot}
    if not others:
        return False
    return bool(others & (_slice_ops(dot, True) | _slice_ops(dot, False))) or \
        _feeds_dot(dot.result)


def accelerate(dot: Operation, num_warps: int) -> bool:
    """Rewrite one ``tt.dot`` for MMA v2 (see the module docstring). Returns True if done."""
    kind = mma_kind(dot)
    old = dot.result.type.encoding
    if kind is None or not isinstance(old, BlockedLayout):
        return False
    kw, _ = kind
    mma = mma_layout_for(tuple(dot.result.type.shape), num_warps, 2,
                         chained=is_chained(dot) or _feeds_dot(dot.result))
    _stage_operand(dot, 0, mma, kw)
    _stage_operand(dot, 1, mma, kw)
    carried = _loop_carried(dot)
    new_t = dot.result.type.with_encoding(mma)
    if carried is not None:
        loop, i = carried
        arg = dot.operands[2]
        arg.type = new_t
        loop.set_operand(3 + i, _to_layout(loop.operands[3 + i], mma, loop))
        res = loop.results[i]
        res.type = new_t
        dot.result.type = new_t
        yield_op = loop.regions[0].blocks[0].ops[-1]
        _convert_uses_back(dot.result, old, dot, skip=(yield_op,))
        _convert_uses_back(res, old, loop)
        return True
    dot.set_operand(2, _to_layout(dot.operands[2], mma, dot))
    dot.result.type = new_t
    _convert_uses_back(dot.result, old, dot)
    return True


@dataclass
class AccelerateMatmul(Pass):
    """The ``tritongpu-accelerate-matmul`` pass. Options: ``target`` (``"cuda:90"``; MMA
    needs ``cuda:80`` or newer), ``num_warps`` (None: the module's ``ttg.num-warps``)."""

    name = "tritongpu-accelerate-matmul"
    target: str = "cuda:90"
    num_warps: int | None = None

    def run(self, module: Operation, ctx=None) -> None:
        if _arch(self.target) < 80:
            return
        nw = self.num_warps or int(module.attributes.get("ttg.num-warps", 4))
        tpw = int(module.attributes.get("ttg.threads-per-warp", 32))
        for func in functions(module):
            done = [accelerate(op, nw) for op in list(func.walk()) if op.name == "tt.dot"]
            if any(done):
                propagate_mma(func, nw, tpw)
                operands_in_registers(func)
                hoist_invariant_operands(func)
                cleanup(func, nw)


__all__ = ["AccelerateMatmul", "accelerate", "mma_kind", "is_chained"]
