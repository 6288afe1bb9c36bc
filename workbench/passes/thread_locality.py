"""``tritongpu-optimize-thread-locality``: a reduction accumulated across a loop is split so
that the loop only reduces what each thread holds (Triton 3.6 ``OptimizeThreadLocality.cpp``,
the reduction part).

Pattern (in ttgir, after the first ``remove-layout-conversions``)::

    %acc = scf.for ... iter_args(%a = %init) {
      %r = "tt.reduce"(%x) <{axis = 1}> ({ combine })   // %x: MxN, #blocked, N fastest
      %n = combine %a, %r                               // the same op as the reduce's body
      scf.yield %n
    }

with ``%x`` a ``tt.load`` result in a ``#ttg.blocked`` layout whose ``sizePerThread`` along
the reduced axis, the last and fastest dim, is ``s > 1``, and ``%init`` a constant (Triton's
conditions; ``mulf`` is taken too). Each iteration of the rewritten loop reshapes ``%x`` to
``M x N/s x s`` (``tt.reshape allow_reorder efficient_layout``: the same registers, in the
3-D ``#blocked`` with the new dim thread-local) and reduces only that dim (no shuffles, no
shared memory); the carried accumulator is ``M x N/s`` (``#ttg.slice<{dim = 2}>``), starting at
the combine's identity (0 for ``addf``, -inf for ``maxnumf``/``maximumf``, +inf for
``minnumf``/``minimumf``, 1 for ``mulf``). After the loop one cross-thread ``tt.reduce`` over
``N/s`` and the combine with ``%init`` give the old result. Only the order of the
floating-point combines changes, as in Triton. Where a thread holds several runs of ``s``
along the axis, the 3-D shape is ``M x N/s x s`` (Triton 3.6 uses ``M x N/e x e`` with ``e``
the thread's element count and lets the reshape reorder); ours keeps the row-major order, so
the reshape stays a renaming of registers.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.clone import clone_op
from ..ir.core import Operation, Value, functions
from ..ir.types import FloatType, TensorType
from ..layouts.encodings import BlockedLayout, SliceLayout
from .manager import Pass
from .values import block_of, tensor_type

#: combine op -> identity element
_IDENTITY = {"arith.addf": 0.0, "arith.mulf": 1.0, "arith.maxnumf": float("-inf"),
             "arith.maximumf": float("-inf"), "arith.minnumf": float("inf"),
             "arith.minimumf": float("inf")}


def _combine_name(reduce: Operation) -> str | None:
    body = [o for o in reduce.regions[0].blocks[0].ops if o.name != "tt.reduce.return"]
    if len(body) != 1 or body[0].name not in _IDENTITY:
        return None
    return body[0].name


def _match(reduce: Operation):
    """``(loop, iter index, combine op, 3-D layout, s)`` when ``reduce`` fits the pattern."""
    if len(reduce.operands) != 1 or len(reduce.results) != 1:
        return None
    src_t = reduce.operands[0].type
    if not isinstance(src_t, TensorType) or not isinstance(src_t.element, FloatType):
        return None
    enc, axis = src_t.encoding, int(reduce.attributes.get("axis", -1))
    rank = len(src_t.shape)
    if not isinstance(enc, BlockedLayout) or rank != 2 or axis != rank - 1 or \
            enc.order[0] != axis:
        return None
    s = enc.size_per_thread[axis]
    name = _combine_name(reduce)
    src = reduce.operands[0].defining_op
    if src is None or src.name != "tt.load":  # as Triton: a reduction of loaded values
        return None
    uses = reduce.result.uses
    if s < 2 or src_t.shape[axis] % s or name is None or len(uses) != 1:
        return None
    comb = uses[0][0]
    if comb.name != name or comb.parent is not reduce.parent:
        return None
    other = comb.operands[1 - uses[0][1]]
    block = block_of(reduce)
    loop = block.parent.parent if block.parent is not None else None
    if loop is None or loop.name != "scf.for" or other.owner is not block or other.index == 0:
        return None
    i = other.index - 1
    init = loop.operands[3 + i].defining_op
    if init is None or init.name != "arith.constant":  # as Triton: a constant initial value
        return None
    term = block.ops[-1]
    if term.name != "scf.yield" or term.operands[i] is not comb.result or \
            len(other.uses) != 1 or len(comb.result.uses) != 1:
        return None
    enc3 = BlockedLayout(tuple(enc.size_per_thread[:axis]) + (1, s),
                         tuple(enc.threads_per_warp) + (1,), tuple(enc.warps_per_cta) + (1,),
                         (rank,) + tuple(enc.order))
    return loop, i, comb, enc3, s


def _constant(t: TensorType, value: float, before: Operation) -> Value:
    c = Operation("arith.constant", [], [t], {"value": value}, loc=before.loc)
    block_of(before).insert_before(before, c)
    return c.result


def _rewrite(reduce: Operation, loop: Operation, i: int, comb: Operation, enc3, s: int) -> None:
    src = reduce.operands[0]
    src_t = tensor_type(src)
    m, n = src_t.shape
    elem = src_t.element
    block = block_of(reduce)
    t3 = TensorType((m, n // s, s), elem, enc3)
    part_t = TensorType((m, n // s), elem, SliceLayout(2, enc3))
    reshape = Operation("tt.reshape", [src], [t3],
                        {"allow_reorder": True, "efficient_layout": True}, loc=reduce.loc)
    reshape.result.name = reduce.result.name
    block.insert_before(reduce, reshape)
    inner = clone_op(reduce, {id(src): reshape.result}, [part_t])
    inner.attributes["axis"] = 2
    block.insert_before(reduce, inner)
    # the carried accumulator: M x N/s, from the combine's identity
    arg = block.args[i + 1]
    arg.type = part_t
    old_init = loop.operands[3 + i]
    loop.set_operand(3 + i, _constant(part_t, _IDENTITY[comb.name], loop))
    comb.set_operand(comb.operands.index(reduce.result), inner.result)
    reduce.erase()
    comb.result.type = part_t
    res = loop.results[i]
    old_t = res.type
    users = list(res.uses)
    res.type = part_t
    # after the loop: the cross-thread reduction, then the combine with the old init
    outside = block_of(loop)
    after = outside.ops[outside.ops.index(loop) + 1]
    outer = clone_op(inner, {id(reshape.result): res},
                     [TensorType((m,), elem, SliceLayout(1, SliceLayout(2, enc3)))])
    outer.attributes["axis"] = 1
    outside.insert_before(after, outer)
    out_t = tensor_type(outer.result)
    init_op = old_init.defining_op
    assert init_op is not None  # a constant (_match)
    init = _constant(out_t, init_op.attributes["value"], after)
    if not old_init.uses:
        init_op.erase()
    fin = Operation(comb.name, [outer.result, init], [out_t], dict(comb.attributes),
                    loc=comb.loc)
    fin.result.name = res.name
    outside.insert_before(after, fin)
    back = None
    for u, k in users:
        if u.name == "ttg.convert_layout":  # convert(convert(x)) is convert(x)
            u.set_operand(k, fin.result)
            continue
        if back is None:
            back = Operation("ttg.convert_layout", [fin.result], [old_t], loc=loop.loc)
            outside.insert_before(after, back)
        u.set_operand(k, back.result)


@dataclass
class OptimizeThreadLocality(Pass):
    """The ``tritongpu-optimize-thread-locality`` pass (module docstring)."""

    name = "tritongpu-optimize-thread-locality"

    def run(self, module: Operation, ctx=None) -> None:
        for func in functions(module):
            for op in list(func.walk()):
                if op.name != "tt.reduce" or op.parent is None:
                    continue
                found = _match(op)
                if found is not None:
                    _rewrite(op, *found)

    @property
    def options(self) -> dict:
        return {}


__all__ = ["OptimizeThreadLocality"]
