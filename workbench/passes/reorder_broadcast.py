"""``triton-reorder-broadcast``: elementwise work moves before splats and broadcasts, so it is
done on the small tensor (or the scalar) instead of the big one. Triton 3.6 runs it in
``make_ttir`` after ``triton-combine`` (``lib/Dialect/Triton/Transforms/ReorderBroadcast.cpp``,
with the canonicalization patterns of ``tt.broadcast`` and ``tt.expand_dims``).

The rewrites, repeated to a fixed point (dead ops are then erased):

* ``elementwise(splat(a), splat(b), ...)`` -> ``splat(elementwise(a, b, ...))`` when every
  operand is a ``tt.splat`` or a splat constant (which becomes a scalar constant) and the op
  has no side effects;
* ``elementwise(broadcast(a), x, ...)`` -> ``broadcast(elementwise(a, x', ...))`` when every
  operand is a ``tt.broadcast`` from the same source shape, a ``tt.splat`` (re-splatted to
  that shape) or a splat constant (re-made in that shape), with at least one broadcast;
* ``broadcast(splat(x))`` -> ``splat(x)``; ``broadcast(broadcast(x))`` -> ``broadcast(x)``;
  a broadcast to its own type vanishes; a broadcast or ``expand_dims`` of a constant is a
  constant;
* ``expand_dims(splat(x))`` -> ``splat(x)``; ``expand_dims(broadcast(x))`` ->
  ``broadcast(expand_dims(x))``.

"Elementwise" is the ``elementwise`` trait of the op specs (:mod:`workbench.passes.traits`):
``arith``/``math`` ops, ``tt.addptr``, casts, ``tt.clampf``, pure extern calls... New ops
are placed where the rewritten op was, new constants first in their function (as MLIR's
greedy driver leaves them).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation, Value, functions
from ..ir.types import TensorType
from .canonicalize import const_value, constant_at_front
from .effects import is_pure
from .greedy import apply_patterns
from .manager import Pass
from .traits import ELEMENTWISE
from .values import block_of, defining_op, tensor_type

MAX_ITERATIONS = 32


def _splat_like(v: Value) -> bool:
    """``v`` is a ``tt.splat`` result or a tensor constant (our tensor constants are splats)."""
    d = v.defining_op
    if d is None:
        return False
    return d.name == "tt.splat" or (d.name == "arith.constant" and isinstance(v.type, TensorType))


def _insert(anchor: Operation, name: str, operands, types, attrs=None, name_hint=None):
    new = Operation(name, operands, types, attrs, loc=anchor.loc)
    block_of(anchor).insert_before(anchor, new)
    if name_hint is not None:
        new.results[0].name = name_hint
    return new


def _retire(op: Operation, news) -> None:
    """Replace ``op``'s results by ``news`` and erase it."""
    for old, new in zip(op.results, news, strict=True):
        old.replace_all_uses_with(new)
    op.erase()


def _elementwise(op: Operation) -> bool:
    return op.name in ELEMENTWISE and bool(op.operands) and bool(op.results) and \
        all(isinstance(r.type, TensorType) for r in op.results) and is_pure(op)


def move_splat_after_elementwise(op: Operation) -> bool:
    """``elementwise(splat(a), splat(b))`` -> ``splat(elementwise(a, b))``."""
    if not _elementwise(op) or not all(_splat_like(v) for v in op.operands):
        return False
    scalars = []
    for v in op.operands:
        d = defining_op(v)
        if d.name == "tt.splat":
            scalars.append(d.operands[0])
        else:
            scalars.append(constant_at_front(op, v.type.scalar, const_value(v)))
    new = _insert(op, op.name, scalars, [r.type.scalar for r in op.results],
                  dict(op.attributes))
    splats = [_insert(op, "tt.splat", [s], [r.type], name_hint=r.name).result
              for s, r in zip(new.results, op.results, strict=True)]
    _retire(op, splats)
    return True


def _broadcast_source_shape(op: Operation):
    """The source shape shared by ``op``'s broadcast operands when every other operand is
    splat-like; None when the rewrite does not apply."""
    shape = None
    for v in op.operands:
        d = v.defining_op
        if d is not None and d.name == "tt.broadcast":
            s = tuple(tensor_type(d.operands[0]).shape)
            if shape is not None and s != shape:
                return None
            shape = s
        elif not _splat_like(v):
            return None
    return shape


def move_broadcast_after_elementwise(op: Operation) -> bool:
    """``elementwise(broadcast(a), splat(b))`` -> ``broadcast(elementwise(a, splat'(b)))``."""
    if not _elementwise(op):
        return False
    shape = _broadcast_source_shape(op)
    if shape is None:
        return False
    defs = [defining_op(v) for v in op.operands]
    src_t = next(tensor_type(d.operands[0]) for d in defs if d.name == "tt.broadcast")
    operands = []
    for v, d in zip(op.operands, defs, strict=True):
        t = TensorType(shape, v.type.scalar, src_t.encoding)
        if d.name == "tt.broadcast":
            operands.append(d.operands[0])
        elif d.name == "tt.splat":
            operands.append(_insert(op, "tt.splat", [d.operands[0]], [t]).result)
        else:
            operands.append(constant_at_front(op, t, const_value(v)))
    new = _insert(op, op.name, operands,
                  [TensorType(shape, r.type.scalar, src_t.encoding) for r in op.results],
                  dict(op.attributes))
    bcs = [_insert(op, "tt.broadcast", [s], [r.type], name_hint=r.name).result
           for s, r in zip(new.results, op.results, strict=True)]
    _retire(op, bcs)
    return True


def simplify_broadcast(op: Operation) -> bool:
    """Fold and canonicalize one ``tt.broadcast`` (see the module docstring)."""
    if op.name != "tt.broadcast":
        return False
    src, t = op.operands[0], op.result.type
    d = src.defining_op
    if src.type == t:
        _retire(op, [src])
    elif const_value(src) is not None:
        _retire(op, [constant_at_front(op, t, const_value(src))])
    elif d is not None and d.name == "tt.splat":
        _retire(op, [_insert(op, "tt.splat", [d.operands[0]], [t], name_hint=op.result.name)
                     .result])
    elif d is not None and d.name == "tt.broadcast":
        _retire(op, [_insert(op, "tt.broadcast", [d.operands[0]], [t],
                             name_hint=op.result.name).result])
    else:
        return False
    return True


def simplify_expand_dims(op: Operation) -> bool:
    """Fold and canonicalize one ``tt.expand_dims`` (see the module docstring)."""
    if op.name != "tt.expand_dims":
        return False
    src, t = op.operands[0], op.result.type
    d = src.defining_op
    axis = op.attributes["axis"]
    if const_value(src) is not None:
        _retire(op, [constant_at_front(op, t, const_value(src))])
    elif d is not None and d.name == "tt.splat":
        _retire(op, [_insert(op, "tt.splat", [d.operands[0]], [t], name_hint=op.result.name)
                     .result])
    elif d is not None and d.name == "tt.broadcast":
        inner = tensor_type(d.operands[0])
        shape = list(inner.shape)
        shape.insert(axis, 1)
        ex = _insert(op, "tt.expand_dims", [d.operands[0]],
                     [TensorType(tuple(shape), inner.scalar, inner.encoding)], {"axis": axis})
        bc = Operation("tt.broadcast", [ex.result], [t], loc=d.loc)
        block_of(op).insert_before(op, bc)
        bc.result.name = op.result.name
        _retire(op, [bc.result])
    else:
        return False
    return True


#: the rewrites in the order they are tried on each op
PATTERNS = (simplify_broadcast, simplify_expand_dims, move_broadcast_after_elementwise,
            move_splat_after_elementwise)


def reorder_function(func: Operation) -> bool:
    """Apply :data:`PATTERNS` to ``func`` to a fixed point; True when anything changed."""
    return apply_patterns(func, PATTERNS, MAX_ITERATIONS)


@dataclass
class ReorderBroadcast(Pass):
    """Triton's ``triton-reorder-broadcast`` (see the module docstring). No options."""

    name = "triton-reorder-broadcast"

    def run(self, module: Operation, ctx=None) -> None:
        for func in functions(module):
            reorder_function(func)
