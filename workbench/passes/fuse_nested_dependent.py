"""``tritongpu-fuse-nested-loops`` for a nest whose inner bounds depend on the outer loop
(Triton 3.6 ``lib/Dialect/TritonGPU/Transforms/FuseNestedLoops.cpp``: ``fuseOneLevel`` with
"sliced" inner bounds, after ``matchPositiveTripCount`` of ``speculateInnerLoopLength``).

Triton fuses such a nest only when the kernel states that the inner loop runs at least once,
``tl.assume(ub > lb)`` (or ``lb < ub``) on the inner loop's own bound values: the ttir then
holds ``llvm.intr.assume (arith.cmpi sgt, %ub, %lb)`` and the inner loop is
``ttg.must-execute``. Its bounds must be computable from the outer induction variable and
values defined before the nest by pure scalar ops (``canSliceBounds``). The nest::

    for i in range(lb_i, ub_i, step_i):           # tt.flatten
        prologue(i)                               # computes lb_j(i), ub_j(i)
        for j in range(lb_j(i), ub_j(i), step_j):
            body(i, j)
        epilogue(i)

becomes, as Triton prints it after its canonicalizer::

    total = 0
    for i in range(lb_i, ub_i, step_i):           # the "peeled" length loop
        total += max(len_j(i), 1)                 # the bound ops cloned, i -> its IV
    T = 0; i = lb_i - step_i; inner_len = 0; j = 0
    for _ in range(total):
        if T == 0:                                # scf.if, results carried
            i += step_i; prologue(i); inner_len = max(len_j(i), 1); j = lb_j(i)
        body(i, j); j += step_j                   # must execute: no scf.if
        if T == inner_len - 1: epilogue(i)        # scf.if, only when there is one
        T = 0 if T == inner_len - 1 else T + 1

``len(range(lb, ub, s)) = (ub - lb + s - 1) / s`` for a positive constant step ``s``
(Triton's ``arith.ceildivsi``, folded to ``ub - lb`` for ``s = 1``). Carried values follow
Triton: the outer loop's iter args, the inner loop's (an init defined before the nest is
carried once and restarts with ``arith.select %last, %init, %value``, Triton's epilogue reset
after MLIR's if-to-select folding; one computed in the outer body passes through the
``T == 0`` branch), and the prologue's results read later. An outer iter arg used only as the
inner loop's init while the outer loop yields the inner loop's result is one carried value
(what MLIR's canonicalizer merges in Triton's output). An outer yield the rest of the outer
body reads back is yielded through the epilogue's ``scf.if`` so it changes only at the end of
an outer iteration.
"""
from __future__ import annotations

from ..ir.attrs import UNIT
from ..ir.clone import clone_op
from ..ir.core import Block, Operation, Value
from ..ir.types import FloatType, IntType, PointerType, TensorType, i1
from .effects import is_pure
from .fuse_nested_prep import MUST_EXECUTE, _const, _op, _replace_outside, _top, placeholder
from .fuse_nested_prep import _nested_in as _inside
from .values import block_of, defined_outside

#: loop attributes the fused loop takes over from the outer loop
_FLAGS = ("tt.warp_specialize", "tt.disallow_acc_multi_buffer")


def positive_trip_count(inner: Operation) -> bool:
    """Whether an ``llvm.intr.assume`` states ``ub > lb`` (``arith.cmpi sgt, %ub, %lb``) or
    ``lb < ub`` (``slt``) of ``inner``'s own bound values (Triton's
    ``matchPositiveTripCount``, as crude: the very values, not an equivalent form)."""
    lb, ub = inner.operands[0], inner.operands[1]
    for u, _ in ub.uses:
        if u.name != "arith.cmpi" or not any(x.name == "llvm.intr.assume"
                                             for x, _ in u.results[0].uses):
            continue
        pred, a, b = u.attributes.get("predicate"), u.operands[0], u.operands[1]
        if (pred == "sgt" and a is ub and b is lb) or (pred == "slt" and a is lb and b is ub):
            return True
    return False


def _scalar(t) -> bool:
    return isinstance(t, (IntType, FloatType, PointerType))


def slice_bounds(outer: Operation, values) -> list | None:
    """The ops of ``outer``'s body computing ``values`` (topological order) from the outer
    induction variable and values defined before ``outer``, all pure scalar ops (Triton's
    ``canSliceBounds``); None when another value is needed (an iter arg, a load...)."""
    body = outer.regions[0].block
    iv = body.args[0]
    ops: list = []
    seen: set = set()

    def visit(v: Value) -> bool:
        if v is iv or defined_outside(v, outer):
            return True
        d = v.defining_op
        if d is None or d.parent is not body or d.regions or not is_pure(d) or \
                not all(_scalar(x.type) for x in list(d.operands) + list(d.results)):
            return False
        if id(d) in seen:
            return True
        if not all(visit(o) for o in d.operands):
            return False
        seen.add(id(d))
        ops.append(d)
        return True

    return ops if all(visit(v) for v in values) else None


def _step(v: Value) -> int | None:
    d = v.defining_op
    if d is not None and d.name == "arith.constant" and isinstance(d.attributes.get("value"),
                                                                   int):
        return int(d.attributes["value"])
    return None


def _length(before: Operation, lb: Value, ub: Value, step: int, c1: Value,
            name: str | None = None) -> Value:
    """``max((ub - lb + step - 1) / step, 1)`` before ``before`` (``step`` > 0); the new
    values are named ``name`` (Triton's new ops carry the outer loop's name location)."""
    t = lb.type
    n = _op(before, "arith.subi", [ub, lb], t)
    made = [n]
    if step != 1:
        n = _op(before, "arith.addi", [n, _const(before, step - 1, t)], t)
        made.append(n)
        n = _op(before, "arith.divsi", [n, _const(before, step, t)], t)
        made.append(n)
    made.append(_op(before, "arith.maxsi", [n, c1], t))
    for v in made:
        v.name = name
    return made[-1]


def _minus(before: Operation, a: Value, b: Value) -> Value:
    """``a - b``; folded when both are constants, the constant then placed after the
    function's leading constants, where MLIR's canonicalizer puts it."""
    x, y = _step(a), _step(b)
    if x is None or y is None:
        return _op(before, "arith.subi", [a, b], a.type)
    op: Operation | None = before
    while op is not None and op.parent_op() is not None and \
            op.parent_op().name != "tt.func":  # type: ignore[union-attr]
        op = op.parent_op()
    blk = block_of(op) if op is not None else block_of(before)
    k = 0
    while k < len(blk.ops) and blk.ops[k].name == "arith.constant":
        k += 1
    return _const(blk.ops[k], x - y, a.type)


def _later_uses(v: Value, body: Block, inner: Operation) -> bool:
    """Whether ``v`` (a prologue result) is read after the prologue other than as one of
    ``inner``'s bounds or inits (those are rebuilt by the rewrite)."""
    idx = body.ops.index(inner)
    for u, _ in v.uses:
        top = _top(u, body)
        if top is inner and u is not inner:
            return True
        if top is not None and top is not inner and body.ops.index(top) > idx:
            return True
    return False


def fusable(outer: Operation, inner: Operation) -> list | None:
    """The sliced bound ops when the nest can be fused here: an assumed positive inner trip
    count, a positive constant inner step, sliceable bounds, induction variables of one type
    and carried values with placeholders; else None."""
    st = _step(inner.operands[2])
    if st is None or st <= 0 or not positive_trip_count(inner):
        return None
    if outer.operands[0].type != inner.operands[0].type:
        return None
    sliced = slice_bounds(outer, inner.operands[:3])
    if sliced is None:
        return None
    body = outer.regions[0].block
    pro = body.ops[:body.ops.index(inner)]
    types = [r.type for op in pro for r in op.results if _later_uses(r, body, inner)]
    types += [r.type for r in inner.results]
    elems = [t.element if isinstance(t, TensorType) else t for t in types]
    if not all(isinstance(e, (IntType, FloatType, PointerType)) for e in elems):
        return None
    return sliced


def fuse_dependent(outer: Operation, inner: Operation, sliced: list) -> Operation:
    """Flatten ``outer`` / ``inner`` (module docstring); ``sliced`` from :func:`fusable`.
    Returns the fused loop."""
    return _Fuser(outer, inner, sliced).run()


class _Fuser:
    """The state of one rewrite: the nest's parts, the fused loop's carried values and
    the values that replace the nest's."""

    def __init__(self, outer: Operation, inner: Operation, sliced: list) -> None:
        self.outer, self.inner, self.sliced = outer, inner, sliced
        body = outer.regions[0].block
        idx = body.ops.index(inner)
        self.prologue, self.epilogue = body.ops[:idx], body.ops[idx + 1:-1]
        self.oy = body.ops[-1]
        self.iv, self.o_iter = body.args[0], body.args[1:]
        self.ity = outer.operands[0].type
        self.step_j = _step(inner.operands[2]) or 1
        self.name = next((r.name for r in outer.results if r.name), None)
        self.c0, self.c1 = _const(outer, 0, self.ity), _const(outer, 1, self.ity)
        self.pro_outs = [r for op in self.prologue for r in op.results
                         if _later_uses(r, body, inner)]
        self._plan_inner_args()

    def _plan_inner_args(self) -> None:
        """Sort the inner iter args: ``merged`` (k -> outer iter arg p: the outer loop
        carries it into and out of the inner loop and nothing else reads it), ``hoisted``
        (init defined before the nest: carried once, reset by a select), ``passed`` (init
        computed in the outer body: set in the ``T == 0`` branch)."""
        inits = list(self.inner.operands[3:])
        oy, o_iter = self.oy, self.o_iter
        self.merged: dict = {}
        for k, v in enumerate(inits):
            p = next((p for p, a in enumerate(o_iter) if a is v), None)
            if p is not None and oy.operands[p] is self.inner.results[k] and len(v.uses) == 1:
                self.merged[k] = p
        self.own = [k for k in range(len(inits)) if k not in self.merged]
        self.hoisted = [k for k in self.own if defined_outside(inits[k], self.outer)]
        self.passed = [k for k in self.own if k not in self.hoisted]

    def run(self) -> Operation:
        outer, inner = self.outer, self.inner
        inner.attributes[MUST_EXECUTE] = UNIT
        total = self._peeled_length()
        self._make_fused(total)
        self._prologue_if()
        yielded = self._inline_body()
        own_next, out_yield = self._epilogue(yielded)
        t_next = _op(self.anchor, "arith.addi", [self.t_arg, self.c1], self.ity)
        is_last = self.is_last or self._is_last()
        t_new = _op(self.anchor, "arith.select", [is_last, self.c0, t_next], self.ity)
        t_next.name = t_new.name = self.name
        _set_operands(self.anchor, [t_new, self.i_val, *out_yield, self.len_val, self.j_next,
                                    *[own_next[k] for k in self.own], *self.pro_res])
        n_o = len(self.o_iter)
        for r, f in zip(outer.results, self.fused.results[2:2 + n_o], strict=True):
            f.name = r.name
            r.replace_all_uses_with(f)
        self.oy.erase()
        inner.erase()
        outer.erase()
        return self.fused

    def _peeled_length(self) -> Value:
        """The loop summing ``max(len_j(i), 1)`` over the outer range (the bound ops
        cloned, the outer induction variable read as its own)."""
        outer, ity, name = self.outer, self.ity, self.name
        lb_j, ub_j = self.inner.operands[0], self.inner.operands[1]
        peel = Operation("scf.for", [*outer.operands[:3], self.c0], [ity], {}, regions=1,
                         loc=outer.loc)
        block_of(outer).insert_before(outer, peel)
        pb = peel.regions[0].add_block()
        vmap: dict = {id(self.iv): pb.add_arg(ity, name)}
        acc = pb.add_arg(ity, name)
        py = Operation("scf.yield", [], [], loc=outer.loc)
        pb.append(py)
        for op in self.sliced:
            pb.insert_before(py, clone_op(op, vmap))
        n = _length(py, vmap.get(id(lb_j), lb_j), vmap.get(id(ub_j), ub_j), self.step_j,
                    self.c1, name)
        py.add_operand(_op(py, "arith.addi", [acc, n], ity))
        py.operands[0].name = peel.results[0].name = name
        return peel.results[0]

    def _make_fused(self, total: Value) -> None:
        """The fused loop: ``(T, i, outer iter args, inner length, j, inner slots, prologue
        results)``, its block arguments and the anchor yield its body grows before."""
        outer, inner, ity = self.outer, self.inner, self.ity
        inits = list(inner.operands[3:])
        c0 = self.c0
        carried: list = [c0, _minus(outer, outer.operands[0], outer.operands[2]),
                         *outer.operands[3:], c0, c0]
        carried += [inits[k] if k in self.hoisted else placeholder(outer, inits[k].type)
                    for k in self.own]
        carried += [placeholder(outer, v.type) for v in self.pro_outs]
        attrs = {k: outer.attributes[k] for k in _FLAGS if k in outer.attributes}
        stages = max(int(x.attributes.get("tt.num_stages", 1)) for x in (outer, inner))
        if stages > 1:
            attrs["tt.num_stages"] = stages
        fused = Operation("scf.for", [c0, total, self.c1, *carried], [v.type for v in carried],
                          attrs, regions=1, loc=outer.loc)
        block_of(outer).insert_before(outer, fused)
        fb = fused.regions[0].add_block()
        fb.add_arg(ity, self.name)
        args = [fb.add_arg(v.type) for v in carried]
        n_o, n_own = len(self.o_iter), len(self.own)
        self.fused, self.fb = fused, fb
        self.t_arg, self.i_prev = args[0], args[1]
        self.i_prev.name = self.name
        self.o_args = args[2:2 + n_o]
        self.len_arg, self.j_arg = args[2 + n_o], args[3 + n_o]
        self.own_args = dict(zip(self.own, args[4 + n_o:4 + n_o + n_own], strict=True))
        self.pro_args = args[4 + n_o + n_own:]
        for a, f in zip(self.o_iter, self.o_args, strict=True):
            a.replace_all_uses_with(f)
        self.anchor = Operation("scf.yield", [], [], loc=outer.loc)
        fb.append(self.anchor)
        self.is_last: Value | None = None

    def _prologue_if(self) -> None:
        """``if T == 0``: the next i, the bound ops, the inner length, the rest of the
        prologue; it yields ``(j = lb_j, prologue results, passed inits, i, length)``."""
        ity, name, inner = self.ity, self.name, self.inner
        inits = list(inner.operands[3:])
        lb_j, ub_j = inner.operands[0], inner.operands[1]
        first = _op(self.anchor, "arith.cmpi", [self.t_arg, self.c0], i1, predicate="eq")
        first.name = name
        types = [ity, *[v.type for v in self.pro_outs],
                 *[inits[k].type for k in self.passed], ity, ity]
        pif = Operation("scf.if", [first], types, regions=2, loc=self.outer.loc)
        self.fb.insert_before(self.anchor, pif)
        then = pif.regions[0].add_block()
        ty = Operation("scf.yield", [], [], loc=self.outer.loc)
        then.append(ty)
        i_new = _op(ty, "arith.addi", [self.i_prev, self.outer.operands[2]], ity)
        i_new.name = name
        ids = {id(op) for op in self.sliced}
        for op in self.sliced:  # the bound ops first (they read i and values before the nest)
            _detach(op)
            then.insert_before(ty, op)
        new_len = _length(ty, lb_j, ub_j, self.step_j, self.c1, name)
        for op in self.prologue:
            if id(op) not in ids:
                _detach(op)
                then.insert_before(ty, op)
        _set_operands(ty, [lb_j, *self.pro_outs, *[inits[k] for k in self.passed], i_new,
                           new_len])
        pif.regions[1].add_block().append(Operation(
            "scf.yield", [self.j_arg, *self.pro_args, *[self.own_args[k] for k in self.passed],
                          self.i_prev, self.len_arg], [], loc=self.outer.loc))
        res = list(pif.results)
        self.j_val, self.i_val, self.len_val = res[0], res[-2], res[-1]
        for r in (self.j_val, self.i_val, self.len_val):
            r.name = name
        self.pro_res = res[1:1 + len(self.pro_outs)]
        self.passed_res = dict(zip(self.passed, res[1 + len(self.pro_outs):-2], strict=True))
        for v, r in zip(self.pro_outs, self.pro_res, strict=True):
            r.name = v.name
            _replace_outside(v, r, pif)
        for u, k in list(self.iv.uses):
            u.set_operand(k, i_new if _inside(u, pif) else self.i_val)
        self.pif = pif

    def _inline_body(self) -> list:
        """Move the inner body into the fused loop (``ttg.must-execute``: no ``scf.if``);
        returns the values it yields."""
        ib = self.inner.regions[0].block
        ib.args[0].replace_all_uses_with(self.j_val)
        for k, a in enumerate(ib.args[1:]):
            a.replace_all_uses_with(self.o_args[self.merged[k]] if k in self.merged else
                                    self.passed_res[k] if k in self.passed else
                                    self.own_args[k])
        iy = ib.ops[-1]
        yielded = list(iy.operands)
        iy.erase()
        for op in list(ib.ops):
            ib.ops.remove(op)
            self.fb.insert_before(self.anchor, op)
        for r, v in zip(self.inner.results, yielded, strict=True):
            r.replace_all_uses_with(v)
        self.j_next = _op(self.anchor, "arith.addi", [self.j_val, self.inner.operands[2]],
                          self.ity)
        self.j_next.name = self.name
        return yielded

    def _is_last(self) -> Value:
        last = _op(self.anchor, "arith.subi", [self.len_val, self.c1], self.ity)
        self.is_last = _op(self.anchor, "arith.cmpi", [self.t_arg, last], i1, predicate="eq")
        last.name = self.is_last.name = self.name
        return self.is_last

    def _epilogue(self, yielded: list) -> tuple[dict, list]:
        """The resets of hoisted inner inits (``select``) and ``if T == inner_len - 1``:
        the epilogue, yielding the outer yields it defines and those the nest reads back.
        Returns the inner slots' next values and the outer yields."""
        oy, inits = self.oy, list(self.inner.operands[3:])
        epi_ids = {id(op) for op in self.epilogue}
        pos = [p for p, v in enumerate(oy.operands) if p not in self.merged.values() and (
            (v.defining_op is not None and id(v.defining_op) in epi_ids) or
            _read_in_nest(self.o_args[p], self.pif, oy))]
        if self.epilogue or pos or self.hoisted:
            self._is_last()
        own_next = {k: yielded[k] for k in self.own}
        for k in self.hoisted:
            own_next[k] = _op(self.anchor, "arith.select",
                              [self.is_last, inits[k], yielded[k]], yielded[k].type)
            own_next[k].name = yielded[k].name
        out_yield = list(oy.operands)
        if not (self.epilogue or pos):
            return own_next, out_yield
        loc = self.outer.loc
        eif = Operation("scf.if", [self.is_last], [oy.operands[p].type for p in pos],
                        regions=2, loc=loc)
        self.fb.insert_before(self.anchor, eif)
        et = eif.regions[0].add_block()
        for op in self.epilogue:
            _detach(op)
            et.append(op)
        et.append(Operation("scf.yield", [oy.operands[p] for p in pos], [], loc=loc))
        eif.regions[1].add_block().append(Operation(
            "scf.yield", [self.o_args[p] for p in pos], [], loc=loc))
        for p, r in zip(pos, eif.results, strict=True):
            r.name = out_yield[p].name
            out_yield[p] = r
        return own_next, out_yield


def _detach(op: Operation) -> None:
    """Take ``op`` out of its block (to insert it elsewhere)."""
    assert op.parent is not None
    op.parent.ops.remove(op)


def _set_operands(op: Operation, values) -> None:
    """Replace ``op``'s operands (a terminator's) with ``values``."""
    op.drop_operands()
    for v in values:
        op.add_operand(v)


def _read_in_nest(arg: Value, pif: Operation, oy: Operation) -> bool:
    """Whether the fused loop's copy of an outer iter arg is read outside the ``T == 0``
    branch (by the inner body or the epilogue; the outer yield aside)."""
    return any(u is not oy and u is not pif and not _inside(u, pif) for u, _ in arg.uses)


__all__ = ["positive_trip_count", "slice_bounds", "fusable", "fuse_dependent"]
