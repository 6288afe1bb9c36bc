"""Backward rematerialisation of ``tritongpu-remove-layout-conversions`` (a helper, not a pass).

For a ``ttg.convert_layout`` of ``x`` to layout ``L``, :func:`backward_slice` walks from ``x``
towards its producers, giving each value the layout it would need for ``x`` to come out in
``L`` (an elementwise op, a load, a broadcast: the same layout; ``tt.expand_dims``: the slice
of ``L`` along its axis; ``tt.reduce``: the parent of a slice; the shape ops: the layout
:mod:`.shape_layouts` infers). The walk stops at values already in their needed layout and at
ops that can produce any layout (``tt.splat``, ``tt.make_range``, ``arith.constant``, other
conversions: they are cloned); it fails at a value needed in two layouts, at ops whose operand
layout cannot be inferred (``tt.dot``, ``tt.cat``) and at loop results and iter args (the
caller handles loop-carried values itself).

:func:`can_rematerialise`: every op of the slice may be computed again: no expensive loads or
stores (:func:`is_expensive_memory_op`), no atomics, no dots.

:func:`remat_is_cheaper`: Triton's cost model. The conversion costs ``32 * bytes`` of its
operand (at least 32 elements of 32 bits); rematerialising costs nothing for the ops used only
inside the slice (they move instead of being copied), and for the others ``8 * bytes`` per
load, ``bytes`` per arith/math op (``8 * bytes`` for the slow ones: divisions, transcendental
functions, square roots), and for a reduction the lanes plus 8 times the warps along its axis;
pointer-typed values count 0 bytes. A non-associative float reduction (``addf``/``mulf`` over
more than two elements) used outside the slice is never rematerialised.

:func:`rewrite_slice` clones the slice's ops, each right before its original, with the
layouts chosen, and replaces the conversion by the clone of ``x``; the originals are left for
dead-code elimination.

Source: Triton 3.6 ``lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp``
(``LayoutRematerialization::backwardRematerialization``, ``getRematerializableSlice``,
``rewriteSlice``, ``canBeRemat``, ``isExpensiveMathOp``, ``getByteCount``), ``Utility.cpp``
(``getConvertBackwardSlice``, ``canFoldIntoConversion``, ``inferSrcEncoding``,
``isExpensiveLoadOrStore``), ``lib/Analysis/Utility.cpp`` (``ReduceOpHelper``).
"""
from __future__ import annotations

from ..ir.clone import clone_op
from ..ir.core import Operation, Value
from ..ir.types import TensorType
from ..layouts import BlockedLayout, SliceLayout, register_offsets, thread_bases, to_linear
from .shape_layouts import SHAPE_OPS, infer_operand
from .traits import ELEMENTWISE
from .values import block_of, tensor_type

#: Ops whose tensor operands take the result's layout (Triton's ``SameOperandsAndResult
#: Encoding``, ``SameLoadStoreOperandsAndResultEncoding`` and ``Elementwise`` traits).
SAME_ENCODING = ELEMENTWISE | {"tt.broadcast", "tt.load", "tt.store", "tt.atomic_rmw",
                               "tt.atomic_cas", "tt.scan", "scf.yield",
                               "ttng.warp_group_dot_wait"}
#: Ops that can produce any layout: the walk stops at them and they are cloned
#: (``canFoldIntoConversion``).
FOLDABLE = frozenset({"ttg.convert_layout", "arith.constant", "tt.make_range", "tt.splat",
                      "tt.histogram", "ttg.local_alloc", "ttg.local_load", "ttg.local_store"})
#: Math ops with low throughput or several instructions (``isExpensiveMathOp``).
SLOW_MATH = frozenset({"arith.divf", "math.erf", "math.tanh", "math.exp", "math.exp2",
                       "math.log", "math.log2", "math.sin", "math.cos", "math.sqrt",
                       "math.rsqrt", "tt.precise_divf", "tt.precise_sqrt"})


def is_tensor(v: Value) -> bool:
    """A ranked tensor with a layout."""
    t = v.type
    return isinstance(t, TensorType) and bool(t.shape) and t.encoding is not None


def is_expensive_memory_op(op: Operation, num_warps: int, threads_per_warp: int = 32) -> bool:
    """``isExpensiveLoadOrStore``: a tensor of pointers with at least one element per thread
    (one element is never expensive: every thread reads the same address)."""
    p = op.operands[0] if op.operands else None
    if p is None or not is_tensor(p):
        return False
    n = tensor_type(p).numel
    return n > 1 and n >= num_warps * threads_per_warp


def infer_src(op: Operation, enc):
    """The layout ``op``'s tensor operands need for its result to be in ``enc`` (Triton's
    ``inferSrcEncoding``); None when there is none."""
    name = op.name
    if name == "tt.scan" and not isinstance(enc, BlockedLayout):
        return None
    if name in SAME_ENCODING:
        return enc
    if name == "tt.reduce":
        ok = isinstance(enc, SliceLayout) and enc.dim == op.attributes["axis"]
        return enc.parent if ok else None
    if name == "tt.expand_dims":
        return SliceLayout(op.attributes["axis"], enc)
    if name in SHAPE_OPS:
        return infer_operand(op, enc)
    return None


def _reorders_registers(op: Operation) -> bool:
    """A conversion that only renames registers (``cvtReordersRegisters``): its two layouts
    give every thread the same elements."""
    src = op.operands[0]
    shape = tuple(tensor_type(src).shape)
    a, enc = tensor_type(src).encoding, tensor_type(op.result).encoding
    try:
        if thread_bases(a, shape) != thread_bases(enc, shape):
            return False
        return set(register_offsets(a, shape)) == set(register_offsets(enc, shape))
    except (ValueError, TypeError, KeyError):
        return False


def _ancestor_in(op: Operation, block) -> Operation | None:
    cur: Operation | None = op
    while cur is not None and cur.parent is not block:
        cur = cur.parent_op()
    return cur


def properly_dominates(v: Value, user: Operation) -> bool:
    """True when ``v`` is available at ``user`` (defined before it in an enclosing block)."""
    d = v.defining_op
    if d is None:
        return _ancestor_in(user, v.owner) is not None
    if d.parent is None:
        return False
    anc = _ancestor_in(user, d.parent)
    if anc is None or anc is d:
        return False
    ops = d.parent.ops
    return ops.index(d) < ops.index(anc)


class Slice:
    """Values to compute again (in insertion order) and the layout each needs."""

    def __init__(self) -> None:
        self.layout: dict[int, tuple[Value, object]] = {}

    def update(self, v: Value, enc) -> bool:
        """Record ``v`` in ``enc``; False when it was already needed in another layout."""
        old = self.layout.get(id(v))
        if old is not None and old[1] != enc:
            return False
        self.layout[id(v)] = (v, enc)
        return True

    def values(self) -> list:
        return [v for v, _ in self.layout.values()]

    def enc(self, v: Value):
        return self.layout[id(v)][1]


def backward_slice(root: Value, user: Operation, enc, remat: dict,
                   stop=None) -> Slice | None:
    """The values ``root`` (read by ``user``) depends on, each with the layout it needs for
    ``root`` to be in ``enc`` (``getConvertBackwardSlice``); None when there is none.
    ``remat``: ``(id(value), layout) -> value`` already computed in that layout. ``stop``:
    a predicate on ops whose result joins the slice without its operands
    (``stopPropagation``)."""
    out = Slice()
    seen: set = set()
    queue = [(root, user, enc)]
    while queue:
        v, u, e = queue.pop()
        if not is_tensor(v):
            continue
        d = v.defining_op
        if d is None and tensor_type(v).encoding == e:
            continue  # reached through a register-renaming conversion: nothing to do
        if d is None or d.name in ("scf.for", "scf.while"):
            return None  # loop-carried values: see _Rewriter.retype_loop_slot
        if not out.update(v, e):
            return None
        existing = remat.get((id(v), e))
        if existing is not None and properly_dominates(existing, u):
            if not out.update(existing, e):
                return None
            v, d = existing, existing.defining_op
            if d is None:
                continue
        if stop is not None and d.name not in FOLDABLE and stop(d):
            continue
        nxt = _operands_needed(d, v, e, out, seen)
        if nxt is None:
            return None
        queue += nxt
    return out


def _operands_needed(d: Operation, v: Value, e, out: Slice, seen: set) -> list | None:
    """The operands of ``d`` (``v``'s producer) to visit next, with their layouts; None when
    ``d`` cannot produce ``v`` in ``e``."""
    if d.name == "scf.if":
        return None
    if not all(out.update(r, e) for r in d.results if r is not v and is_tensor(r)):
        return None
    if d.name == "ttg.convert_layout" and _reorders_registers(d):
        return [_key(d, 0, e, seen)]
    if d.name in FOLDABLE:
        return []
    src = infer_src(d, e)
    if src is None or d.name == "tt.cat":
        return None
    return [_key(d, i, src, seen) for i, w in enumerate(d.operands)
            if is_tensor(w) and tensor_type(w).encoding != src and (id(d), i, src) not in seen]


def _key(d: Operation, i: int, enc, seen: set) -> tuple:
    seen.add((id(d), i, enc))
    return (d.operands[i], d, enc)


def can_rematerialise(sl: Slice, num_warps: int, tpw: int) -> bool:
    """``canBeRemat`` for every op of the slice."""
    for v in sl.values():
        d = v.defining_op
        if d is None:
            continue
        if d.name in ("tt.load", "tt.store") and is_expensive_memory_op(d, num_warps, tpw):
            return False
        if d.name in ("tt.atomic_rmw", "tt.atomic_cas", "tt.dot", "tt.dot_scaled",
                      "ttng.warp_group_dot", "scf.while", "scf.condition"):
            return False
    return True


def byte_count(v: Value, min_elems: int = 0, min_bits: int = 0) -> int:
    """``getByteCount``: elements times bit width over 8 (pointers: width 0)."""
    t = v.type
    if not isinstance(t, TensorType):
        return 0
    width = getattr(t.element, "width", 0) if not hasattr(t.element, "pointee") else 0
    return (max(t.numel, min_elems) * max(int(width or 0), min_bits)) >> 3


def _reduce_cost(op: Operation) -> int | None:
    """Lanes plus 8 times warps along the reduced axis; None for a non-associative one."""
    src = op.operands[0]
    t = tensor_type(src)
    axis = op.attributes["axis"]
    floaty = type(t.element).__name__ == "FloatType"
    if floaty and t.shape[axis] > 2 and any(
            o.name in ("arith.addf", "arith.mulf") for o in op.walk() if o is not op):
        return None
    ll = to_linear(t.encoding, tuple(t.shape))
    return _unique_along(ll, "lane", axis) + 8 * _unique_along(ll, "warp", axis)


def _unique_along(ll, in_dim: str, axis: int) -> int:
    """How many distinct positions along ``axis`` the bases of ``in_dim`` reach."""
    count = 1
    for basis in ll.bases.get(in_dim, ()):
        if basis[axis] != 0:
            count *= 2
    return count


def remat_is_cheaper(sl: Slice, cvt: Operation) -> bool:
    """Triton's cost comparison (module docstring)."""
    ops: dict[int, Operation] = {}
    for v in sl.values():
        d = v.defining_op
        if d is not None:
            ops[id(d)] = d
    memo: dict[int, bool] = {}

    def single_use(op: Operation) -> bool:
        if id(op) in memo:
            return memo[id(op)]
        memo[id(op)] = True  # a cycle (loop body) counts as single-use, as Triton's memo does
        ok = all(u is cvt or (id(u) in ops and single_use(u))
                 for r in op.results for u, _ in r.uses)
        memo[id(op)] = ok
        return ok

    cost = 0
    for op in ops.values():
        if single_use(op) or op.name == "arith.constant":
            continue
        if op.name in ("tt.load", "ttg.local_load"):
            cost += sum(8 * byte_count(r) for r in op.results)
        elif op.dialect in ("arith", "math"):
            cost += sum((8 if op.name in SLOW_MATH else 1) * byte_count(r) for r in op.results)
        elif op.name == "tt.reduce":
            c = _reduce_cost(op)
            if c is None:
                return False
            cost += c
    return cost <= 32 * byte_count(cvt.operands[0], 32, 32)


def rewrite_slice(sl: Slice, cvt: Operation, remat: dict, mapping: dict | None = None) -> None:
    """Clone the slice's ops in their chosen layouts (each before its original, operands
    first) and make ``cvt``'s users read the clone of its operand. ``mapping``: values
    already replaced (``id(old) -> new``), read by the clones."""
    mapping = {} if mapping is None else mapping
    todo: list[Operation] = []
    for v in sl.values():
        existing = remat.get((id(v), sl.enc(v)))
        if existing is not None:
            mapping[id(v)] = existing
            continue
        d = v.defining_op
        if d is not None and all(d is not o for o in todo):
            todo.append(d)
    for op in _topological(todo):
        types = [tensor_type(r).with_encoding(sl.enc(r)) if id(r) in sl.layout else r.type
                 for r in op.results]
        clone = clone_op(op, mapping, types)
        block_of(op).insert_before(op, clone)
        for r, c in zip(op.results, clone.results, strict=True):
            if id(r) in sl.layout:
                remat[(id(r), sl.enc(r))] = c
    src = cvt.operands[0]
    cvt.result.replace_all_uses_with(mapping.get(id(src), src))


def _topological(ops: list) -> list:
    """``ops`` ordered so that each comes after the ops of the list it reads."""
    ids = {id(o) for o in ops}
    done: set = set()
    out: list = []

    def visit(op: Operation) -> None:
        if id(op) in done:
            return
        done.add(id(op))
        for w in op.operands:
            d = w.defining_op
            if d is not None and id(d) in ids:
                visit(d)
        out.append(op)

    for op in ops:
        visit(op)
    return out
