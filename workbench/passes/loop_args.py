"""Removing ``scf.for`` iter args that carry the same value in every iteration (a helper of
``canonicalize``, not a pass), as MLIR's ``scf.for`` canonicalisation does
(``ForOpIterArgsFolder`` in ``mlir/lib/Dialect/SCF/IR/SCF.cpp``).

An iter arg is invariant when its body yields it back unchanged, or yields the value it was
initialised with (defined before the loop). Its block argument and the loop's result then
both equal the init value: their uses read the init value and the arg, the operand, the
result and the yielded value are dropped. Triton's ``make_ttir`` canonicaliser removes this
way the pass-through fields of rewritten block pointers (base, shape, strides), so the loop
carries only the offsets that ``tt.advance`` moves.
"""
from __future__ import annotations

from ..ir.core import Operation


def _drop_operand(op: Operation, i: int) -> None:
    """Remove operand ``i`` of ``op`` (the later operands shift down by one)."""
    keep = [v for j, v in enumerate(op.operands) if j != i]
    op.drop_operands()
    for v in keep:
        op.add_operand(v)


def fold_invariant_iter_args(loop: Operation) -> int:
    """Drop the invariant iter args of the ``scf.for`` ``loop`` (module doc); returns how many.

    Operand layout of ``scf.for``: lower, upper, step, then one init per iter arg; body
    arguments: the induction variable, then one per iter arg; one result per iter arg."""
    body = loop.regions[0].block
    y = body.terminator
    if y is None or y.name != "scf.yield":
        return 0
    n = 0
    for i in reversed(range(len(loop.results))):
        arg, init, out = body.args[1 + i], loop.operands[3 + i], y.operands[i]
        if out is not arg and out is not init:
            continue
        arg.replace_all_uses_with(init)
        loop.results[i].replace_all_uses_with(init)
        _drop_operand(y, i)
        _drop_operand(loop, 3 + i)
        body.args.pop(1 + i)
        loop.results.pop(i)
        n += 1
    for k, a in enumerate(body.args):
        a.index = k
    for k, r in enumerate(loop.results):
        r.index = k
    return n
