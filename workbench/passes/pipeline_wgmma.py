"""Hopper's asynchronous wgmma in a pipelined loop (:mod:`.pipeline`): the one
``ttng.warp_group_dot`` of the body that may stay in flight, its ``warp_group_dot_wait
{pendings = 1}`` after it, and the ``{pendings = 0}`` drain after the loop (Triton 3.6
``lib/Dialect/TritonGPU/Transforms/Pipeliner/WGMMAPipeline.cpp``; PTX ISA 9.7.15.7
``wgmma.wait_group``)."""
from __future__ import annotations

from ..ir.core import Operation
from .values import block_of


def find_async_dot(body, cands: list):
    """The body's ``ttng.warp_group_dot`` that can stay in flight across iterations, or None:
    the only dot of the body, both operands pipelined buffers (or transposed views of them,
    ``ttg.memdesc_trans``), its accumulator an iter arg
    read only by it and its result only yielded back into that iter arg."""
    dots = [op for op in body.ops if op.name in ("tt.dot", "ttng.warp_group_dot")]
    if len(dots) != 1 or dots[0].name != "ttng.warp_group_dot":
        return None
    dot = dots[0]
    allocs = {id(c.alloc.result) for c in cands}
    srcs = [v.defining_op.operands[0] if v.defining_op is not None and
            v.defining_op.name == "ttg.memdesc_trans" else v for v in dot.operands[:2]]
    if not all(id(v) in allocs for v in srcs):
        return None
    acc, y = dot.operands[2], body.terminator
    if acc.defining_op is not None or acc.owner is not body or acc.index == 0 or y is None:
        return None
    users = [u for u, _ in dot.result.uses]
    if [u for u, _ in acc.uses] != [dot]:
        return None
    if users == [y] and y.operands[acc.index - 1] is dot.result:
        return dot
    return dot if epilogue_if(dot, y.operands[acc.index - 1]) is not None else None


def epilogue_if(dot: Operation, carried) -> Operation | None:
    """The ``scf.if`` of a fused loop nest's epilogue (:mod:`.fuse_nested_rewrite`) when
    ``carried`` (what the loop carries on as the accumulator) is ``arith.select %last,
    %init, %d`` of the dot's result ``%d`` (the reset at a tile's end) and every other use of
    ``%d`` is inside that ``scf.if``, else None."""
    sel = carried.defining_op
    body = block_of(dot)
    if sel is None or sel.name != "arith.select" or sel.parent is not body or \
            sel.operands[2] is not dot.result:
        return None
    ifs = [op for op in body.ops if op.name == "scf.if" and op.operands[0] is sel.operands[0]]
    if len(ifs) != 1:
        return None
    e = ifs[0]
    for u, _ in dot.result.uses:
        if u is sel:
            continue
        while u is not None and u is not e:
            u = u.parent_op()
        if u is None:
            return None
    return e


def make_async(dot: Operation) -> Operation:
    """Mark ``dot`` asynchronous and wait for all but the newest wgmma group right after it
    (``ttng.warp_group_dot_wait {pendings = 1}``: the previous iteration's group, which read
    the slot the prefetch overwrites next, is done). Returns the op the prefetch goes before."""
    body = block_of(dot)
    dot.attributes["isAsync"] = True
    wait = Operation("ttng.warp_group_dot_wait", [dot.result], [dot.result.type],
                     {"pendings": 1}, loc=dot.loc)
    wait.result.name = dot.result.name
    body.insert(body.ops.index(dot) + 1, wait)
    for u, i in list(dot.result.uses):
        if u is not wait:
            u.set_operand(i, wait.result)
    y = body.terminator
    e = epilogue_if(wait, y.operands[dot.operands[2].index - 1]) if y is not None else None
    if e is not None:  # the epilogue reads the accumulator: every group done there
        then = e.regions[0].block
        done = Operation("ttng.warp_group_dot_wait", [wait.result], [wait.result.type],
                         {"pendings": 0}, loc=dot.loc)
        done.result.name = dot.result.name
        then.insert(0, done)
        for u, i in list(wait.result.uses):
            if u is not done and _inside(u, then):
                u.set_operand(i, done.result)
    return body.ops[body.ops.index(wait) + 1]


def _inside(op: Operation, block) -> bool:
    cur: Operation | None = op
    while cur is not None:
        if cur.parent is block:
            return True
        cur = cur.parent_op()
    return False


def drain_after(loop: Operation) -> None:
    """``ttng.warp_group_dot_wait {pendings = 0}`` on the loop's accumulator result after the
    loop: the last wgmma group has finished before anything reads it (also when the loop
    carries ``select(last, init, acc)``, a fused nest's accumulator: no group may still write
    its registers after the loop)."""
    y = loop.regions[0].block.terminator
    if y is None:
        return
    for j, v in enumerate(y.operands):
        d = v.defining_op
        if d is not None and d.name == "arith.select":  # a fused nest's reset accumulator
            d = d.operands[2].defining_op
        if d is None or d.name != "ttng.warp_group_dot_wait":
            continue
        res = loop.results[j]
        wait = Operation("ttng.warp_group_dot_wait", [res], [res.type], {"pendings": 0},
                         loc=loop.loc)
        wait.result.name = res.name
        blk = block_of(loop)
        blk.insert(blk.ops.index(loop) + 1, wait)
        for u, i in list(res.uses):
            if u is not wait:
                u.set_operand(i, wait.result)


__all__ = ["find_async_dot", "make_async", "drain_after"]
