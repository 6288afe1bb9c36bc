"""``triton-combine``: fold an addition of a dot's result into the dot's accumulator.

``acc = acc * alpha + tl.dot(p, v)`` reaches ttir as ``%d = tt.dot %p, %v, %zero`` followed by
``%s = arith.addf %x, %d``. When the dot's accumulator operand is a zero constant and its
result has no other use, the pass rewrites this to ``%s = tt.dot %p, %v, %x`` (the dot moved
to where the addition was) and drops the addition. The same holds for ``arith.addi`` of an
integer dot and for the dot on either side of the addition. The float form is left alone
when the dot limits imprecise accumulation (``maxNumImpreciseAcc != 0``: fp8 dots add their
partial sums in fp32 at that interval, which an initial accumulator would change).

This is Triton 3.6's ``CombineDotAddIPattern`` / ``CombineDotAddFPattern`` of the
``triton-combine`` pass (``lib/Dialect/Triton/Transforms/Combine.cpp``), run after the
canonicalizer in ``make_ttir``. It matters beyond ttir: a dot whose result is only carried to
the next iteration (the accumulator of a K loop, attention's ``P @ V``) can stay in flight
on Hopper (:mod:`.pipeline_wgmma`), one whose result is added to something in the loop
cannot. Triton's other patterns of that pass (select of a masked load, broadcast-multiply-
reduce into a dot, ...) are not implemented here.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation, Value, functions
from .canonicalize import const_value
from .manager import Pass


def _is_zero(v: Value) -> bool:
    """``v`` is an ``arith.constant`` whose (splat) value is zero (``+0.0`` or ``-0.0``)."""
    c = const_value(v)
    return c is not None and not isinstance(c, bool) and isinstance(c, (int, float)) and c == 0


def _fold_one(add: Operation) -> bool:
    """Rewrite ``add`` (an ``arith.addf``/``arith.addi``) when one side is a foldable dot."""
    for k in (1, 0):  # Triton tries the right-hand side first
        dot = add.operands[k].defining_op
        if dot is None or dot.name != "tt.dot" or dot.parent is not add.parent:
            continue
        if len(dot.result.uses) != 1 or not _is_zero(dot.operands[2]):
            continue
        if add.name == "arith.addf" and int(dot.attributes.get("maxNumImpreciseAcc") or 0):
            continue
        block = add.parent
        assert block is not None
        block.ops.remove(dot)
        block.insert_before(add, dot)
        dot.set_operand(2, add.operands[1 - k])
        add.result.replace_all_uses_with(dot.result)
        add.erase()
        return True
    return False


def combine_dot_add(module: Operation) -> int:
    """Apply the fold everywhere in ``module`` until nothing changes; returns how many."""
    n = 0
    for func in functions(module):
        changed = True
        while changed:
            changed = False
            for op in list(func.walk()):
                if op.name in ("arith.addf", "arith.addi") and op.parent is not None and \
                        _fold_one(op):
                    n += 1
                    changed = True
    return n


@dataclass
class Combine(Pass):
    """The ``triton-combine`` pass (module docstring). No options."""

    name = "triton-combine"

    def run(self, module: Operation, ctx=None) -> None:
        combine_dot_add(module)


__all__ = ["Combine", "combine_dot_add"]
