"""Rewrite each ``tt.map_elementwise`` as tile ops, so every backend runs it with the ops it
already lowers (a helper the backends call on their copy of the ttir, after the ``ttir``
stage is printed: the ttir keeps Triton's region op).

The scalar region is executed for all elements at once: each op of the region that depends
on an element becomes the same op on tiles (scalars it reads are splatted); an ``scf.if``
whose condition depends on the element runs both branches and picks each element's value
with ``arith.select`` (if-conversion). Integer divisions in a branch not taken by an element
divide by 1 for that element, so a guarded ``a // b`` never traps. Branches with side effects
(stores, atomics, prints) and loops that depend on the element are refused with
UnsupportedError. With ``pack = p`` the inputs are cut into ``p`` tiles of every ``p``-th
element (``tt.reshape`` + ``tt.split``) and the results joined back (``tt.join``).

Triton lowers the region per element in registers (``MapElementwiseOpConversion``); the values
are the same for every op here, which computes elementwise.
"""
from __future__ import annotations

from typing import Any

from ..errors import UnsupportedError
from ..ir.clone import clone_module, clone_op
from ..ir.core import Operation, Value
from ..ir.types import IntType, TensorType
from .effects import is_pure

_INT_DIV = {"arith.divsi": 1, "arith.divui": 1, "arith.remsi": 1, "arith.remui": 1,
            "arith.floordivsi": 1, "arith.ceildivsi": 1, "arith.ceildivui": 1}
_LOOPS = ("scf.for", "scf.while")


class _Expander:
    """Rewrites one ``tt.map_elementwise`` op ``me`` in front of it."""

    def __init__(self, me: Operation):
        self.me = me
        assert me.parent is not None, "a tt.map_elementwise outside a block"
        self.block = me.parent
        self.shape: tuple = ()
        self.vec: dict = {}  # id(scalar value) -> tile value
        self.outer: dict = {}  # id(scalar value) -> its hoisted copy (no element dependence)

    # building --------------------------------------------------------------------------
    def emit(self, name, operands, types, attrs=None, loc=None) -> Operation:
        op = Operation(name, list(operands), list(types), attrs or {}, 0, loc or self.me.loc)
        self.block.insert_before(self.me, op)
        return op

    def tile_type(self, t):
        return TensorType(self.shape, t)

    def as_tile(self, v: Value) -> Value:
        """``v`` as a tile of the element shape (splatted when it is a scalar)."""
        if id(v) in self.vec:
            return self.vec[id(v)]
        v = self.outer.get(id(v), v)
        if isinstance(v.type, TensorType):
            return v
        return self.emit("tt.splat", [v], [self.tile_type(v.type)]).result

    def const_one(self, t) -> Value:
        c = self.emit("arith.constant", [], [t], {"value": 1}).result
        return self.as_tile(c)

    # the region ------------------------------------------------------------------------
    def run_block(self, block, guard) -> list:
        """Expand ``block``'s ops; returns its terminator's operands as tiles or scalars."""
        for op in block.ops:
            if op.name in ("tt.map_elementwise.return", "scf.yield"):
                return list(op.operands)
            self.run_op(op, guard)
        return []

    def depends(self, op) -> bool:
        return any(id(v) in self.vec for v in op.operands) or any(
            id(v) in self.vec for inner in op.walk() for v in inner.operands)

    def run_op(self, op, guard) -> None:
        if not self.depends(op):
            self.hoist(op)
            return
        if op.name == "scf.if":
            self.run_if(op, guard)
            return
        if op.name in _LOOPS or op.regions:
            raise UnsupportedError(
                f"tl.map_elementwise: {op.name} whose bounds or condition depend on the element "
                "is not supported on this backend", op.loc,
                "compute per-element loops with tl.where over the whole tile")
        operands = [self.as_tile(v) for v in op.operands]
        if op.name in _INT_DIV and guard is not None:  # divide by 1 where the branch is off
            d = operands[1]
            el = d.type.element  # type: ignore[attr-defined]
            operands[1] = self.emit("arith.select", [guard, d, self.const_one(el)],
                                    [d.type]).result
        new = self.emit(op.name, operands, [self.tile_type(r.type) for r in op.results],
                        dict(op.attributes), op.loc)
        for r, nr in zip(op.results, new.results, strict=True):
            self.vec[id(r)] = nr

    def hoist(self, op) -> None:
        """An op that does not depend on the element: copied once, in front of the op."""
        copy = clone_op(op, self.outer)
        self.block.insert_before(self.me, copy)

    def run_if(self, op, guard) -> None:
        if any(not is_pure(inner) for r in op.regions for b in r.blocks for inner in b.ops
               if inner.name != "scf.yield"):
            raise UnsupportedError(
                "tl.map_elementwise: an `if` on the element whose branches store, print or "
                "call is not supported on this backend", op.loc,
                "return values from the branches and store them after tl.map_elementwise")
        cond = self.as_tile(op.operands[0])
        true = self.emit("arith.constant", [], [IntType(1)], {"value": True}).result
        not_cond = self.emit("arith.xori", [cond, self.as_tile(true)], [cond.type]).result
        g_then, g_else = cond, not_cond
        if guard is not None:
            g_then = self.emit("arith.andi", [guard, cond], [cond.type]).result
            g_else = self.emit("arith.andi", [guard, not_cond], [cond.type]).result
        then_vals = self.run_block(op.regions[0].block, g_then)
        else_vals = self.run_block(op.regions[1].block, g_else) \
            if len(op.regions) > 1 and op.regions[1].blocks else []
        for r, a, b in zip(op.results, then_vals, else_vals, strict=False):
            a, b = self.as_tile(a), self.as_tile(b)
            self.vec[id(r)] = self.emit("arith.select", [cond, a, b], [a.type]).result

    # packing ---------------------------------------------------------------------------
    def unpack(self, x: Value, pack: int) -> list:
        """The ``pack`` tiles of elements ``k, k + pack, ...`` of ``x`` (flattened), by offset."""
        xt: Any = x.type
        numel = _numel(xt.shape)
        bits = pack.bit_length() - 1
        el = xt.element
        cur = self.emit("tt.reshape", [x], [TensorType((numel // pack,) + (2,) * bits, el)]
                        ).result
        pieces = {0: cur}
        for level in range(bits):
            w = 1 << level
            nxt = {}
            for off, v in pieces.items():
                shape = tuple(v.type.shape[:-1])  # type: ignore[attr-defined]
                lo, hi = self.emit("tt.split", [v], [TensorType(shape, el)] * 2).results
                nxt[off], nxt[off + w] = lo, hi
            pieces = nxt
        return [pieces[i] for i in range(pack)]

    def repack(self, vals: list, shape) -> Value:
        """Inverse of :meth:`unpack`: tiles by offset -> one tile of ``shape``."""
        pack = len(vals)
        bits = pack.bit_length() - 1
        cur: list[Any] = list(vals)
        for level in reversed(range(bits)):
            w = 1 << level
            cur = [self.emit("tt.join", [cur[off], cur[off + w]],
                             [TensorType(tuple(cur[off].type.shape) + (2,),
                                         cur[off].type.element)]).result
                   for off in range(w)]
        el = cur[0].type.element
        return self.emit("tt.reshape", [cur[0]], [TensorType(tuple(shape), el)]).result

    def expand(self) -> None:
        me = self.me
        pack = int(me.attributes.get("pack", 1) or 1)
        full_shape = tuple(me.operands[0].type.shape)  # type: ignore[attr-defined]
        block = me.regions[0].block
        if pack == 1:
            self.shape = full_shape
            for a, x in zip(block.args, me.operands, strict=True):
                self.vec[id(a)] = x
        else:
            self.shape = (_numel(full_shape) // pack,)
            for i, x in enumerate(me.operands):
                for j, piece in enumerate(self.unpack(x, pack)):
                    self.vec[id(block.args[i * pack + j])] = piece
        outs = [self.as_tile(v) for v in self.run_block(block, None)]
        for i, r in enumerate(me.results):
            new = outs[i] if pack == 1 else self.repack(outs[i * pack:(i + 1) * pack],
                                                        full_shape)
            r.replace_all_uses_with(new)
        me.erase()


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def expand_map_elementwise(module: Operation) -> Operation:
    """``module`` with every ``tt.map_elementwise`` rewritten as tile ops: a rewritten copy
    when it has any (the caller's module is left as it is), else ``module`` itself. Raises
    UnsupportedError (at the op's line) for regions it cannot run on tiles."""
    if not any(o.name == "tt.map_elementwise" for o in module.walk()):
        return module
    module = clone_module(module)
    while True:
        ops = [o for o in module.walk() if o.name == "tt.map_elementwise"]
        if not ops:
            return module
        _Expander(ops[-1]).expand()  # innermost first: a nested one is expanded on its own


__all__ = ["expand_map_elementwise"]
