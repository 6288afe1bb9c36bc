"""``triton-combine``: the peephole rewrites Triton 3.6 runs on ttir right after canonicalize
(``make_ttir`` of ``third_party/nvidia/backend/compiler.py``; the patterns are those of
``lib/Dialect/Triton/Transforms/Combine.cpp`` and ``Combine.td``).

Each rewrite, with the conditions under which it applies:

* **dot + add**: ``addf(dot(a, b, 0), d)`` or ``addf(d, dot(a, b, 0))`` -> ``dot(a, b, d)``
  (same for ``addi``) when the dot's accumulator is a zero constant, the dot has no other
  use and, for ``addf``, ``maxNumImpreciseAcc`` is 0. The dot moves to where the add was.
  The right operand is tried first; when it is a dot that does not qualify, the left one is
  not tried (as Triton). So ``acc += tl.dot(a, b)`` accumulates inside the dot, which the
  Hopper pipeline needs to make the wgmma asynchronous.
* **select of a masked load**: ``select(c, load(p, splat(c)), other)`` ->
  ``load(p, splat(c), other)`` (a new load at the select). We also require that no op
  writing memory lies between the load and the select (Triton does not check).
* **addptr of addptr**: ``addptr(addptr(p, i), j)`` -> ``addptr(p, i + j)`` when ``i`` and
  ``j`` have the same type and either their integers are 64-bit or both are constants (a
  scalar, a splat constant or a splat of one) whose signed sum does not overflow; the
  ``tt.divisibility``/``tt.contiguity``/``tt.constancy`` attributes of the outer addptr are
  kept. A sum of two constants is folded (MLIR's driver folds the new ``arith.addi``).
* **broadcast-multiply-reduce**: ``sum(broadcast(expand_dims(x, 2)) * broadcast(expand_dims(y,
  0)))`` of an ``addf`` combiner on floats of at most 32 bits -> ``dot(x, y, 0)`` with
  ``inputPrecision = tf32`` when the broadcast shape ``[M, K, N]`` has ``N >= 16`` and
  ``M >= 16`` (Triton reads both from the left operand's broadcast, which has the same shape
  as the right one). We also require one source, the combiner to add its two arguments, a
  reduction along axis 1 and the broadcasts to expand nothing but the new axis, so the dot
  has the reduction's type (Triton checks none of these; without them the rewrite would
  build an ill-typed dot), and fp32 operands: Triton builds its zero accumulator as an fp32
  splat whatever the element type, so on fp16/bf16 its pass fails; we keep the reduction.
* **reshape feeding reductions**: a ``tt.reshape`` to rank 1 whose users are all
  ``tt.reduce``/``tt.histogram`` gets ``allow_reorder`` (a 1-D reduction does not care about
  element order).
* **rank-reducing descriptor loads**: ``reshape(descriptor_load)`` that only drops leading
  size-1 dims, with the load used once -> the load gives the reshaped type directly.

Rewrites repeat to a fixed point; dead ops are then erased (as MLIR's greedy driver does).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation, Value, functions
from ..ir.types import FloatType, IntType, TensorType, f32
from .canonicalize import const_value, constant_at_front
from .effects import SIDE_EFFECTS
from .fold import int_const, signed
from .greedy import apply_patterns
from .manager import Pass
from .values import block_of, tensor_type

MAX_ITERATIONS = 16
#: attributes of an addptr the combined addptr keeps (Triton's CopyDiscardableAttrs)
_HINTS = ("tt.divisibility", "tt.contiguity", "tt.constancy")


def _def(v: Value, name: str) -> Operation | None:
    """The op defining ``v`` when it is a ``name`` op, else None."""
    d = v.defining_op
    return d if d is not None and d.name == name else None


def _is_zero(v: Value) -> bool:
    """``v`` is an integer or float zero constant (scalar or splat; -0.0 counts)."""
    c = const_value(v)
    return c is not None and c == 0


def _replace(op: Operation, new: Operation) -> None:
    """Insert ``new`` before ``op``, give it ``op``'s result name, replace ``op`` by it."""
    block_of(op).insert_before(op, new)
    for old, r in zip(op.results, new.results, strict=True):
        r.name = r.name or old.name
        old.replace_all_uses_with(r)
    op.erase()


def combine_dot_add(op: Operation) -> bool:
    """``add(dot(a, b, 0), d)`` -> ``dot(a, b, d)``; True when rewritten."""
    if op.name not in ("arith.addf", "arith.addi") or len(op.operands) != 2:
        return False
    lhs, rhs = op.operands
    dot, other = _def(rhs, "tt.dot"), lhs
    if dot is None:
        dot, other = _def(lhs, "tt.dot"), rhs
    if dot is None or len(dot.result.uses) != 1 or not _is_zero(dot.operands[2]):
        return False
    if op.name == "arith.addf" and dot.attributes.get("maxNumImpreciseAcc") not in (None, 0):
        return False
    if other.type != dot.result.type:
        return False
    block_of(dot).ops.remove(dot)
    block_of(op).insert_before(op, dot)
    dot.set_operand(2, other)
    dot.result.name = dot.result.name or op.result.name  # the dot keeps its location
    op.result.replace_all_uses_with(dot.result)
    op.erase()
    return True


def _writes_between(first: Operation, last: Operation) -> bool:
    """Whether an op writing memory lies between ``first`` and ``last`` (same block), or
    ``first`` and ``last`` are in different blocks (then we do not know)."""
    block = first.parent
    if block is None or block is not last.parent:
        return True
    i, j = block.ops.index(first), block.ops.index(last)
    return any(inner.name in SIDE_EFFECTS for op in block.ops[i + 1:j] for inner in op.walk())


def combine_select_masked_load(op: Operation) -> bool:
    """``select(c, load(p, splat(c)), other)`` -> ``load(p, splat(c), other)``."""
    if op.name != "arith.select":
        return False
    cond, true_value, false_value = op.operands
    load = _def(true_value, "tt.load")
    if load is None or len(load.operands) < 2:
        return False
    splat = _def(load.operands[1], "tt.splat")
    if splat is None or splat.operands[0] is not cond or _writes_between(load, op):
        return False
    new = Operation("tt.load", [load.operands[0], load.operands[1], false_value],
                    [op.result.type], dict(load.attributes), loc=op.loc)
    _replace(op, new)
    return True


def _constant_int(v: Value):
    """The integer ``v`` holds when it is a constant, a splat constant or a splat of one."""
    d = v.defining_op
    if d is not None and d.name == "tt.splat":
        v = d.operands[0]
    c = const_value(v)
    if c is None or isinstance(c, float):
        return None
    return int(c)


def _addptr_combinable(first: Value, second: Value) -> bool:
    """Triton's ``isAddPtrOffsetCombinable``: same type, and 64-bit offsets or two constants
    whose signed sum fits their width."""
    if first.type != second.type:
        return False
    scalar = first.type.scalar
    if not isinstance(scalar, IntType):
        return False
    if scalar.width == 64:
        return True
    a, b = _constant_int(first), _constant_int(second)
    if a is None or b is None:
        return False
    s = signed(a, scalar.width) + signed(b, scalar.width)
    return -(1 << (scalar.width - 1)) <= s < (1 << (scalar.width - 1))


def combine_addptr(op: Operation) -> bool:
    """``addptr(addptr(p, i), j)`` -> ``addptr(p, i + j)``."""
    if op.name != "tt.addptr":
        return False
    inner = _def(op.operands[0], "tt.addptr")
    if inner is None:
        return False
    ptr, first = inner.operands
    second = op.operands[1]
    if not _addptr_combinable(first, second):
        return False
    a, b = _constant_int(first), _constant_int(second)
    if a is not None and b is not None:  # the driver folds the new addi
        width = first.type.scalar.width if isinstance(first.type.scalar, IntType) else 64
        total = constant_at_front(op, first.type, int_const(a + b, width))
    else:
        add = Operation("arith.addi", [first, second], [first.type], loc=op.loc)
        block_of(op).insert_before(op, add)
        total = add.result
    attrs = {k: v for k, v in op.attributes.items() if k in _HINTS}
    _replace(op, Operation("tt.addptr", [ptr, total], [op.result.type], attrs, loc=op.loc))
    return True


def _is_sum(reduce: Operation) -> bool:
    """A one-source ``tt.reduce`` whose combiner is ``return a + b`` on floats <= 32 bits."""
    if len(reduce.operands) != 1 or len(reduce.regions[0].blocks) != 1:
        return False
    block = reduce.regions[0].block
    if len(block.ops) != 2 or block.ops[0].name != "arith.addf":
        return False
    add = block.ops[0]
    t = add.result.type
    if not isinstance(t, FloatType) or t.width > 32:
        return False
    return set(map(id, add.operands)) == set(map(id, block.args)) and \
        block.ops[1].operands == [add.result]


def _expanded(mul_operand: Value, axis: int) -> Value | None:
    """The source of ``broadcast(expand_dims(src, axis))``, else None."""
    bc = _def(mul_operand, "tt.broadcast")
    ex = _def(bc.operands[0], "tt.expand_dims") if bc is not None else None
    if ex is None or ex.attributes.get("axis") != axis:
        return None
    return ex.operands[0]


def combine_broadcast_mul_reduce(op: Operation) -> bool:
    """``sum(x[:, :, None] * y[None, :, :], axis=1)`` -> ``dot(x, y, 0)`` (tf32)."""
    if op.name != "tt.reduce" or not _is_sum(op):
        return False
    mul = _def(op.operands[0], "arith.mulf")
    if mul is None:
        return False
    x, y = _expanded(mul.operands[0], 2), _expanded(mul.operands[1], 0)
    if x is None or y is None:
        return False
    shape = tensor_type(mul.operands[0]).shape  # both broadcasts have the multiply's shape
    if len(shape) != 3 or shape[2] < 16 or shape[0] < 16 or op.attributes.get("axis") != 1:
        return False
    m, k, n = shape
    xt, yt = tensor_type(x), tensor_type(y)
    if tuple(xt.shape) != (m, k) or tuple(yt.shape) != (k, n) or xt.element != f32:
        return False
    acc_t = TensorType((m, n), xt.element, xt.encoding)
    if op.results[0].type != acc_t:
        return False
    zero = constant_at_front(op, acc_t, 0.0)
    dot = Operation("tt.dot", [x, y, zero], [acc_t],
                    {"inputPrecision": "tf32", "maxNumImpreciseAcc": 0}, loc=op.loc)
    _replace(op, dot)
    return True


def combine_reshape_reduce(op: Operation) -> bool:
    """A rank-1 ``tt.reshape`` read only by reductions and histograms may reorder."""
    if op.name != "tt.reshape" or op.attributes.get("allow_reorder"):
        return False
    if tensor_type(op.result).rank != 1:
        return False
    if any(user.name not in ("tt.reduce", "tt.histogram") for user, _ in op.result.uses):
        return False
    op.attributes["allow_reorder"] = True
    return True


def ranked_reduce_descriptor_load(op: Operation) -> bool:
    """``reshape(descriptor_load)`` dropping leading unit dims -> a rank-reduced load."""
    if op.name != "tt.reshape":
        return False
    load = _def(op.operands[0], "tt.descriptor_load")
    if load is None or len(load.result.uses) != 1:
        return False
    src, dst = tensor_type(load.result).shape, tensor_type(op.result).shape
    drop = len(src) - len(dst)
    if drop <= 0 or any(s != 1 for s in src[:drop]) or tuple(src[drop:]) != tuple(dst):
        return False
    load.results[0].type = op.result.type
    load.result.name = op.result.name or load.result.name
    op.result.replace_all_uses_with(load.result)
    op.erase()
    return True


#: the rewrites in the order they are tried on each op
PATTERNS = (combine_dot_add, combine_select_masked_load, combine_addptr,
            combine_broadcast_mul_reduce, combine_reshape_reduce, ranked_reduce_descriptor_load)


def combine_function(func: Operation) -> bool:
    """Apply :data:`PATTERNS` to ``func`` to a fixed point; True when anything changed."""
    return apply_patterns(func, PATTERNS, MAX_ITERATIONS)


@dataclass
class Combine(Pass):
    """Triton's ``triton-combine`` peephole rewrites (see the module docstring). No options."""

    name = "triton-combine"

    def run(self, module: Operation, ctx=None) -> None:
        for func in functions(module):
            combine_function(func)
