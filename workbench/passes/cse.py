"""Common subexpression elimination (``cse``).

Two side-effect-free ops (see :mod:`workbench.passes.effects`) with the same name, operands,
attributes and result types compute the same values; the later one is replaced by the earlier
one when the earlier dominates it. In our structured IR (single-block regions) an op dominates
everything after it in its block and everything inside the regions of later ops of that block,
so the pass walks each block with a scoped table: a nested region sees the table of its
enclosing blocks but adds to its own scope only. Loads, stores, atomics and prints are never
merged; region ops (``scf.for``, ``tt.reduce``) are not merged either.
"""
from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass

from ..ir.core import Block, Operation
from .effects import is_pure
from .manager import Pass


def freeze(value):
    """A hashable form of an attribute value (lists -> tuples, dicts -> sorted items);
    ``bool`` and ``int``/``float`` are kept apart so ``True`` and ``1`` differ."""
    if isinstance(value, dict):
        return ("dict",) + tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("seq",) + tuple(freeze(v) for v in value)
    if isinstance(value, float):
        return ("float", repr(value))  # keeps -0.0 apart from 0.0 and nan equal to nan
    return (type(value).__name__, value)


def op_key(op: Operation):
    """The identity of a pure op for CSE: name, operands (by identity), attributes, types."""
    return (op.name, tuple(id(v) for v in op.operands), freeze(op.attributes),
            tuple(r.type for r in op.results))


def cse_block(block: Block, scope) -> int:
    """CSE ``block`` with ``scope`` (a ChainMap of keys visible from enclosing blocks).
    Returns the number of ops erased."""
    n = 0
    for op in list(block.ops):
        for region in op.regions:
            for inner in region.blocks:
                n += cse_block(inner, scope.new_child())
        if op.regions or not op.results or not is_pure(op):
            continue
        key = op_key(op)
        prev = scope.get(key)
        if prev is None:
            scope[key] = op
            continue
        for old, new in zip(op.results, prev.results, strict=False):
            old.replace_all_uses_with(new)
        op.erase()
        n += 1
    return n


@dataclass
class CSE(Pass):
    """Merge identical side-effect-free ops where the first dominates the second. No options."""

    name = "cse"

    def run(self, module: Operation, ctx=None) -> None:
        for region in module.regions:
            for block in region.blocks:
                cse_block(block, ChainMap())
