"""The rewrite of one loop nest by ``tritongpu-fuse-nested-loops`` (:mod:`.fuse_nested_loops`
describes the form; Triton 3.6 ``FuseNestedLoops.cpp``: ``fuseOneLevel`` for one inner
loop)."""
from __future__ import annotations

from ..ir.core import Block, Operation, Value
from ..ir.types import FloatType, IntType, PointerType, i1
from .effects import is_pure
from .fuse_nested_prep import (
    _const,
    _op,
    _outputs,
    _replace_outside,
    _top,
    _trip_count,
    placeholder,
    sink_epilogue_only,
    speculate,
)
from .values import block_of, defined_outside

#: loop attributes the fused loop takes over (Triton: the largest num_stages, and the flags)
_KEEP = ("tt.num_stages", "tt.warp_specialize", "tt.disallow_acc_multi_buffer")


def _move(ops: list, block: Block) -> None:
    for op in ops:
        op.parent.ops.remove(op)  # type: ignore[union-attr]
        block.append(op)


def _carried_types_ok(outer: Operation, inner: Operation) -> bool:
    """Every value the fused loop must carry has a placeholder (numbers and pointers)."""
    from ..ir.types import FloatType, IntType, PointerType, TensorType
    body = outer.regions[0].block
    idx = body.ops.index(inner)
    pro = body.ops[:idx]
    ids = {id(op) for op in pro}
    outs = _outputs(pro, lambda u: id(_top(u, body)) not in ids)
    types = [v.type for v in outs] + [r.type for r in inner.results]
    for t in types:
        e = t.element if isinstance(t, TensorType) else t
        if not isinstance(e, (IntType, FloatType, PointerType)):
            return False
    return outer.operands[0].type == inner.operands[0].type


def hoist_invariants(outer: Operation, inner: Operation) -> None:
    """Move the prologue's pure ops whose operands are all defined before ``outer`` (the
    accumulator's ``tl.zeros``, say) in front of it (Triton's ``moveLoopInvariantCode`` on
    the outer loop first): an inner init defined outside the nest is then carried once and
    reset by the epilogue, not carried twice."""
    body = outer.regions[0].block
    for op in list(body.ops[:body.ops.index(inner)]):
        if not op.regions and is_pure(op) and all(defined_outside(v, outer)
                                                  for v in op.operands):
            body.ops.remove(op)
            block_of(outer).insert_before(outer, op)


def fuse_nest(outer: Operation, inner: Operation) -> bool:
    """Flatten the nest ``outer`` / ``inner`` (module docstring of
    :mod:`.fuse_nested_loops`). Returns whether it was fused; when the inner bounds cannot
    be hoisted or a carried value has no placeholder, nothing changes."""
    hoist_invariants(outer, inner)
    sink_epilogue_only(outer, inner)
    if not _carried_types_ok(outer, inner) or not speculate(outer, inner):
        return False
    fuse_one_level(outer, inner)
    return True


def _names(vals, src) -> None:
    for v, s in zip(vals, src, strict=True):
        v.name = s.name


def _scalar_pure(op: Operation) -> bool:
    return not op.regions and is_pure(op) and \
        all(isinstance(v.type, (IntType, FloatType, PointerType))
            for v in list(op.operands) + list(op.results))


def split_prologue(prologue: list) -> tuple[list, list]:
    """``(every_iteration, first_only)``: the prologue's pure scalar ops (recomputed every
    fused iteration from the outer index, so the pipeliner can compute them for a later
    iteration) and the rest (run under ``scf.if T == 0``, their results carried)."""
    late: set = set()
    every, first = [], []
    for op in prologue:
        if _scalar_pure(op) and not any(id(v.defining_op) in late for v in op.operands
                                         if v.defining_op is not None):
            every.append(op)
        else:
            late.add(id(op))
            first.append(op)
    return every, first


def fuse_one_level(outer: Operation, inner: Operation) -> Operation:
    """The rewrite proper, after :func:`~.fuse_nested_loops.speculate` (the inner bounds are
    defined before ``outer`` and the inner body always runs). Returns the fused loop.

    Unlike Triton, the position in the nest is derived from the fused induction variable
    ``t`` (``T = t % inner_len``, ``i = lb_i + (t / inner_len) * step_i``, ``j = lb_j + T *
    step_j``) instead of carried, and the prologue's pure scalar ops run every iteration
    (:func:`split_prologue`): the loads' coordinates are then functions of ``t``, which
    ``tritongpu-pipeline`` can evaluate for a later iteration."""
    body = outer.regions[0].block
    idx = body.ops.index(inner)
    prologue, epilogue, oy = body.ops[:idx], body.ops[idx + 1:-1], body.ops[-1]
    every, prologue = split_prologue(prologue)
    pro_ids = {id(op) for op in prologue}
    pro_outs = _outputs(prologue, lambda u: id(_top(u, body)) not in pro_ids)
    lb_i, ub_i, st_i = outer.operands[:3]
    lb_j, ub_j, st_j = inner.operands[:3]
    ity = lb_i.type
    c0, c1 = _const(outer, 0, ity), _const(outer, 1, ity)
    len_i = _trip_count(outer, lb_i, ub_i, st_i)
    inner_len = _op(outer, "arith.maxsi", [c1, _trip_count(outer, lb_j, ub_j, st_j)], ity)
    total = _op(outer, "arith.muli", [len_i, inner_len], ity)
    last = _op(outer, "arith.subi", [inner_len, c1], ity)
    inits_j = inner.operands[3:]
    outside = [defined_outside(v, outer) for v in inits_j]
    carried = list(outer.operands[3:])
    carried += [v if out else _placeholder(outer, v.type) for v, out in zip(inits_j, outside,
                                                                            strict=True)]
    carried += [_placeholder(outer, v.type) for v in pro_outs]
    fused = Operation("scf.for", [c0, total, c1, *carried], [v.type for v in carried],
                      {k: outer.attributes[k] for k in _KEEP if k in outer.attributes},
                      regions=1, loc=outer.loc)
    block_of(outer).insert_before(outer, fused)
    fb = fused.regions[0].add_block()
    t = fb.add_arg(ity, "_")
    args = [fb.add_arg(v.type) for v in carried]
    n_o, n_j = len(outer.operands) - 3, len(inits_j)
    o_args, jo_args, po_args = args[:n_o], args[n_o:n_o + n_j], args[n_o + n_j:]
    _names(o_args, body.args[1:])
    for a, n in zip(body.args[1:], o_args, strict=True):
        a.replace_all_uses_with(n)
    inits_j = inner.operands[3:]  # the outer iter args among them are the fused loop's now
    anchor = Operation("scf.yield", [], [])  # a placeholder end of the fused body
    fb.append(anchor)
    q = _op(anchor, "arith.divsi", [t, inner_len], ity)
    t_in = _op(anchor, "arith.remsi", [t, inner_len], ity)
    i_val = _op(anchor, "arith.addi", [lb_i, _op(anchor, "arith.muli", [q, st_i], ity)], ity)
    j_val = _op(anchor, "arith.addi", [lb_j, _op(anchor, "arith.muli", [t_in, st_j], ity)],
                ity)
    _names([i_val, j_val], [body.args[0], inner.regions[0].block.args[0]])
    body.args[0].replace_all_uses_with(i_val)
    for op in every:  # the outer index's pure scalar work, every iteration
        op.parent.ops.remove(op)  # type: ignore[union-attr]
        fb.insert_before(anchor, op)
    # the rest of the prologue: if T == 0 (the first fused iteration of an outer iteration)
    first = _op(anchor, "arith.cmpi", [t_in, c0], i1, predicate="eq")
    passed = [k for k, out in enumerate(outside) if not out]
    p_types = [*[v.type for v in pro_outs], *[inits_j[k].type for k in passed]]
    pif = Operation("scf.if", [first], p_types, regions=2, loc=outer.loc)
    fb.insert_before(anchor, pif)
    then = pif.regions[0].add_block()
    _move(prologue, then)
    then.append(Operation("scf.yield", [*pro_outs, *[inits_j[k] for k in passed]], []))
    pif.regions[1].add_block().append(Operation(
        "scf.yield", [*po_args, *[jo_args[k] for k in passed]], []))
    for v, r in zip(pro_outs, pif.results[:len(pro_outs)], strict=True):
        r.name = v.name
        _replace_outside(v, r, pif)
    if not p_types and not prologue:
        fb.ops.remove(pif)
    # the inner body, inlined (ttg.must-execute)
    ib = inner.regions[0].block
    ib.args[0].replace_all_uses_with(j_val)
    it = iter(pif.results[len(pro_outs):])
    for k, a in enumerate(ib.args[1:]):
        a.replace_all_uses_with(jo_args[k] if outside[k] else next(it))
    iy = ib.ops[-1]
    yielded = list(iy.operands)
    iy.erase()
    _move(list(ib.ops), fb)
    fb.ops.remove(anchor)
    fb.append(anchor)
    for r, v in zip(inner.results, yielded, strict=True):
        r.replace_all_uses_with(v)
    inner.erase()
    # epilogue: if T == inner_len - 1 (the last fused iteration of an outer iteration)
    is_last = _op(anchor, "arith.cmpi", [t_in, last], i1, predicate="eq")
    epi_ids = {id(op) for op in epilogue}
    pos = [p for p, v in enumerate(oy.operands)
           if v.defining_op is not None and id(v.defining_op) in epi_ids]
    e_types = [oy.operands[p].type for p in pos]
    eif = Operation("scf.if", [is_last], e_types, regions=2, loc=outer.loc)
    if epilogue or e_types:
        fb.insert_before(anchor, eif)
    et = eif.regions[0].add_block()
    _move(epilogue, et)
    et.append(Operation("scf.yield", [oy.operands[p] for p in pos], []))
    eif.regions[1].add_block().append(Operation("scf.yield", [o_args[p] for p in pos], []))
    out_yield = list(oy.operands)
    for p, r in zip(pos, eif.results, strict=True):
        r.name = out_yield[p].name
        out_yield[p] = r
    # an inner init defined before the nest restarts at the next outer iteration:
    # select(last, init, value) (Triton's if-result, after MLIR's if-to-select folding)
    j_out = list(yielded)
    for k, out in enumerate(outside):
        if out:
            j_out[k] = _op(anchor, "arith.select", [is_last, inits_j[k], yielded[k]],
                           yielded[k].type)
            j_out[k].name = yielded[k].name
    for v in [*out_yield, *j_out, *pif.results[:len(pro_outs)]]:
        anchor.add_operand(v)
    for r, f in zip(outer.results, fused.results[:n_o], strict=True):
        f.name = r.name
        r.replace_all_uses_with(f)
    oy.erase()
    outer.erase()
    return fused


def _placeholder(before: Operation, t) -> Value:
    v = placeholder(before, t)
    assert v is not None, "checked by _carried_types_ok"
    return v


__all__ = ["fuse_nest", "fuse_one_level"]
