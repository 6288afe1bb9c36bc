"""Runtime and compile-time ``if`` (a mixin of :class:`CodeGenerator`), as Triton's
``compiler/code_generator.py``.

* ``if`` on a compile-time condition compiles only the live branch.
* ``if`` on a runtime scalar becomes ``scf.if``; variables assigned in both branches are
  merged as its results (tensors, block pointers, tuples of them), with the same dtype and
  shape required on both sides.
* ``return`` inside a runtime ``if`` (early return; Triton lowers it to a CFG branch): the
  rest of the function -- the statements after the ``if`` at every enclosing level, its
  *continuation* -- is compiled into each branch that does not return, so the function ends
  inside the ``scf.if``. A ``@jit`` helper's return values become the ``scf.if``'s results.
"""
from __future__ import annotations

import ast

from ..errors import UnsupportedError, place
from ..ir.core import Block
from ..language import dtypes as dt
from ..language.core import tensor
from . import carry
from . import constexpr as ce

#: the reason of the error for ``return`` inside a loop, with Triton 3.6's own words
RETURN_IN_LOOP = ("return inside a loop is not supported (Triton 3.6's words: Cannot have "
                  "`return` statements inside `while` or `for` statements in triton)")


def assigned_names(stmts) -> list:
    """Names bound by assignments and for-targets in ``stmts`` (not in nested defs), in
    order of first appearance."""
    out = []

    def add(t):
        if isinstance(t, ast.Name) and t.id not in out:
            out.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                add(e)

    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    add(t)
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For)):
                add(n.target)
    return out


def contains_return(stmts) -> bool:
    """Whether a ``return`` statement appears anywhere in ``stmts``."""
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def discard_block(block: Block) -> None:
    """Drop every use the ops of a detached ``block`` hold (a dry run's scratch IR)."""
    for op in reversed(block.ops):
        for region in op.regions:
            for b in region.blocks:
                discard_block(b)
        op.drop_operands()
    block.ops = []


class ControlFlowMixin:
    """``visit_If`` (loops live in :mod:`.loops`)."""

    def visit_If(self, node):
        cond = ce.unwrap(self.visit(node.test))
        if ce.is_const(cond) and self.caller is not None and \
                contains_return(node.body + node.orelse) and \
                isinstance(node.test, ast.Name) and node.test.id in self.scope.lifted:
            # Triton makes a name bound to a number a tensor: a runtime if, whose returning
            # and falling-off paths merge (the latter as ub.poison)
            self.early_return_if(node, self.sem.to_tensor(cond))
            return
        if ce.is_const(cond):
            self.visit_stmts(node.body if cond else node.orelse)
            return
        if contains_return(node.body + node.orelse):
            self.early_return_if(node, cond)
        else:
            self.runtime_if(node, cond)

    def _cond(self, node, cond):
        cond = self.sem.to_tensor(cond)
        if cond.shape:
            if cond.numel != 1:
                raise self.error(node.test, "if condition must be a scalar, got a tile of "
                                 f"shape {list(cond.shape)}",
                                 "use tl.where(cond, a, b) to choose elementwise")
            cond = self.sem.wrap(self.builder.create(
                "tt.unsplat", [cond.handle], [cond.dtype.to_ir()]).result, cond.dtype)
        return self.sem.cast(cond, dt.int1)

    def _branch(self, stmts, scope, cont=None):
        """Compile ``stmts`` (then the continuation ``cont`` unless they return) into a new
        block. Returns ``(block, scope, returned, ret)``."""
        block = Block()
        saved = (self.scope, self.builder.block, self.builder.index, self.returned, self.ret,
                 self.continuation)
        self.scope = scope.copy()
        self.builder.set_insertion_point_to_end(block)
        self.runtime_depth += 1
        self.returned, self.ret = False, None
        try:
            if cont is not None:
                self.continuation = cont
            self.visit_stmts(stmts)
            if cont is not None and not self.returned:
                self.continuation = []
                self.visit_stmts(cont)
            return block, self.scope, self.returned, self.ret
        finally:
            self.runtime_depth -= 1
            (self.scope, self.builder.block, self.builder.index, self.returned, self.ret,
             self.continuation) = saved

    def _emit_if(self, cond, then_block, else_block, then_vals, else_vals):
        """``scf.if`` yielding ``then_vals``/``else_vals`` (lists of tensors); returns its
        results as tensors."""
        for block, ys in ((then_block, then_vals), (else_block, else_vals)):
            with self.builder.at_end_of(block):
                self.builder.create("scf.yield", [v.handle for v in ys], [])
        op = self.builder.create("scf.if", [cond.handle], [v.handle.type for v in then_vals],
                                 regions=2)
        for region, block in zip(op.regions, (then_block, else_block), strict=False):
            region.blocks.append(block)
            block.parent = region
        return [self.sem.wrap(r, v.dtype, v.shape)
                for r, v in zip(op.results, then_vals, strict=False)]

    def _merge_pair(self, node, what, a, b, then_block, else_block):
        """Make the two branch values of ``what`` (a variable's name, or None for the
        return value) mergeable: numbers become tensors (typed like the other side). Raises
        a caret error on a type mismatch."""
        a, b = ce.unwrap(a), ce.unwrap(b)
        a = self._materialize(a, then_block, b)
        b = self._materialize(b, else_block, a)
        if carry.structure(a) != carry.structure(b):  # Triton's first words
            types = f"the then block ({carry.describe(a)}) and the else block " \
                    f"({carry.describe(b)})"
            hint = "make both branches produce the same dtype and shape"
            if what is not None:
                raise self.error(node, f"Mismatched type for {what} between {types}", hint)
            # Triton decides a function's return type after its body, so it points at the
            # ``def`` (its "at 1:0:"); the message names the if whose branches disagree
            where = self.src.loc(node.lineno, node.col_offset)
            raise self.error(self.src.tree(), f"Return type mismatch: {types} of the if at "
                             f"{place(where.file, where.line)}", hint)
        return a, b

    def runtime_if(self, node, cond):
        cond = self._cond(node, cond)
        then_block, then_scope, _, _ = self._branch(node.body, self.scope)
        else_block, else_scope, _, _ = self._branch(node.orelse, self.scope)
        merged, ys_then, ys_else = [], [], []
        for name in assigned_names(node.body + node.orelse):
            if name not in then_scope.values or name not in else_scope.values:
                continue  # defined in one branch only: not visible after the if
            a, b = ce.unwrap(then_scope.values[name]), ce.unwrap(else_scope.values[name])
            if not carry.is_runtime(a) and not carry.is_runtime(b):
                if a is b or (type(a) is type(b) and a == b):
                    self.scope.values[name] = a
                    continue
                if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
                    raise self.error(node, f"{name!r} gets different compile-time values in "
                                     "the branches of a runtime if", None, UnsupportedError)
            a, b = self._merge_pair(node, name, a, b, then_block, else_block)
            merged.append((name, a))
            ys_then += carry.flatten(a)
            ys_else += carry.flatten(b)
        results = iter(self._emit_if(cond, then_block, else_block, ys_then, ys_else))
        for name, template in merged:
            leaves = [next(results) for _ in carry.flatten(template)]
            for leaf in leaves:
                leaf.handle.name = name
            self.scope.values[name] = carry.unflatten(template, leaves)

    def early_return_if(self, node, cond):
        """A runtime ``if`` containing ``return``: each branch is followed by the rest of the
        function unless it returns, and the function ends here."""
        if self.loop_depth:
            raise self.error(node, RETURN_IN_LOOP,
                             "compute a flag and mask the work, or restructure the loop",
                             UnsupportedError)
        cond = self._cond(node, cond)
        cont = list(self.continuation)
        then_block, _, _, ret_a = self._branch(node.body, self.scope, cont)
        else_block, _, _, ret_b = self._branch(node.orelse, self.scope, cont)
        if (ret_a is None) != (ret_b is None) and self.caller is not None:
            # a @jit helper falls off its end on one path: Triton returns ub.poison there
            if ret_a is None:
                ret_b, ret_a = self._poison_pair(ret_b, else_block, then_block)
            else:
                ret_a, ret_b = self._poison_pair(ret_a, then_block, else_block)
        if ret_a is None and ret_b is None:
            self._emit_if(cond, then_block, else_block, [], [])
        elif ret_a is None or ret_b is None:
            raise self.error(node, "this function returns a value on one path and nothing on "
                             "another", "return a value of the same type on every path")
        else:
            a, b = self._merge_pair(node, None, ret_a, ret_b, then_block,
                                    else_block)
            results = self._emit_if(cond, then_block, else_block, carry.flatten(a),
                                    carry.flatten(b))
            self.ret = carry.unflatten(a, results) if carry.is_runtime(a) else a
        self.returned = True

    def _poison_pair(self, ret, block, other_block):
        """``(ret as tensors at the end of block, the same structure of ub.poison values at
        the end of other_block)``: what a helper returns on the path that falls off its
        end (Triton's ``code_generator.py`` ends a function with ``ret(create_poison)``)."""
        ret = self._materialize(ce.unwrap(ret), block, None)
        leaves = []
        with self.builder.at_end_of(other_block):
            for v in carry.flatten(ret):
                op = self.builder.create("ub.poison", [], [v.handle.type])
                leaves.append(self.sem.wrap(op.result, v.dtype, v.shape))
        return ret, carry.unflatten(ret, leaves)

    def _materialize(self, v, block, other):
        """A compile-time number as a tensor (typed like ``other`` when it is one) at the end
        of ``block``; tuples element by element."""
        if isinstance(v, (tuple, list)) and isinstance(other, (tuple, list)) and \
                len(v) == len(other):
            items = [self._materialize(x, block, o) for x, o in zip(v, other, strict=False)]
            return type(v)._make(items) if hasattr(type(v), "_make") else type(v)(items)
        if not isinstance(v, (int, float, bool)):
            return v
        with self.builder.at_end_of(block):
            if isinstance(other, tensor):
                return self.sem.cast(self.sem.to_tensor(v), other.dtype)
            if isinstance(other, (int, float, bool)) and not isinstance(v, bool) and \
                    isinstance(other, float):
                return self.sem.to_tensor(float(v))
            return self.sem.to_tensor(v)
