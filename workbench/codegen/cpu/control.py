"""Structured control flow (scf.for, scf.if) and tt.dot in the CPU lowering.

- ``tt.reduce``: see :mod:`.reduce`.
- ``scf.for``: scalar loop-carried values become phis; tile loop-carried values live in a
  dedicated buffer updated at ``scf.yield`` (through staging buffers when a yielded value reads
  any loop-carried buffer, so swaps are correct). Signed ``iv < ub`` test, as MLIR's scf.for.
- ``scf.if``: scalar results become phis, tile results a buffer written by both branches.
- ``scf.while``: the before region runs at the loop head and ends in ``scf.condition``; its
  forwarded values become the after region's arguments (scalars: SSA values of the head
  block; tiles: a buffer written at the head) and, once the condition is false, the results.
  The after region's ``scf.yield`` feeds the next head (scalars: phis; tiles: buffers, staged
  when a yielded value reads one of them). A loop that reads memory (``tt.load``, atomics) may
  be waiting for another program (a spin lock), so its head first checks the launch's stop
  flag and leaves the program once another program failed
  (:meth:`.lower.KernelLowering.leave_if_stopped`).
- A loop whose ``llvm.loop_annotation`` turns LICM off (``tl.range(..., disable_licm=True)``,
  ``tl.condition(c, disable_licm=True)``) gets the ``!llvm.loop`` metadata MLIR gives it in
  Triton on its back edge: a self-referential loop id naming ``llvm.licm.disable`` and
  ``llvm.loop.licm_versioning.disable``, which LLVM's LICM obeys.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.core import Operation
from ...ir.types import TensorType
from .irtypes import terminator_of
from .llvmtypes import value_type
from .tiles import Buffer, Splat


def _inline_combine(lw, block, values: list) -> list:
    """See :func:`.reduce.inline_combine`."""
    from .reduce import inline_combine
    return inline_combine(lw, block, values)


def _depends(t, ptrs) -> bool:
    if isinstance(t, Splat):
        return False
    if isinstance(t, Buffer):
        return any(t.ptr is p for p in ptrs)
    return any(o is not None and _depends(o, ptrs) for o in t.operands)


def _store_tiles(lw, pairs, bufs) -> None:
    """Materialise ``lw.tile(value)`` into ``bufs[k]`` for ``(k, value)`` in ``pairs``; values
    reading any of ``bufs`` are computed into staging buffers first (swap-safe)."""
    ptrs = [buf.ptr for buf in bufs.values()]
    staged, direct = {}, {}
    for k, v in pairs:
        t = lw.tile(v)
        if t is bufs[k]:
            continue
        if _depends(t, ptrs):
            staged[k] = lw.materialize(t)
        else:
            direct[k] = t
    for k, t in list(direct.items()) + list(staged.items()):
        lw.materialize(t, into=bufs[k])


def _lower_region_ops(lw, block) -> None:
    """Lower every op of ``block`` but its terminator, then take the terminator's location."""
    for inner in block.ops[:-1]:
        lw.set_loc(inner)
        lw.lower_op(inner)
    lw.set_loc(block.terminator)


def _carried_buffers(lw, inits, args) -> dict:
    """``k -> buffer`` for each tile among ``inits``: a fresh buffer holding the initial
    value, bound to the region argument ``args[k]``."""
    bufs = {}
    for k, init in enumerate(inits):
        if isinstance(init.type, TensorType):
            buf = lw.alloc(tuple(init.type.shape), init.type.element)
            lw.materialize(lw.tile(init), into=buf)
            bufs[k] = buf
            lw.env[args[k]] = buf
    return bufs


def _carried_phis(lw, inits, args, bufs, pre) -> dict:
    """``k -> phi`` at the current (loop head) block for each scalar among ``inits`` (those
    not in ``bufs``), coming in from block ``pre``, bound to the region argument ``args[k]``."""
    phis = {}
    for k, init in enumerate(inits):
        if k not in bufs:
            p = lw.b.phi(lw.env[init].type)
            p.add_incoming(lw.env[init], pre)
            phis[k] = p
            lw.env[args[k]] = p
    return phis


def _annotate_back_edge(lw, op: Operation, branch) -> None:
    """``!llvm.loop`` metadata on ``branch`` (the loop's back edge) when ``op`` asks for LICM
    to stay off; a fresh loop id per loop (its first operand is itself, as LLVM requires)."""
    note = op.attributes.get("llvm.loop_annotation")
    if note is None or not getattr(note, "licm_disabled", False):
        return
    hints = [lw.m.add_metadata([ir.MetaDataString(lw.m, name)])
             for name in ("llvm.licm.disable", "llvm.loop.licm_versioning.disable")]
    loop_id = ir.values.MDValue(lw.m, hints, name=str(len(lw.m.metadata)))
    loop_id.operands = (loop_id, *hints)
    branch.set_metadata("llvm.loop", loop_id)


def lower_for(lw, op: Operation) -> None:
    b = lw.b
    lb, ub, step = (lw.env[v] for v in op.operands[:3])
    inits = op.operands[3:]
    body = op.regions[0].block
    carried_args = body.args[1:]
    bufs = _carried_buffers(lw, inits, carried_args)
    pre = b.block
    head = lw.fn.append_basic_block("for.head")
    loop = lw.fn.append_basic_block("for.body")
    exit_ = lw.fn.append_basic_block("for.exit")
    b.branch(head)
    b.position_at_end(head)
    iv = b.phi(lb.type, name="iv")
    iv.add_incoming(lb, pre)
    phis = _carried_phis(lw, inits, carried_args, bufs, pre)
    b.cbranch(b.icmp_signed("<", iv, ub), loop, exit_)
    b.position_at_end(loop)
    lw.env[body.args[0]] = iv
    _lower_region_ops(lw, body)
    yields = terminator_of(body).operands
    _store_tiles(lw, [(k, yields[k]) for k in bufs], bufs)
    end = b.block
    for k, p in phis.items():
        p.add_incoming(lw.env[yields[k]], end)
    iv.add_incoming(b.add(iv, step), end)
    _annotate_back_edge(lw, op, b.branch(head))
    b.position_at_end(exit_)
    for k, r in enumerate(op.results):
        lw.env[r] = bufs[k] if k in bufs else phis[k]


def lower_if(lw, op: Operation) -> None:
    b = lw.b
    cond = lw.env[op.operands[0]]
    outs = {k: lw.alloc(tuple(r.type.shape), r.type.element)
            for k, r in enumerate(op.results) if isinstance(r.type, TensorType)}
    merge = lw.fn.append_basic_block("if.end")
    arms = []
    targets = []
    for name in ("if.then", "if.else"):
        targets.append(lw.fn.append_basic_block(name))
    b.cbranch(cond, targets[0], targets[1])
    for region, blk in zip(op.regions, targets, strict=False):
        b.position_at_end(blk)
        vals = []
        if region.blocks:
            rb = region.block
            for inner in rb.ops[:-1]:
                lw.set_loc(inner)
                lw.lower_op(inner)
            if rb.terminator is not None and rb.terminator.name == "scf.yield":
                for k, y in enumerate(rb.terminator.operands):
                    if k in outs:
                        lw.materialize(lw.tile(y), into=outs[k])
                    else:
                        vals.append((k, lw.env[y]))
        arms.append((b.block, dict(vals)))
        b.branch(merge)
    b.position_at_end(merge)
    for k, r in enumerate(op.results):
        if k in outs:
            lw.env[r] = outs[k]
        else:
            p = b.phi(value_type(r.type))
            for blk, arm_values in arms:
                p.add_incoming(arm_values[k], blk)
            lw.env[r] = p


_READS_MEMORY = ("tt.load", "tt.atomic_rmw", "tt.atomic_cas")


def _may_wait_for_another_program(op: Operation) -> bool:
    """True when ``op``'s regions read memory: only then can a loop observe (and so wait
    for) another program's writes."""
    return any(inner.name in _READS_MEMORY for inner in op.walk())


def lower_while(lw, op: Operation) -> None:
    """``scf.while`` (see the module docstring)."""
    b = lw.b
    before, after = op.regions[0].block, op.regions[1].block
    inits = list(op.operands)
    bbufs = _carried_buffers(lw, inits, before.args)
    cbufs = {k: lw.alloc(tuple(a.type.shape), a.type.element)
             for k, a in enumerate(after.args) if isinstance(a.type, TensorType)}
    pre = b.block
    head = lw.fn.append_basic_block("while.before")
    body = lw.fn.append_basic_block("while.after")
    exit_ = lw.fn.append_basic_block("while.exit")
    b.branch(head)
    b.position_at_end(head)
    phis = _carried_phis(lw, inits, before.args, bbufs, pre)
    if _may_wait_for_another_program(op):
        lw.leave_if_stopped()
    _lower_region_ops(lw, before)
    cond_op = terminator_of(before)
    cond = lw.env[cond_op.operands[0]]
    fwd = list(cond_op.operands[1:])
    _store_tiles(lw, [(k, v) for k, v in enumerate(fwd) if k in cbufs], cbufs)
    scalars = {k: lw.env[v] for k, v in enumerate(fwd) if k not in cbufs}
    b.cbranch(cond, body, exit_)
    b.position_at_end(body)
    for k, a in enumerate(after.args):
        lw.env[a] = cbufs[k] if k in cbufs else scalars[k]
    _lower_region_ops(lw, after)
    yields = list(terminator_of(after).operands)
    _store_tiles(lw, [(k, v) for k, v in enumerate(yields) if k in bbufs], bbufs)
    end = b.block
    for k, p in phis.items():
        p.add_incoming(lw.env[yields[k]], end)
    _annotate_back_edge(lw, op, b.branch(head))
    b.position_at_end(exit_)
    for k, r in enumerate(op.results):
        lw.env[r] = cbufs[k] if k in cbufs else scalars[k]
