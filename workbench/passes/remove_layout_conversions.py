"""``tritongpu-remove-layout-conversions``: make redundant ``ttg.convert_layout`` ops disappear.

After ``tritongpu-coalesce`` every global memory op sits between conversions: operands into its
coalesced layout, results back to the old one. This pass removes what it can, in Triton's two
steps (``RemoveLayoutConversions.cpp``):

1. **Forward propagation** (``LayoutPropagation``): anchors are the results of loads that are
   expensive (a tensor of pointers with at least ``num_warps * 32`` elements,
   ``isExpensiveLoadOrStore``) and of atomics. Their layout flows to users: through
   ``ttg.convert_layout`` (the conversion becomes trivial), elementwise ops, ``tt.addptr``,
   ``tt.broadcast``, ``tt.scan`` (blocked layouts only: ``inferDstEncoding`` stops any other
   layout there, so a scan of an ``#mma`` dot result gets a conversion), ``tt.expand_dims``
   of a matching slice (result = the slice's parent), the shape ops trans/join/split/reshape
   (result inferred by :mod:`.shape_layouts`) and ``tt.reduce`` (result =
   ``#ttg.slice<{dim = axis, parent = layout}>``). A value reached by two layouts keeps the
   first (``resolveConflicts``). Values are retyped in place; wherever an operand no longer
   has the layout its user needs, a conversion is inserted, so
   the program stays valid whatever was propagated.
2. **Backward rematerialisation** (``backwardRematerialization``, :mod:`.remat`): each
   remaining conversion, in program order, is replaced by computing its operand again in the
   target layout when the operand's producers can be (the backward slice: layouts inferred
   back through elementwise ops, loads that are not expensive, broadcasts, ``expand_dims``
   (the slice of the target), reductions and the shape ops, stopping at ops that produce any
   layout: ``make_range``, ``splat``, constants, conversions) and Triton's cost model says it is
   cheaper than the conversion. A 1-D operand broadcast into a 2-D tile (a bias, a row of
   scales or indices) is so loaded directly in ``#ttg.slice<{dim, parent = consumer}>``.
   A conversion that stays is reused by later slices; rounds repeat until nothing changes.
   A loop-carried value converted inside an ``scf.for`` whose next value is cheap to compute
   (a pointer advanced by a constant) is carried in the target layout instead. Layouts also
   flow forward through ``scf.for`` init/yield operands into the iter args and results.

Conversions to the layout a value already has, and conversions of conversions, are folded;
unused ops whose only effect is reading memory (a load left behind by a rematerialisation)
are erased, as MLIR's greedy rewriter erases trivially dead ops. Every step preserves the
program's values: a conversion only moves data between threads, and a clone computes the same
elements in another layout.

Source: Triton 3.6 ``lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp``
(``LayoutPropagation::initAnchorLayout/propagateLayout/resolveConflicts/rewrite``,
``LayoutRematerialization::backwardRematerialization``: see :mod:`.remat`), ``Utility.cpp``
(``isExpensiveLoadOrStore``, ``inferDstEncoding``/``inferSrcEncoding``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from ..ir.core import Operation, Value, functions
from ..ir.types import TensorType
from ..layouts import BlockedLayout, DotOperandLayout, SliceLayout
from ..layouts.encodings import DistributedEncoding
from .effects import is_removable
from .hoist_convert import hoist_converts
from .insertion import insert_for_use
from .manager import Pass
from .remat import (
    backward_slice,
    can_rematerialise,
    is_expensive_memory_op,
    properly_dominates,
    remat_is_cheaper,
    rewrite_slice,
)
from .shape_layouts import SHAPE_OPS, infer_operand, infer_result
from .traits import ELEMENTWISE
from .values import block_of, defining_op, shaped_type, tensor_type

#: Ops whose tensor operands all share the result's layout: the elementwise ops of the specs,
#: and the producers and broadcasts that keep their operand's layout.
_SAME_LAYOUT = ELEMENTWISE | {"tt.splat", "tt.broadcast", "tt.make_range"}
#: Cheap to compute again in another layout (backward rematerialisation).
_CHEAP = frozenset({"tt.make_range", "arith.constant", "tt.splat", "tt.addptr", "tt.broadcast",
                    "tt.expand_dims", "tt.int_to_ptr", "tt.ptr_to_int", "tt.bitcast"})
ANY = object()  # an operand that accepts any layout


def _tensor(v: Value) -> bool:
    t = v.type
    return isinstance(t, TensorType) and bool(t.shape) and t.encoding is not None


def _same_layout_op(op: Operation) -> bool:
    """Elementwise in the layout sense: one tensor result, tensor operands in its layout."""
    if len(op.results) != 1 or not _tensor(op.result):
        return False
    return op.name in _SAME_LAYOUT


def infer_dst(op: Operation, enc):
    """The result layout of ``op`` when a tensor operand arrives in ``enc`` (None: the op does
    not propagate layouts); Triton's ``inferDstEncoding``."""
    name = op.name
    if name == "tt.scan":  # the scan lowering takes blocked layouts only (Triton: same rule)
        return enc if isinstance(enc, BlockedLayout) else None
    if name == "ttg.convert_layout":
        return enc
    if name == "tt.expand_dims":
        ok = isinstance(enc, SliceLayout) and enc.dim == op.attributes["axis"]
        return enc.parent if ok else None
    if name == "tt.reduce":
        if not op.results or not _tensor(op.results[0]) or getattr(enc, "rank", 0) < 2:
            return None
        return SliceLayout(op.attributes["axis"], enc)
    if name in SHAPE_OPS:
        return infer_result(op, enc)
    if _same_layout_op(op):
        return enc
    return None


def loop_slot(user: Operation, i: int):
    """The values whose layout operand ``i`` of ``user`` decides, or None: (iter arg,
    result) of the ``scf.for`` loop-carried slot it feeds (an init of the ``scf.for`` or an
    operand of its body's ``scf.yield``); (result, result) of the ``scf.if`` whose branch
    yields it (Triton's ``propagateToUsers`` sets an ``scf.if`` result from either
    branch's yield; the other branch's operand is then converted)."""
    if user.name == "scf.for" and i >= 3:
        return (user.regions[0].block.args[i - 2], user.results[i - 3])
    if user.name == "scf.yield":
        parent = user.parent_op()
        if parent is not None and parent.name == "scf.for":
            return (parent.regions[0].block.args[i + 1], parent.results[i])
        if parent is not None and parent.name == "scf.if" and i < len(parent.results):
            return (parent.results[i], parent.results[i])
    return None


def required(op: Operation, i: int, old_enc):
    """The layout operand ``i`` of ``op`` needs given ``op``'s current result layouts:
    ``ANY`` for conversions (and the first operand of a reduce to a scalar), else derived from
    the result, else ``old_enc`` (the operand's layout before the rewrite: ops this pass does not
    retype keep their operands' layouts)."""
    name = op.name
    if name == "ttg.convert_layout":
        return ANY
    slot = loop_slot(op, i)
    if slot is not None:
        return shaped_type(slot[0]).encoding if _tensor(slot[0]) else old_enc
    if name == "tt.expand_dims":
        parent = cast(DistributedEncoding, shaped_type(op.result).encoding)
        return SliceLayout(op.attributes["axis"], parent)
    if name in ("tt.reduce", "tt.scan"):
        r0 = op.results[0] if op.results else None
        if r0 is not None and _tensor(r0):
            enc = shaped_type(r0).encoding
            return cast(SliceLayout, enc).parent if name == "tt.reduce" else enc
        return ANY if i == 0 else shaped_type(op.operands[0]).encoding
    if name in SHAPE_OPS and _tensor(op.results[0]):
        res = shaped_type(op.results[0]).encoding
        cur = shaped_type(op.operands[i]).encoding
        if infer_result(op, cur) == res:
            return cur  # the operand's own layout already gives the result's
        return infer_operand(op, res) or old_enc
    if _same_layout_op(op):
        return shaped_type(op.result).encoding
    return old_enc


class _Rewriter:
    def __init__(self, func: Operation, num_warps: int, tpw: int):
        self.func, self.num_warps, self.tpw = func, num_warps, tpw
        self.remat: dict[tuple, Value] = {}

    # 1. forward propagation -------------------------------------------------------------
    #: Whether the anchors' own layouts are fixed (else propagation may retype them).
    pin_anchors = False

    def anchors(self) -> list:
        """``(value, layout)`` pairs propagation starts from: the results of expensive loads
        and of atomics (``LayoutPropagation::initAnchorLayout``)."""
        work = []
        for op in self.func.walk():
            anchor = (op.name == "tt.load" and is_expensive_memory_op(op, self.num_warps,
                                                                       self.tpw)) \
                or op.name in ("tt.atomic_rmw", "tt.atomic_cas")
            if anchor:
                work += [(r, shaped_type(r).encoding) for r in op.results if _tensor(r)]
        return work

    def stops_at(self, user: Operation) -> bool:
        """True when layouts do not flow through ``user`` (it keeps its own)."""
        return False

    def propagate(self) -> None:
        """Flow the anchors' layouts forward through their users, then retype and insert
        the conversions that users still need."""
        chosen: dict[int, tuple] = {}
        work = self.anchors()
        if self.pin_anchors:
            chosen.update((id(v), (v, enc)) for v, enc in work)
        while work:
            v, enc = work.pop(0)
            for user, i in list(v.uses):
                slot = loop_slot(user, i)
                if slot is not None:
                    if all(id(r) not in chosen for r in slot):
                        for r in slot:
                            chosen[id(r)] = (r, enc)
                            work.append((r, enc))
                    continue
                if self.stops_at(user):
                    continue
                new = infer_dst(user, enc)
                if new is None:
                    continue
                for r in user.results:
                    if _tensor(r) and id(r) not in chosen and r.type.rank == new.rank:
                        chosen[id(r)] = (r, new)
                        work.append((r, new))
        old = {id(v): shaped_type(v).encoding for op in self.func.walk() for v in op.operands
               if _tensor(v)}
        for r, enc in chosen.values():
            r.type = tensor_type(r).with_encoding(enc)
        self.fix_operands(old)

    def fix_operands(self, old: dict) -> None:
        """Insert a conversion wherever an operand's layout differs from what its user needs."""
        for op in list(self.func.walk()):
            for i, v in enumerate(list(op.operands)):
                if not _tensor(v):
                    continue
                want = required(op, i, old.get(id(v), shaped_type(v).encoding))
                if want is ANY or want is None or shaped_type(v).encoding == want:
                    continue
                op.set_operand(i, self.convert(v, want, op))

    def convert(self, v: Value, enc, user: Operation) -> Value:
        """``ttg.convert_layout`` of ``v`` to ``enc`` before ``user``, or right after ``v``'s
        definition when ``v`` comes from an enclosing block (converted once, not per loop
        iteration)."""
        cvt = Operation("ttg.convert_layout", [v], [tensor_type(v).with_encoding(enc)],
                        loc=user.loc)
        insert_for_use(v, user, cvt)
        return cvt.result

    # 2. folding --------------------------------------------------------------------------
    def fold(self) -> None:
        """Trivial conversions and conversions of conversions."""
        for op in list(self.func.walk()):
            if op.name != "ttg.convert_layout" or op.parent is None:
                continue
            src = op.operands[0]
            d = src.defining_op
            if d is not None and d.name == "ttg.convert_layout":
                op.set_operand(0, d.operands[0])
                src = d.operands[0]
            if src.type == op.result.type:
                op.result.replace_all_uses_with(src)

    # 3. backward rematerialisation ------------------------------------------------------
    def rematerialise(self, max_rounds: int = 8) -> None:
        """Rounds of :meth:`remat_round`, each followed by folding and dead-code elimination,
        until a round changes nothing (Triton's ``do { backwardRematerialization } while``)."""
        for _ in range(max_rounds):
            changed = self.remat_round()
            self.fold()
            self.dce()
            if not changed:
                return

    def remat_round(self) -> bool:
        """Every conversion in program order: computed again in the target layout when
        :mod:`.remat` finds a slice that may be and is cheaper than the conversion; a loop
        iter arg is carried in the target layout (:meth:`retype_loop_slot`). A conversion
        that stays is reused by later slices (``addRematValue``)."""
        remat: dict = {}
        changed = False
        for op in list(self.func.walk()):
            if op.name != "ttg.convert_layout" or op.parent is None or not op.result.uses:
                continue
            src, enc = op.operands[0], shaped_type(op.result).encoding
            if isinstance(enc, DotOperandLayout) or not _tensor(src):
                continue
            done = remat.get((id(src), enc))
            if done is not None and properly_dominates(done, op):
                op.result.replace_all_uses_with(done)
                changed = True
                continue
            sl = backward_slice(src, op, enc, remat)
            if sl is not None and can_rematerialise(sl, self.num_warps, self.tpw) and \
                    remat_is_cheaper(sl, op):
                rewrite_slice(sl, op, remat)
                changed = True
            elif src.defining_op is None and self.retype_loop_slot(src, enc):
                changed = True
            else:
                remat[(id(src), enc)] = op.result
        return changed

    def retype_loop_slot(self, arg: Value, enc) -> bool:
        """A loop-carried value converted to ``enc`` inside the loop (a pointer advanced each
        iteration, as in a K loop): carry it in ``enc`` instead, when every use of it in the
        body is a conversion to ``enc`` or part of the cheap computation of its next value
        (Triton rematerialises through ``scf.for`` iter args the same way)."""
        loop = arg.owner.parent.parent if not isinstance(arg.owner, Operation) and \
            arg.owner.parent is not None else None
        if loop is None or loop.name != "scf.for" or arg.index == 0:
            return False
        j = arg.index - 1
        nxt = loop.regions[0].block.terminator.operands[j]
        seen: set = set()
        if not self.can_remat(nxt, enc, seen, assume=(id(arg), enc)):
            return False
        cheap_users = {k[0] for k in seen}
        for user, _i in arg.uses:
            is_cvt = user.name == "ttg.convert_layout" and shaped_type(user.result).encoding == enc
            if not is_cvt and not any(id(r) in cheap_users for r in user.results):
                return False
        old = {id(v): shaped_type(v).encoding for op in self.func.walk() for v in op.operands
               if _tensor(v)}
        for v in (arg, loop.results[j]):
            v.type = tensor_type(v).with_encoding(enc)
        self.fix_operands(old)
        return True

    def can_remat(self, v: Value, enc, seen: set, assume=None) -> bool:
        key = (id(v), enc)
        if (id(v), enc) == assume:
            return True
        if not _tensor(v) or shaped_type(v).encoding == enc or key in self.remat or key in seen:
            return True
        seen.add(key)
        d = v.defining_op
        if d is None:
            return False
        if d.name == "ttg.convert_layout":
            return shaped_type(d.operands[0]).encoding == enc
        cheap = d.name in _CHEAP or (d.name.startswith("arith.") and _same_layout_op(d))
        if not cheap or len(d.results) != 1 or d.regions:
            return False
        return all(self.can_remat(w, self._operand_layout(d, j, enc), seen, assume)
                   for j, w in enumerate(d.operands) if _tensor(w))

    @staticmethod
    def _operand_layout(d: Operation, j: int, enc):
        return SliceLayout(d.attributes["axis"], enc) if d.name == "tt.expand_dims" else enc

    def materialise(self, v: Value, enc) -> Value:
        """``v`` computed in layout ``enc`` (after :meth:`can_remat` said yes)."""
        if not _tensor(v) or shaped_type(v).encoding == enc:
            return v
        key = (id(v), enc)
        if key in self.remat:
            return self.remat[key]
        d = defining_op(v)
        if d.name == "ttg.convert_layout":
            return d.operands[0]
        operands = [self.materialise(w, self._operand_layout(d, j, enc)) if _tensor(w) else w
                    for j, w in enumerate(d.operands)]
        clone = Operation(d.name, operands, [tensor_type(v).with_encoding(enc)],
                          dict(d.attributes), loc=d.loc)
        clone.result.name = v.name
        block_of(d).insert(block_of(d).ops.index(d) + 1, clone)
        self.remat[key] = clone.result
        return clone.result

    # 4. clean-up -------------------------------------------------------------------------
    def dce(self) -> None:
        """Erase ops whose results are unused and that have no effect but reading memory
        (the greedy rewriter's trivially-dead ops: a load left behind by a rematerialisation
        goes too)."""
        changed = True
        while changed:
            changed = False
            for op in reversed(list(self.func.walk())):
                if op is self.func or op.parent is None or op.regions:
                    continue
                if op.results and all(not r.uses for r in op.results) and is_removable(op):
                    op.erase()
                    changed = True


def remove_layout_conversions(module: Operation) -> Operation:
    """Run the pass on a ttgir ``module`` in place and return it (see the module docstring).
    ``"ttg.num-warps"`` and ``"ttg.threads-per-warp"`` come from the module attributes."""
    num_warps = int(module.attributes.get("ttg.num-warps", 4))
    tpw = int(module.attributes.get("ttg.threads-per-warp", 32))
    for func in functions(module):
        rw = _Rewriter(func, num_warps, tpw)
        rw.propagate()
        rw.fold()
        rw.dce()
        rw.rematerialise()
        if hoist_converts(func, num_warps, tpw):
            rw.fold()
            rw.dce()
    return module


@dataclass
class RemoveLayoutConversions(Pass):
    """The ``tritongpu-remove-layout-conversions`` pass (no options)."""

    name = "tritongpu-remove-layout-conversions"

    def run(self, module: Operation, ctx=None) -> None:
        remove_layout_conversions(module)
