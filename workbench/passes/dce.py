"""Dead code elimination (``dce``; registered also as Triton's ``symbol-dce``).

Removes ops whose results are unused and that have no side effects (see
:mod:`workbench.passes.effects`), iterating to a fixed point and descending into regions
(loop bodies, if branches, reduce combiners), then removes private ``tt.func`` ops that no
``tt.call`` references (what MLIR's ``symbol-dce`` does).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Block, Operation
from .effects import is_trivially_dead
from .manager import Pass


def erase_dead_ops(root: Operation) -> int:
    """Erase trivially dead ops nested anywhere in ``root`` until none is left.

    Returns the number of ops erased. Blocks are scanned from the end so a chain of dead ops
    disappears in one sweep; the sweep repeats while it erases anything."""
    total = 0
    while True:
        n = 0
        for region in root.regions:
            for block in region.blocks:
                n += _sweep_block(block)
        total += n
        if n == 0:
            return total


def _sweep_block(block: Block) -> int:
    n = 0
    for op in reversed(list(block.ops)):
        if op.regions:
            for region in op.regions:
                for inner in region.blocks:
                    n += _sweep_block(inner)
        if is_trivially_dead(op):
            op.erase()
            n += 1
    return n


def remove_dead_symbols(module: Operation) -> int:
    """Erase private ``tt.func`` ops not referenced by any ``tt.call``; returns how many."""
    called = {op.attributes.get("callee") for op in module.walk() if op.name == "tt.call"}
    n = 0
    for op in list(module.regions[0].block.ops):
        if (op.name == "tt.func" and op.attributes.get("visibility", "public") == "private"
                and op.attributes.get("sym_name") not in called):
            op.erase()
            n += 1
    return n


@dataclass
class DCE(Pass):
    """Remove unused side-effect-free ops (iteratively, inside regions too) and unused private
    functions. No options."""

    name = "dce"

    def run(self, module: Operation, ctx=None) -> None:
        erase_dead_ops(module)
        remove_dead_symbols(module)
