"""Minimise a failing program: store an earlier value, drop statements nothing uses, shrink the
logical sizes and the loop count, while the failure persists."""
from __future__ import annotations

import copy

from . import build
from .program import Program


def _used(prog: Program) -> set:
    names = {prog.result}
    for s in prog.stmts:
        names.update(a for a in s.args if isinstance(a, str))
    return names


def _candidates(prog: Program):
    values = [s.out for s in prog.stmts if s.kind != "atomic"]
    for name in values[:values.index(prog.result)] if prog.result in values else []:
        p = copy.deepcopy(prog)
        build.set_result(p, name)
        yield p
    used = _used(prog)
    for i, s in enumerate(prog.stmts):
        if s.out not in used or s.kind == "atomic":
            p = copy.deepcopy(prog)
            del p.stmts[i]
            yield p
    for field, low in (("M", 1), ("N", 1), ("it", 0), ("stride_extra", 0)):
        v = getattr(prog, field)
        for new in (low, v // 2):
            if low <= new < v:
                p = copy.deepcopy(prog)
                setattr(p, field, new)
                yield p


def shrink(prog: Program, still_fails, budget: int = 200) -> Program:
    """The smallest program found (greedy, at most ``budget`` trials) for which
    ``still_fails(program)`` stays true; ``prog`` itself must fail."""
    best = prog
    progress = True
    while progress and budget > 0:
        progress = False
        for cand in _candidates(best):
            budget -= 1
            if still_fails(cand):
                best, progress = cand, True
                break
            if budget <= 0:
                break
    return best
