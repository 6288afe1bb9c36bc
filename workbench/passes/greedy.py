"""Applying a list of peephole patterns to a function until nothing changes, as MLIR's greedy
pattern driver does (``applyPatternsGreedily``): the driver of ``triton-combine`` and
``triton-reorder-broadcast`` (a helper, not a pass)."""
from __future__ import annotations

from typing import Callable, Sequence

from ..ir.core import Operation
from .dce import erase_dead_ops

#: sweeps over a function before giving up on reaching a fixed point
MAX_ITERATIONS = 16


def apply_patterns(func: Operation, patterns: Sequence[Callable[[Operation], bool]],
                   max_iterations: int = MAX_ITERATIONS) -> bool:
    """Try ``patterns`` (each takes an op, rewrites it in place and returns True, or returns
    False) on every op of ``func`` in program order, the first that applies wins; dead ops
    are erased after each sweep; sweeps repeat until one changes nothing (at most
    ``max_iterations``). Returns True when anything changed."""
    changed_any = False
    for _ in range(max_iterations):
        changed = False
        for op in list(func.walk()):
            if op.parent is None or op is func:
                continue
            if any(pattern(op) for pattern in patterns):
                changed = True
        if changed:
            erase_dead_ops(func)
        changed_any |= changed
        if not changed:
            break
    return changed_any


__all__ = ["MAX_ITERATIONS", "apply_patterns"]
