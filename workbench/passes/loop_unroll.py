"""Loop unrolling by ``tl.range(..., loop_unroll_factor=F)`` (Triton's ``triton-loop-unroll``,
the last pass of ``make_ttir``: ``lib/Dialect/Triton/Transforms/LoopUnroll.cpp``, which calls
MLIR's ``loopUnrollByFactor`` from ``mlir/lib/Dialect/SCF/Utils/Utils.cpp``).

An ``scf.for`` with ``tt.loop_unroll_factor = F`` (F > 1) becomes a main loop whose step is
``step * F`` and whose body is the old body F times (copy k sees ``iv + step * k`` and the
values copy k-1 yielded), up to ``lb + (trip - trip % F) * step``, then an epilogue loop (the
old loop, from there to ``ub``, with ``tt.num_stages = 1`` so it is not pipelined) for the
remaining iterations. The bounds are computed as MLIR computes them: with constant bounds the
new bound and step are constants and the epilogue is left out when ``F`` divides the trip
count; otherwise ``trip = (ub - lb + step - 1) / step`` (``arith.divui``) in IR before the loop.
The new ops carry the loop's location and name, so they print as Triton's do. A main or
epilogue loop left with one iteration of constant bounds is replaced by its body, as MLIR's
``promoteIfSingleIteration`` does.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.clone import clone_op
from ..ir.core import Block, Operation, Value
from .manager import Pass

FACTOR = "tt.loop_unroll_factor"


def _const_int(v: Value) -> int | None:
    op = v.owner if isinstance(v.owner, Operation) else None
    if op is not None and op.name == "arith.constant" and isinstance(op.attributes.get("value"),
                                                                       int):
        return int(op.attributes["value"])
    return None


class _Emitter:
    """Creates ops before ``anchor`` with the loop's location and name."""

    def __init__(self, loop: Operation):
        assert loop.parent is not None, "an scf.for outside a block"
        self.loop, self.block = loop, loop.parent
        self.name = loop.results[0].name if loop.results else None

    def op(self, name: str, operands, attrs=None, anchor=None, block=None) -> Value:
        t = operands[0].type if operands else attrs.pop("type")
        new = Operation(name, operands, [t], attrs, loc=self.loop.loc)
        new.results[0].name = self.name
        if block is not None:
            block.insert_before(anchor, new)
        else:
            self.block.insert_before(self.loop, new)
        return new.result

    def const(self, value: int, t, anchor=None, block=None) -> Value:
        return self.op("arith.constant", [], {"value": value, "type": t}, anchor, block)


def _bounds(e: _Emitter, lb: Value, ub: Value, step: Value, factor: int):
    """(unrolled upper bound, unrolled step, whether an epilogue loop is needed)."""
    lo, hi, st = (_const_int(v) for v in (lb, ub, step))
    t = lb.type
    if lo is not None and hi is not None and st is not None and st > 0:
        trip = max(0, -(-(hi - lo) // st))
        ub_unrolled = lo + (trip - trip % factor) * st
        epilogue = ub_unrolled < hi
        new_ub = e.const(ub_unrolled, t) if epilogue else ub
        new_step = step if st * factor == st else e.const(st * factor, t)
        return new_ub, new_step, epilogue
    diff = e.op("arith.subi", [ub, lb])
    one = e.const(1, t)
    count = e.op("arith.divui", [e.op("arith.addi", [diff, e.op("arith.subi", [step, one])]),
                                 step])
    f = e.const(factor, t)
    even = e.op("arith.subi", [count, e.op("arith.remsi", [count, f])])
    new_ub = e.op("arith.addi", [lb, e.op("arith.muli", [even, step])])
    return new_ub, e.op("arith.muli", [step, f]), True


def _clone_into(block: Block, anchor: Operation, ops, vmap: dict) -> None:
    for op in ops:
        block.insert_before(anchor, clone_op(op, vmap))


def _epilogue(loop: Operation, start: Value) -> Operation:
    """A copy of ``loop`` after it, from ``start``, carrying ``loop``'s results."""
    vmap: dict = {}
    block = loop.parent
    assert block is not None
    idx = block.ops.index(loop)
    attrs = {k: v for k, v in loop.attributes.items() if k != FACTOR}
    attrs["tt.num_stages"] = 1
    ub, step = loop.operands[1:3]
    uses = [list(r.uses) for r in loop.results]  # taken over by the epilogue's results
    new = Operation("scf.for", [start, ub, step] + list(loop.results),
                    [r.type for r in loop.results], attrs, 1, loop.loc)
    body = loop.regions[0].block
    nblk = new.regions[0].add_block()
    for a in body.args:
        vmap[id(a)] = nblk.add_arg(a.type, a.name)
    for r, nr, r_uses in zip(loop.results, new.results, uses, strict=True):
        nr.name = r.name
        for user, i in r_uses:
            user.set_operand(i, nr)
    block.insert(idx + 1, new)
    marker = Operation("scf.yield", [], [])
    nblk.append(marker)
    _clone_into(nblk, marker, body.ops, vmap)
    marker.erase()
    return new


def promote_if_single_iteration(loop: Operation) -> bool:
    """Replace ``loop`` by its body when its constant bounds give exactly one iteration
    (MLIR's ``scf::ForOp::promoteIfSingleIteration``): the induction variable becomes the
    lower bound, the iteration arguments the initial values, the results the yielded values.
    Returns whether it did."""
    lb, ub, step = (_const_int(v) for v in loop.operands[:3])
    if lb is None or ub is None or step is None or step <= 0 or -(-(ub - lb) // step) != 1:
        return False
    body = loop.regions[0].block
    vmap = {id(body.args[0]): loop.operands[0]}
    vmap.update({id(a): v for a, v in zip(body.args[1:], loop.operands[3:], strict=True)})
    yield_op = body.ops[-1]
    assert loop.parent is not None
    _clone_into(loop.parent, loop, body.ops[:-1], vmap)
    for r, v in zip(loop.results, yield_op.operands, strict=True):
        r.replace_all_uses_with(vmap.get(id(v), v))
    loop.erase()
    return True


def unroll(loop: Operation, factor: int) -> None:
    """Unroll ``loop`` (an ``scf.for``) by ``factor`` in place (module docstring)."""
    loop.attributes.pop(FACTOR, None)
    e = _Emitter(loop)
    lb, ub, step = loop.operands[:3]
    new_ub, new_step, epilogue = _bounds(e, lb, ub, step, factor)
    if epilogue:
        # the epilogue reads the main loop's results; built before the main loop's results
        # are redirected (it takes over their uses)
        promote_if_single_iteration(_epilogue(loop, new_ub))
    loop.set_operand(1, new_ub)
    loop.set_operand(2, new_step)
    body = loop.regions[0].block
    iv, iters = body.args[0], body.args[1:]
    original = list(body.ops[:-1])
    yield_op = body.ops[-1]
    yielded = list(yield_op.operands)
    carried = yielded
    for k in range(1, factor):
        stride = e.op("arith.muli", [step, e.const(k, iv.type, yield_op, body)],
                      anchor=yield_op, block=body)
        vmap = {id(iv): e.op("arith.addi", [iv, stride], anchor=yield_op, block=body)}
        vmap.update({id(a): v for a, v in zip(iters, carried, strict=True)})
        _clone_into(body, yield_op, original, vmap)
        carried = [vmap.get(id(v), v) for v in yielded]
    for i, v in enumerate(carried):
        yield_op.set_operand(i, v)
    promote_if_single_iteration(loop)


@dataclass
class LoopUnroll(Pass):
    """Unroll every ``scf.for`` carrying ``tt.loop_unroll_factor`` (module docstring).
    No options."""

    name = "triton-loop-unroll"

    def run(self, module: Operation, ctx=None) -> None:
        loops = [op for op in module.walk() if op.name == "scf.for" and FACTOR in op.attributes]
        for loop in reversed(loops):  # inner loops first: an outer copy holds them unrolled
            factor = int(loop.attributes[FACTOR])
            if factor > 1:
                unroll(loop, factor)
            else:
                loop.attributes.pop(FACTOR)
