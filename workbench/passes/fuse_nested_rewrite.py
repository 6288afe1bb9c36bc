"""The rewrite of one loop nest by ``tritongpu-fuse-nested-loops`` (:mod:`.fuse_nested_loops`
describes the form; Triton 3.6 ``FuseNestedLoops.cpp``: ``fuseOneLevel`` for one inner
loop)."""
from __future__ import annotations

from ..ir.core import Block, Operation, Value
from ..ir.types import i1
from .fuse_nested_loops import (
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


def fuse_nest(outer: Operation, inner: Operation) -> bool:
    """Flatten the nest ``outer`` / ``inner`` (module docstring of
    :mod:`.fuse_nested_loops`). Returns whether it was fused; when the inner bounds cannot
    be hoisted or a carried value has no placeholder, nothing changes."""
    sink_epilogue_only(outer, inner)
    if not _carried_types_ok(outer, inner) or not speculate(outer, inner):
        return False
    fuse_one_level(outer, inner)
    return True


def _names(vals, src) -> None:
    for v, s in zip(vals, src, strict=True):
        v.name = s.name


def fuse_one_level(outer: Operation, inner: Operation) -> Operation:
    """The rewrite proper, after :func:`~.fuse_nested_loops.speculate` (the inner bounds are
    defined before ``outer`` and the inner body always runs). Returns the fused loop."""
    body = outer.regions[0].block
    idx = body.ops.index(inner)
    prologue, epilogue, oy = body.ops[:idx], body.ops[idx + 1:-1], body.ops[-1]
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
    carried = [c0, _op(outer, "arith.subi", [lb_i, st_i], ity), *outer.operands[3:],
               _placeholder(outer, ity)]
    carried += [v if out else _placeholder(outer, v.type) for v, out in zip(inits_j, outside,
                                                                            strict=True)]
    carried += [_placeholder(outer, v.type) for v in pro_outs]
    fused = Operation("scf.for", [c0, total, c1, *carried], [v.type for v in carried],
                      {k: outer.attributes[k] for k in _KEEP if k in outer.attributes},
                      regions=1, loc=outer.loc)
    block_of(outer).insert_before(outer, fused)
    fb = fused.regions[0].add_block()
    fb.add_arg(ity, "_")
    args = [fb.add_arg(v.type) for v in carried]
    n_o, n_j = len(outer.operands) - 3, len(inits_j)
    t_arg, i_prev = args[0], args[1]
    o_args, j_arg = args[2:2 + n_o], args[2 + n_o]
    jo_args = args[3 + n_o:3 + n_o + n_j]
    po_args = args[3 + n_o + n_j:]
    _names(o_args, body.args[1:])
    _names([i_prev, j_arg], [body.args[0], inner.regions[0].block.args[0]])
    for a, n in zip(body.args[1:], o_args, strict=True):
        a.replace_all_uses_with(n)
    inits_j = inner.operands[3:]  # the outer iter args among them are the fused loop's now
    # prologue: if T == 0 (the first fused iteration of an outer iteration)
    anchor = Operation("scf.yield", [], [])  # a placeholder end of the fused body
    fb.append(anchor)
    first = _op(anchor, "arith.cmpi", [t_arg, c0], i1, predicate="eq")
    passed = [k for k, out in enumerate(outside) if not out]
    p_types = [lb_j.type, *[v.type for v in pro_outs], *[inits_j[k].type for k in passed], ity]
    pif = Operation("scf.if", [first], p_types, regions=2, loc=outer.loc)
    fb.insert_before(anchor, pif)
    then = pif.regions[0].add_block()
    i_new = Operation("arith.addi", [i_prev, st_i], [ity], loc=outer.loc)
    i_new.result.name = body.args[0].name
    then.append(i_new)
    _move(prologue, then)
    then.append(Operation("scf.yield", [lb_j, *pro_outs, *[inits_j[k] for k in passed],
                                        i_new.result], []))
    pif.regions[1].add_block().append(Operation(
        "scf.yield", [j_arg, *po_args, *[jo_args[k] for k in passed], i_prev], []))
    j_val, i_val = pif.results[0], pif.results[-1]
    _names([j_val, i_val], [inner.regions[0].block.args[0], body.args[0]])
    for u, k in list(body.args[0].uses):
        u.set_operand(k, i_new.result if _inside(u, pif) else i_val)
    for v, r in zip(pro_outs, pif.results[1:1 + len(pro_outs)], strict=True):
        r.name = v.name
        _replace_outside(v, r, pif)
    # the inner body, inlined (ttg.must-execute)
    ib = inner.regions[0].block
    ib.args[0].replace_all_uses_with(j_val)
    it = iter(pif.results[1 + len(pro_outs):-1])
    for k, a in enumerate(ib.args[1:]):
        a.replace_all_uses_with(jo_args[k] if outside[k] else next(it))
    iy = ib.ops[-1]
    yielded = list(iy.operands)
    iy.erase()
    _move(list(ib.ops), fb)
    fb.ops.remove(anchor)
    fb.append(anchor)
    j_next = _op(anchor, "arith.addi", [j_val, st_j], lb_j.type)
    for r, v in zip(inner.results, yielded, strict=True):
        r.replace_all_uses_with(v)
    inner.erase()
    # epilogue: if T == inner_len - 1 (the last fused iteration of an outer iteration)
    is_last = _op(anchor, "arith.cmpi", [t_arg, last], i1, predicate="eq")
    epi_ids = {id(op) for op in epilogue}
    pos = [p for p, v in enumerate(oy.operands)
           if v.defining_op is not None and id(v.defining_op) in epi_ids]
    resets = [k for k, out in enumerate(outside) if out]
    e_types = [oy.operands[p].type for p in pos] + [inits_j[k].type for k in resets]
    eif = Operation("scf.if", [is_last], e_types, regions=2, loc=outer.loc)
    if epilogue or e_types:
        fb.insert_before(anchor, eif)
    et = eif.regions[0].add_block()
    _move(epilogue, et)
    et.append(Operation("scf.yield", [oy.operands[p] for p in pos] +
                        [inits_j[k] for k in resets], []))
    eif.regions[1].add_block().append(Operation(
        "scf.yield", [o_args[p] for p in pos] + [yielded[k] for k in resets], []))
    out_yield = list(oy.operands)
    for p, r in zip(pos, eif.results[:len(pos)], strict=True):
        r.name = out_yield[p].name
        out_yield[p] = r
    j_out = list(yielded)
    for k, r in zip(resets, eif.results[len(pos):], strict=True):
        r.name = yielded[k].name
        j_out[k] = r
    t_next = _op(anchor, "arith.select", [is_last, c0, _op(anchor, "arith.addi",
                                                           [t_arg, c1], ity)], ity)
    for v in [t_next, i_val, *out_yield, j_next, *j_out,
              *pif.results[1:1 + len(pro_outs)]]:
        anchor.add_operand(v)
    for r, f in zip(outer.results, fused.results[2:2 + n_o], strict=True):
        f.name = r.name
        r.replace_all_uses_with(f)
    oy.erase()
    outer.erase()
    return fused


def _placeholder(before: Operation, t) -> Value:
    v = placeholder(before, t)
    assert v is not None, "checked by _carried_types_ok"
    return v


def _inside(op: Operation, anc: Operation) -> bool:
    p = op.parent_op()
    while p is not None:
        if p is anc:
            return True
        p = p.parent_op()
    return False


__all__ = ["fuse_nest", "fuse_one_level"]
