"""``canonicalize``: constant folding, algebraic identities and simplification of shape ops.

What it does, repeated to a fixed point on every ``tt.func``:

* constants are hoisted to the top of their function (or of their ``tt.reduce``/``tt.scan``
  combine block, which stays self-contained) and deduplicated, as MLIR's ``OperationFolder``
  does; unlike MLIR we keep the first constant's location instead of ``loc(unknown)``;
* ``arith`` binary ops, compares and casts on scalar or splat constants fold (integer division
  truncates toward zero, ``+ - *`` wrap around; see :mod:`workbench.passes.fold`);
* identities: ``x+0``, ``x-0``, ``x*1``, ``x/1``, int ``x*0 -> 0``, ``x&0``, ``x|0``, ``x^0``,
  ``x<<0``, ``x-x -> 0`` (int), float ``x + -0.0``, ``x - 0.0``, ``x*1.0``, ``x/1.0``;
* ``select`` with a constant condition or equal branches; ``cmpi`` of a value with itself;
* ``tt.splat`` of a constant -> dense constant; ``tt.broadcast``/``tt.expand_dims``/
  ``ttg.convert_layout`` of a splat -> splat, of a constant -> constant; no-op broadcasts and
  conversions vanish; ``tt.addptr`` with a zero offset -> the pointer;
* ``scf.if`` with a constant condition is replaced by the ops of the branch it takes; a result
  one branch yields as ``ub.poison`` is the other branch's value when that is defined outside;
* ``scf.for`` iter args that carry the same value in every iteration are removed
  (:mod:`workbench.passes.loop_args`);
* ops left without uses are erased (MLIR's greedy driver does the same).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Block, Operation, Value, functions
from ..ir.dialects import BINARY_FLOAT, BINARY_INT, CASTS
from ..ir.types import FloatType, IntType, TensorType
from .cse import freeze
from .dce import erase_dead_ops
from .fold import fold_binary, fold_cast, fold_cmp, int_const, round_float
from .loop_args import fold_invariant_iter_args
from .manager import Pass
from .values import block_of

_BINARY = set(BINARY_INT) | set(BINARY_FLOAT)
_SCOPES = ("tt.func", "tt.reduce", "tt.scan")
MAX_ITERATIONS = 16


def _norm(value, t):
    """The canonical stored value of a constant of type ``t``."""
    el = t.scalar
    if isinstance(el, IntType):
        return int_const(value, el.width)
    if isinstance(el, FloatType):
        return round_float(float(value), el.name)
    return value


def const_value(v: Value):
    """The (scalar) value of ``v`` when it is an ``arith.constant`` (scalar or splat tensor),
    normalised (signed ints, bool for i1); otherwise None."""
    op = v.defining_op
    if op is None or op.name != "arith.constant":
        return None
    return _norm(op.attributes["value"], v.type)


def _scope_block(op: Operation) -> Block:
    """The entry block constants of ``op`` are hoisted to."""
    block = block_of(op)
    while True:
        owner = block.parent.parent if block.parent is not None else None
        if owner is None:
            raise ValueError(f"{op.name} is in a block outside any op")
        if owner.name in _SCOPES or owner.parent is None:
            return owner.regions[0].blocks[0]
        block = block_of(owner)


class ConstantPool:
    """Unique constants per scope block, kept at the block's start in creation order."""

    def __init__(self):
        self.scopes: dict[int, tuple] = {}

    def _scope(self, block: Block):
        s = self.scopes.get(id(block))
        if s is None:
            s = self.scopes[id(block)] = (block, {}, [0])
        return s

    def hoist(self, root: Operation) -> bool:
        """Move every constant under ``root`` to its scope's start, merging duplicates.
        Returns True when the IR changed."""
        changed = False
        for op in list(root.walk()):
            if op.name != "arith.constant" or op.parent is None:
                continue
            block, table, idx = self._scope(_scope_block(op))
            key = (op.result.type, freeze(_norm(op.attributes["value"], op.result.type)))
            if key in table:
                op.result.replace_all_uses_with(table[key])
                op.erase()
                changed = True
                continue
            table[key] = op.result
            if op.parent is not block or block.ops.index(op) != idx[0]:
                op.parent.ops.remove(op)
                block.insert(idx[0], op)
                changed = True
            idx[0] += 1
        return changed

    def get(self, near: Operation, t, value) -> Value:
        """A constant of type ``t`` and ``value`` visible at ``near`` (created if needed, with
        ``near``'s location)."""
        value = _norm(value, t)
        block, table, idx = self._scope(_scope_block(near))
        key = (t, freeze(value))
        if key not in table:
            op = Operation("arith.constant", [], [t], {"value": value}, loc=near.loc)
            block.insert(idx[0], op)
            idx[0] += 1
            table[key] = op.result
        return table[key]


def constant_at_front(near: Operation, t, value) -> Value:
    """A constant of type ``t`` and ``value`` visible at ``near``, for passes that fold as
    MLIR's greedy rewrite driver does: an equal constant among those that open ``near``'s
    scope block (the function body, or a ``tt.reduce``/``tt.scan`` combine block) is reused;
    otherwise a new one (with ``near``'s location) is inserted first in that block, where
    MLIR's ``OperationFolder`` puts the constants it materialises."""
    value = _norm(value, t)
    block = _scope_block(near)
    key = freeze(value)
    for op in block.ops:
        if op.name != "arith.constant":
            break
        if op.result.type == t and freeze(_norm(op.attributes["value"], t)) == key:
            return op.result
    new = Operation("arith.constant", [], [t], {"value": value}, loc=near.loc)
    block.insert(0, new)
    return new.result


def _replace(op: Operation, v: Value) -> bool:
    op.result.replace_all_uses_with(v)
    op.erase()
    return True


def _splat(op: Operation, scalar: Value) -> bool:
    new = Operation("tt.splat", [scalar], [op.result.type], loc=op.loc)
    new.result.name = op.result.name
    block_of(op).insert_before(op, new)
    return _replace(op, new.result)


def _identity(op: Operation, pool: ConstantPool) -> bool:
    """Algebraic identities with one constant operand (or equal operands)."""
    scalar = op.result.type.scalar
    if isinstance(scalar, IntType):
        return _int_identity(op, pool, scalar.width)
    return _float_identity(op)


def _int_identity(op: Operation, pool: ConstantPool, w: int) -> bool:
    """``x + 0``, ``x * 1``, ``x & -1``, ``x - x``, ``x & x``... on ``w``-bit integers."""
    n = op.name[6:]
    a, b = op.operands
    ca, cb = const_value(a), const_value(b)
    t = op.result.type
    ones = int_const(-1, w)
    zero = int_const(0, w)
    one = int_const(1, w)
    if n in ("addi", "ori", "xori") and (cb == zero or ca == zero):
        return _replace(op, a if cb == zero else b)
    if n in ("subi", "shli", "shrsi", "shrui") and cb == zero:
        return _replace(op, a)
    if n in ("muli", "divsi", "divui") and cb == one and w > 1:
        return _replace(op, a)
    if n == "muli" and ca == one and w > 1:
        return _replace(op, b)
    if n in ("muli", "andi") and zero in (ca, cb):
        return _replace(op, pool.get(op, t, 0))
    if n == "andi" and ones in (ca, cb):
        return _replace(op, a if cb == ones else b)
    if n in ("remsi", "remui") and cb == one and w > 1:
        return _replace(op, pool.get(op, t, 0))
    if a is b and n in ("subi", "xori"):
        return _replace(op, pool.get(op, t, 0))
    if a is b and n in ("andi", "ori", "maxsi", "minsi", "maxui", "minui"):
        return _replace(op, a)
    return False


def _float_identity(op: Operation) -> bool:
    """``x + -0.0``, ``x - 0.0``, ``x * 1.0``, ``x / 1.0`` on floats (exact for every x)."""
    n = op.name[6:]
    a, b = op.operands
    ca, cb = const_value(a), const_value(b)
    fa = ca if ca is None else float(ca)
    fb = cb if cb is None else float(cb)
    if n == "addf" and fb == 0.0 and str(fb) == "-0.0":
        return _replace(op, a)
    if n == "addf" and fa == 0.0 and str(fa) == "-0.0":
        return _replace(op, b)
    if n == "subf" and fb == 0.0 and str(fb) == "0.0":
        return _replace(op, a)
    if n in ("mulf", "divf") and fb == 1.0:
        return _replace(op, a)
    if n == "mulf" and fa == 1.0:
        return _replace(op, b)
    return False


def canonicalize_op(op: Operation, pool: ConstantPool) -> bool:
    """Apply the first matching rewrite to ``op``; returns True when the IR changed."""
    name = op.name
    ops = op.operands
    if not op.results or len(op.results) != 1:
        return False
    if name.startswith("arith.") and name[6:] in _BINARY and len(ops) == 2:
        return _binary(op, pool)
    if name in ("arith.cmpi", "arith.cmpf"):
        return _compare(op, pool)
    if name.startswith("arith.") and name[6:] in CASTS and name != "arith.bitcast":
        return _cast(op, pool)
    if name == "arith.select":
        return _select(op)
    if name == "tt.splat":
        c = const_value(ops[0])
        if c is not None:
            return _replace(op, pool.get(op, op.result.type, c))
        return False
    if name in ("tt.broadcast", "tt.expand_dims", "ttg.convert_layout"):
        return _reshaping(op, pool)
    if name == "tt.addptr":
        c = const_value(ops[1])
        if c is not None and c == 0 and not isinstance(c, bool) and ops[0].type == op.result.type:
            return _replace(op, ops[0])
        return False
    return False


def _binary(op: Operation, pool: ConstantPool) -> bool:
    """Fold a binary arith op of two constants, else apply an algebraic identity."""
    t = op.result.type
    ca, cb = const_value(op.operands[0]), const_value(op.operands[1])
    if ca is not None and cb is not None:
        r = fold_binary(op.name[6:], ca, cb, t.scalar)
        if r is not None:
            return _replace(op, pool.get(op, t, r))
    if op.name == "arith.muli" and cb is not None and not isinstance(t, TensorType):
        return _mul_mul_constant(op, cb, pool) or _identity(op, pool)
    if op.name in ("arith.addi", "arith.subi") and not isinstance(t, TensorType) and \
            (ca is None) != (cb is None) and _add_sub_constant(op, pool):
        return True
    return _identity(op, pool)


def _split_const(op: Operation):
    """``(x, c, x_first)`` of an ``addi``/``subi`` with exactly one constant operand ``c``
    (``x_first``: ``x`` is the left operand), else None."""
    if op.name not in ("arith.addi", "arith.subi"):
        return None
    a, b = op.operands
    ca, cb = const_value(a), const_value(b)
    if (ca is None) == (cb is None):
        return None
    return (a, cb, True) if cb is not None else (b, ca, False)


def _add_sub_constant(op: Operation, pool: ConstantPool) -> bool:
    """Two chained ``addi``/``subi`` with a constant each become one op with one constant,
    as MLIR's arith canonicalization does (``AddIAddConstant``, ``AddISubConstantRHS``/
    ``LHS``, ``SubIRHSAddConstant``, ``SubILHSAddConstant``, ``SubIRHSSubConstantRHS``/
    ``LHS``, ``SubILHSSubConstantRHS``/``LHS``): ``(x + c0) - c1`` -> ``x + (c0 - c1)``, the
    ``- 1`` of ``tl.cdiv``'s ``(x + d) - 1`` folded into the addend. Overflow flags are
    dropped unless both ops carry the same."""
    outer = _split_const(op)
    assert outer is not None
    y, c1, y_first = outer
    inner_op = y.defining_op
    inner = _split_const(inner_op) if inner_op is not None else None
    if inner is None:
        return False
    x, c0, x_first = inner
    t = op.result.type
    # the value as s_x * x + k, with s_x = +1 or -1
    s_in, k_in = (1, c0) if inner_op.name == "arith.addi" else \
        ((1, -c0) if x_first else (-1, c0))
    if op.name == "arith.addi":
        s_x, k = s_in, k_in + c1
    elif y_first:
        s_x, k = s_in, k_in - c1
    else:
        s_x, k = -s_in, c1 - k_in
    kc = pool.get(op, t, fold_binary("addi", k, 0, t.scalar))
    flags = op.attributes.get("overflowFlags")
    attrs = {"overflowFlags": flags} if flags and flags == \
        inner_op.attributes.get("overflowFlags") else {}
    if s_x == 1:
        new = Operation("arith.addi", [x, kc], [t], attrs, loc=op.loc)
    else:
        new = Operation("arith.subi", [kc, x], [t], attrs, loc=op.loc)
    new.result.name = op.result.name
    block_of(op).insert_before(op, new)
    return _replace(op, new.result)


def _mul_mul_constant(op: Operation, c1, pool: ConstantPool) -> bool:
    """``muli(muli(x, c0), c1)`` -> ``muli(x, c0 * c1)`` on scalars (MLIR's
    ``MulIMulIConstant``; the overflow flags are dropped unless both muls carry them)."""
    inner = op.operands[0].defining_op
    if inner is None or inner.name != "arith.muli":
        return False
    c0 = const_value(inner.operands[1])
    if c0 is None:
        return False
    t = op.result.type
    flags = op.attributes.get("overflowFlags")
    attrs = {"overflowFlags": flags} if flags and flags == \
        inner.attributes.get("overflowFlags") else {}
    k = pool.get(op, t, fold_binary("muli", c0, c1, t.scalar))
    new = Operation("arith.muli", [inner.operands[0], k], [t], attrs, loc=op.loc)
    new.result.name = op.result.name
    block_of(op).insert_before(op, new)
    return _replace(op, new.result)


def _compare(op: Operation, pool: ConstantPool) -> bool:
    """Fold ``arith.cmpi``/``arith.cmpf`` of two constants, or ``cmpi`` of a value with itself."""
    t = op.result.type
    a, b = op.operands
    ca, cb = const_value(a), const_value(b)
    pred = op.attributes.get("predicate", "")
    if ca is not None and cb is not None:
        r = fold_cmp(op.name, pred, ca, cb, a.type.scalar)
        if r is not None:
            return _replace(op, pool.get(op, t, r))
    if op.name == "arith.cmpi" and a is b:
        return _replace(op, pool.get(op, t, pred in ("eq", "sle", "sge", "ule", "uge")))
    return False


def _cast(op: Operation, pool: ConstantPool) -> bool:
    """Fold an arith cast of a constant."""
    t = op.result.type
    src = op.operands[0]
    c = const_value(src)
    if c is not None:
        r = fold_cast(op.name[6:], c, src.type.scalar, t.scalar)
        if r is not None:
            return _replace(op, pool.get(op, t, r))
    return False


def _select(op: Operation) -> bool:
    """``select(const, x, y)`` and ``select(c, x, x)``."""
    t = op.result.type
    cond, x, y = op.operands
    c = const_value(cond)
    if c is not None and x.type == t:
        return _replace(op, x if c else y)
    if x is y and x.type == t:
        return _replace(op, x)
    return False


def _reshaping(op: Operation, pool: ConstantPool) -> bool:
    """``tt.broadcast``/``tt.expand_dims``/``ttg.convert_layout``: drop when the type does not
    change, fold a constant, or splat the scalar of a splat directly."""
    t = op.result.type
    src = op.operands[0]
    if src.type == t:
        return _replace(op, src)
    c = const_value(src)
    if c is not None:
        return _replace(op, pool.get(op, t, c))
    d = src.defining_op
    if d is not None and d.name == "tt.splat":
        return _splat(op, d.operands[0])
    return False


def fold_constant_if(op: Operation) -> bool:
    """Replace ``scf.if`` on a constant condition by the ops of the branch it takes (moved
    before it) and its results by that branch's yielded values; True when it did."""
    c = const_value(op.operands[0])
    if c is None:
        return False
    region = op.regions[0 if c else 1]
    outer = block_of(op)
    yielded: list[Value] = []
    if region.blocks:
        block = region.blocks[0]
        term = block.terminator
        for inner in [o for o in block.ops if o is not term]:
            block.ops.remove(inner)
            outer.insert_before(op, inner)
        yielded = list(term.operands) if term is not None else []
    for r, v in zip(op.results, yielded, strict=True):
        r.replace_all_uses_with(v)
    op.erase()
    return True


def _inside(v: Value, op: Operation) -> bool:
    d = v.defining_op
    while d is not None:
        if d is op:
            return True
        d = d.parent_op()
    return False


def fold_poison_results(op: Operation) -> bool:
    """An ``scf.if`` result that one branch yields as ``ub.poison`` and the other as a value
    defined outside the ``if`` is that value (MLIR folds ``select(c, x, poison)`` to ``x``);
    True when a result was replaced."""
    terms = [r.blocks[0].terminator if r.blocks else None for r in op.regions]
    if len(terms) != 2 or terms[0] is None or terms[1] is None:
        return False
    ys = [terms[0].operands, terms[1].operands]
    changed = False
    for i, r in enumerate(op.results):
        a, b = ys[0][i], ys[1][i]
        for p, other in ((a, b), (b, a)):
            poison = p.defining_op is not None and p.defining_op.name == "ub.poison"
            if poison and r.uses and not _inside(other, op):
                r.replace_all_uses_with(other)
                changed = True
                break
    return changed


def canonicalize_function(func: Operation) -> bool:
    """Run the rewrites on one ``tt.func`` to a fixed point; True when anything changed."""
    changed_any = False
    for _ in range(MAX_ITERATIONS):
        pool = ConstantPool()
        changed = pool.hoist(func)
        for op in list(func.walk()):
            if op.parent is not None and op is not func:
                if op.name == "scf.for":
                    changed |= fold_invariant_iter_args(op) > 0
                if op.name == "scf.if":
                    changed |= fold_constant_if(op) or fold_poison_results(op)
                    continue
                changed |= canonicalize_op(op, pool)
        changed |= erase_dead_ops(func) > 0
        changed_any |= changed
        if not changed:
            break
    return changed_any


@dataclass
class Canonicalize(Pass):
    """Fold constants, apply identities, simplify shape ops, hoist and unique constants and
    erase dead ops. No options."""

    name = "canonicalize"

    def run(self, module: Operation, ctx=None) -> None:
        for func in functions(module):
            canonicalize_function(func)
