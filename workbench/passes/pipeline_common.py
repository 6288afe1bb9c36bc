"""Helpers shared by the two software pipeliners of ``tritongpu-pipeline`` (cp.async,
:mod:`.pipeline`; TMA, :mod:`.pipeline_tma`): constants and binary ops inserted before an op,
cloning an address computation for another iteration, the prologue and prefetch values of
loop-carried pointers advanced by a loop-invariant step, loop-carried buffer indices that wrap
around, and dead-code removal in a body."""
from __future__ import annotations

from ..ir.core import Operation, Value
from ..ir.types import i1, i32
from .effects import is_pure
from .values import block_of, defining_op


def const_before(before: Operation, value, t=i32) -> Value:
    """An ``arith.constant`` of ``value`` (type ``t``, i32 by default) before ``before``."""
    op = Operation("arith.constant", [], [t], {"value": value}, loc=before.loc)
    block_of(before).insert_before(before, op)
    return op.result


_FOLD = {"arith.addi": lambda x, y: x + y, "arith.subi": lambda x, y: x - y,
         "arith.muli": lambda x, y: x * y}


def _int_const(v: Value):
    d = v.defining_op
    if d is not None and d.name == "arith.constant" and isinstance(d.attributes.get("value"),
                                                                     int):
        return d.attributes["value"]
    return None


def binop_before(before: Operation, name: str, a: Value, b: Value, t=i32, loc=None) -> Value:
    """The binary op ``name`` of ``a`` and ``b`` (result type ``t``) before ``before``; an
    i32 ``addi``/``subi``/``muli`` of two integer constants is folded into one constant (as
    MLIR's folder leaves Triton's pipelined loops: ``%c128_i32``, not ``64 * 2``)."""
    x, y = _int_const(a), _int_const(b)
    if name in _FOLD and t == i32 and x is not None and y is not None:
        r = _FOLD[name](x, y)
        if -2**31 <= r < 2**31:
            return const_before(before, r)
    op = Operation(name, [a, b], [t], loc=loc or before.loc)
    block_of(before).insert_before(before, op)
    return op.result


def add_iter_arg(loop: Operation, init: Value) -> Value:
    """Append an iter arg to the ``scf.for`` ``loop``, initialised to ``init`` (a new operand,
    body argument and result of ``init``'s type). Returns the body argument; the caller
    appends the value yielded for it to the body's ``scf.yield``."""
    loop.add_operand(init)
    loop.results.append(Value(init.type, loop, len(loop.results)))
    return loop.regions[0].block.add_arg(init.type, init.name)


def increment_modulo(before: Operation, counter: Value, n: int) -> Value:
    """``counter + 1``, back to 0 when it reaches ``n`` (i32), before ``before``: how Triton's
    pipeliner advances a loop-carried buffer index (``createIncrementModulo`` in
    ``lib/Dialect/TritonGPU/Transforms/Pipeliner/``: ``addi``, ``cmpi sge``, ``select``)."""
    nxt = binop_before(before, "arith.addi", counter, const_before(before, 1))
    full = binop_before(before, "arith.cmpi", nxt, const_before(before, n), i1)
    defining_op(full).attributes["predicate"] = "sge"
    sel = Operation("arith.select", [full, const_before(before, 0), nxt], [i32], loc=before.loc)
    block_of(before).insert_before(before, sel)
    return sel.result


def clone_before(ops: list, mapping: dict, before: Operation) -> None:
    """Clone ``ops`` (topological order) before ``before``, operands through ``mapping``
    (``id(old value) -> new value``), which receives the clones' results. Ops whose results
    are already mapped (shared by two loads of one stage) are not cloned again."""
    for op in ops:
        if op.results and id(op.results[0]) in mapping:
            continue
        new = Operation(op.name, [mapping.get(id(v), v) for v in op.operands],
                        [r.type for r in op.results], dict(op.attributes), loc=op.loc)
        for r, nr in zip(op.results, new.results, strict=False):
            nr.name = r.name
            mapping[id(r)] = nr
        block_of(before).insert_before(before, new)


def advance_chains(loop: Operation, cands: list, stages: int) -> dict:
    """For every affine iter arg the candidates read: ``id(arg) -> (affine, [p_0 .. p_{S-1}],
    inc)`` where ``p_s = init + s * inc`` (a chain of ``tt.addptr`` before the loop, as
    Triton's prologue) and ``inc`` the increment computed before the loop."""
    chains = {}
    for c in cands:
        for a in c.carried:
            if id(a.arg) in chains:
                continue
            mapping: dict = {}
            clone_before(a.inc_ops, mapping, loop)
            inc = mapping.get(id(a.inc), a.inc)
            ptrs = [loop.operands[3 + a.index - 1]]
            for _ in range(1, stages):
                ptrs.append(binop_before(loop, a.advance.name, ptrs[-1], inc, a.arg.type,
                                   loc=a.advance.loc))
            chains[id(a.arg)] = (a, ptrs, inc)
    return chains


def ahead_pointers(loop, chains: dict, stages: int, first: Operation) -> dict:
    """In the body, before ``first``: ``arg + (S - 1) * inc`` for every affine iter arg (the
    pointer of the iteration being prefetched). ``id(arg) -> (addptr op, offset op)``."""
    out = {}
    for key, (a, _, inc) in chains.items():
        n = const_before(loop, stages - 1, inc.type)
        off = binop_before(loop, "arith.muli", inc, n, inc.type, loc=a.advance.loc)
        ahead = binop_before(first, a.advance.name, a.arg, off, a.arg.type, loc=a.advance.loc)
        ahead.name = a.arg.name
        out[key] = ahead
    return out


def shift_carried(loop, chains: dict, ahead: dict) -> None:
    """Where nothing but the prefetch and the advance read an affine iter arg and its final
    value is unused after the loop, carry the prefetch pointer itself (init ``p_{S-1}``, as
    Triton does) instead of adding ``(S - 1) * inc`` every iteration."""
    for key, (a, ptrs, _) in chains.items():
        p = ahead[key]
        users = {id(u) for u, _ in a.arg.uses}
        if loop.results[a.index - 1].uses or users != {id(a.advance), id(p.defining_op)} or \
                len(a.advance.result.uses) != 1:
            continue
        p.replace_all_uses_with(a.arg)
        off = p.defining_op.operands[1].defining_op
        p.defining_op.erase()
        loop.set_operand(3 + a.index - 1, ptrs[-1])
        # ``(S - 1) * inc`` and ``S - 1``, unless they were folded into one constant
        dead = [off] + ([off.operands[1].defining_op] if off is not None and
                        len(off.operands) > 1 else [])
        for op in dead:
            if op is not None and not op.result.uses:
                op.erase()


def issue_point(body) -> Operation:
    """The op the prefetch copies of a wgmma loop go before, as Triton's schedule orders the
    body (``ScheduleLoops.cpp``): first every other op in program order, then the loads'
    cluster, then the ``scf.if`` ops no other op depends on (a fused nest's epilogue). Moves
    such result-less ``scf.if`` ops of ``body`` to its end and returns the first of them, or
    the terminator."""
    term = body.terminator
    ifs = [op for op in body.ops if op.name == "scf.if" and not any(r.uses for r in op.results)]
    for op in ifs:
        body.ops.remove(op)
        body.insert_before(term, op)
    return ifs[0] if ifs else term


def dce_block(block) -> None:
    """Erase the pure, region-free ops of ``block`` whose results are unused, repeatedly."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.ops)):
            if op.results and not any(r.uses for r in op.results) and is_pure(op) and \
                    not op.regions:
                op.erase()
                changed = True


__all__ = ["advance_chains", "ahead_pointers", "binop_before", "clone_before",
           "const_before", "dce_block", "issue_point", "shift_carried"]
