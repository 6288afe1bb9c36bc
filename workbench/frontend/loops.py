"""Loops (a mixin of :class:`CodeGenerator`), as Triton's ``compiler/code_generator.py``: ``for``
over ``tl.static_range`` (unrolled), ``range``/``tl.range`` (``scf.for``) and ``while``
(``scf.while``). Variables the body reassigns are loop-carried (tensors, block pointers, tuples of
them; numbers the body changes become tensors) and must keep their type."""
from __future__ import annotations

import ast
import builtins
import contextlib
import functools

from ..errors import CompilationError, UnsupportedError
from ..ir.attrs import LICM_DISABLED, UNIT
from ..ir.core import Block
from ..language import loops
from ..language.semantic import integer_promote, ir_type
from . import carry
from . import constexpr as ce
from .control import assigned_names, discard_block


class LoopsMixin:
    """``visit_For`` and ``visit_While``."""

    # for -------------------------------------------------------------------------------------
    def visit_For(self, node):
        it = node.iter
        if not isinstance(it, ast.Call):
            raise self.error(it, "for loops must iterate over range(...), tl.range(...) or "
                             "tl.static_range(...)", None, UnsupportedError)
        fn = self.visit(it.func)
        if fn not in (builtins.range, loops.range, loops.static_range):
            rng = self.visit(it)
            if isinstance(rng, (tuple, list)):
                return self._unrolled(node, list(rng))
            raise self.error(it, "for loops must iterate over range(...), tl.range(...) or "
                             "tl.static_range(...)", None, UnsupportedError)
        args = [ce.unwrap(a) for a in self._visit_elts(it.args)]
        kws = {k.arg: ce.unwrap(self.visit(k.value)) for k in it.keywords}
        if node.orelse:
            raise self.error(node, "for ... else is not supported", None, UnsupportedError)
        if fn is loops.static_range:
            r = loops.static_range(*args, **kws)
            if not ce.is_const([r.start, r.end, r.step]):
                raise self.error(it, "tl.static_range bounds must be compile-time ints",
                                 "use range(...) for runtime bounds")
            return self._unrolled(node, list(builtins.range(r.start, r.end, r.step)))
        if fn is builtins.range:
            if kws or not 1 <= len(args) <= 3:
                raise self.error(it, "range() takes 1 to 3 positional arguments")
            r = loops.range(*args)
        else:
            r = loops.range(*args, **kws)
        self.scf_for(node, r)

    def _unrolled(self, node, values):
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be a single name", None,
                             UnsupportedError)
        self.unrolled_depth += 1
        try:
            for v in values:
                self.scope.values[node.target.id] = v
                self.visit_stmts(node.body)
                if self.returned:
                    break
        finally:
            self.unrolled_depth -= 1

    def _carried(self, body, exclude=()):
        """name -> initial value for the variables defined before the loop that ``body``
        reassigns and that hold IR values."""
        out = {}
        for name in assigned_names(body):
            if name not in exclude and name in self.scope.values:
                v = ce.unwrap(self.scope.values[name])
                if carry.is_runtime(v):
                    out[name] = v
        return out

    def _loop_region(self, block, carried, body, scope_values=None):
        """Compile ``body`` into ``block`` whose trailing args stand for ``carried``; returns
        the body's scope. ``scope_values`` adds names (the induction variable)."""
        scope = self.scope.copy()
        n_leaves = sum(len(carry.flatten(v)) for v in carried.values())
        self._bind_carried(scope, carried, block.args[len(block.args) - n_leaves:])
        with self._inside(scope, block):
            self.runtime_depth += 1
            self.loop_depth += 1
            try:
                for k, v in (scope_values or {}).items():
                    scope.values[k] = v() if callable(v) else v
                self.visit_stmts(body)
            finally:
                self.runtime_depth -= 1
                self.loop_depth -= 1
        return scope

    def _bind_carried(self, scope, carried, values):
        """Bind each name of ``carried`` in ``scope`` to the IR ``values`` (block arguments or
        op results, in order, one per leaf of the carried structure), named after it."""
        it = iter(values)
        for name, init in carried.items():
            leaves = []
            for leaf in carry.flatten(init):
                v = next(it)
                v.name = name
                leaves.append(self.sem.wrap(v, leaf.dtype, leaf.shape))
            scope.values[name] = carry.unflatten(init, leaves)

    @contextlib.contextmanager
    def _inside(self, scope, block):
        """Compile at the end of ``block`` with ``scope`` as the current scope; both are
        restored on exit."""
        saved_scope, saved_ip = self.scope, (self.builder.block, self.builder.index)
        self.scope = scope
        self.builder.set_insertion_point_to_end(block)
        try:
            yield
        finally:
            self.scope = saved_scope
            self.builder.block, self.builder.index = saved_ip

    def _promotions(self, node, body, carried, body_scope, exclude=()):
        """Compile-time variables the body changes: they must be carried as tensors."""
        promote = []
        for name in assigned_names(body):
            if name in carried or name in exclude or name not in self.scope.values:
                continue
            before = ce.unwrap(self.scope.values[name])
            after = ce.unwrap(body_scope.values.get(name))
            if carry.is_runtime(before):
                continue
            if carry.is_runtime(after) or not (after is before or after == before):
                if not isinstance(before, (int, float)):
                    raise self.error(node, f"{name!r} is a compile-time {type(before).__name__}"
                                     " that the loop changes", "make it a tensor before the "
                                     "loop", UnsupportedError)
                promote.append(name)
        return promote

    def _yields(self, node, carried, body_scope):
        ys = []
        for name, init in carried.items():
            v = ce.unwrap(body_scope.values[name])
            if carry.structure(v) != carry.structure(init):
                raise self.error(node, f"loop-carried variable {name!r} has initial type "
                                 f"{carry.describe(init)} but is re-assigned to "
                                 f"{carry.describe(v)} in the loop",
                                 "keep its type the same: initialise it with tl.zeros(shape, "
                                 "dtype) or tl.full of the final dtype and shape")
            ys += carry.flatten(v)
        return ys

    def _leaf_types(self, carried):
        return [ir_type(t.dtype, t.shape) for v in carried.values() for t in carry.flatten(v)]

    def scf_for(self, node, r):
        sem = self.sem
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be a single name", None,
                             UnsupportedError)
        step_c = r.step if ce.is_const(r.step) else None
        if step_c == 0:
            raise self.error(node.iter, "range() step must not be zero")
        reverse = step_c is not None and step_c < 0
        bounds = []
        for v in (r.start, r.end, r.step if not reverse else -r.step):
            t = sem.to_tensor(v)
            if not t.dtype.is_int() or t.shape:
                raise self.error(node.iter, f"loop bounds must be integer scalars, got {t!r}")
            bounds.append(t)
        iv_type = integer_promote(integer_promote(bounds[0].dtype, bounds[1].dtype),
                                  bounds[2].dtype)
        lb, ub, step = (sem.cast(b, iv_type) for b in bounds)
        start = lb
        if reverse:  # iterate t = 0, s, 2s... < start - end; iv = start - t
            lb, ub = sem.constant(0, iv_type), sem.sub(lb, ub)
        target = node.target.id
        carried = self._carried(node.body, (target,))
        quiet = sem.quiet
        while True:
            block = Block([ir_type(iv_type)] + self._leaf_types(carried))
            block.args[0].name = target
            iv = sem.wrap(block.args[0], iv_type)
            ivf = functools.partial(sem.sub, start, iv) if reverse else iv
            entry = [t.handle for v in carried.values() for t in carry.flatten(v)]
            sem.loop_entry.update(zip(block.args[1:], entry, strict=False))
            body_scope = self._loop_region(block, carried, node.body, {target: ivf})
            promote = self._promotions(node, node.body, carried, body_scope, (target,))
            if not promote:
                break
            discard_block(block)
            sem.quiet = True  # the retry compiles the body again: print once
            for name in promote:
                carried[name] = sem.to_tensor(ce.unwrap(self.scope.values[name]))
        sem.quiet = quiet
        ys = self._yields(node, carried, body_scope)
        with self.builder.at_end_of(block):
            self.builder.create("scf.yield", [v.handle for v in ys], [])
        attrs = {}
        if getattr(r, "num_stages", None) is not None:
            attrs["tt.num_stages"] = int(r.num_stages)
        if getattr(r, "loop_unroll_factor", None) is not None:
            attrs["tt.loop_unroll_factor"] = int(r.loop_unroll_factor)
        for flag in ("disallow_acc_multi_buffer", "flatten", "warp_specialize"):
            if getattr(r, flag, False):  # unit attributes, as Triton's code_generator sets them
                attrs["tt." + flag] = UNIT
        if getattr(r, "disable_licm", False):
            attrs["llvm.loop_annotation"] = LICM_DISABLED
        inits = [t for v in carried.values() for t in carry.flatten(v)]
        op = self.builder.create("scf.for", [lb.handle, ub.handle, step.handle] +
                                 [t.handle for t in inits], [t.handle.type for t in inits],
                                 attrs, regions=1)
        op.regions[0].blocks.append(block)
        block.parent = op.regions[0]
        self._bind_carried(self.scope, carried, op.results)

    # while -----------------------------------------------------------------------------------
    def visit_While(self, node):
        """``while cond:`` -> ``scf.while``: the *before* region evaluates ``cond`` on the
        carried values (``scf.condition``), the *after* region runs the body (``scf.yield``).
        """
        sem = self.sem
        if node.orelse:
            raise self.error(node, "while ... else is not supported", None, UnsupportedError)
        carried = self._carried(node.body)
        quiet = sem.quiet
        while True:
            after = Block(self._leaf_types(carried))
            body_scope = self._loop_region(after, carried, node.body)
            promote = self._promotions(node, node.body, carried, body_scope)
            if not promote:
                break
            discard_block(after)
            sem.quiet = True
            for name in promote:
                carried[name] = sem.to_tensor(ce.unwrap(self.scope.values[name]))
        sem.quiet = quiet
        ys = self._yields(node, carried, body_scope)
        with self.builder.at_end_of(after):
            self.builder.create("scf.yield", [v.handle for v in ys], [])
        before = Block(self._leaf_types(carried))
        cond = self._before_region(node, before, carried)
        if ce.is_const(cond):
            if not cond:
                discard_block(before)
                discard_block(after)
                return  # the loop never runs
            raise self.error(node.test, "this while loop's condition is always true",
                             "make the condition depend on a value the loop changes")
        with self.builder.at_end_of(before):
            cond = self._cond(node, cond)
            self.builder.create("scf.condition", [cond.handle] +
                                [a for a in before.args], [])
        inits = [t for v in carried.values() for t in carry.flatten(v)]
        attrs = {"llvm.loop_annotation": LICM_DISABLED} if self._no_licm(node.test) else {}
        op = self.builder.create("scf.while", [t.handle for t in inits],
                                 [t.handle.type for t in inits], attrs, regions=2)
        for region, block in zip(op.regions, (before, after), strict=False):
            region.blocks.append(block)
            block.parent = region
        self._bind_carried(self.scope, carried, op.results)

    def _before_region(self, node, before, carried):
        """Evaluate the loop test with the carried values bound to ``before``'s args."""
        scope = self.scope.copy()
        self._bind_carried(scope, carried, before.args)
        with self._inside(scope, before):
            return ce.unwrap(self.visit(self._while_test(node.test)))

    def _no_licm(self, test):
        """True when a ``while`` test is ``tl.condition(c, disable_licm=<true constant>)``."""
        if self._while_test(test) is test:
            return False
        for k in test.keywords:
            flag = ce.unwrap(self.visit(k.value))
            if not ce.is_const(flag) and not isinstance(flag, (bool, int)):
                raise self.error(k.value, "disable_licm must be a compile-time bool")
            return bool(flag)
        return False

    def _while_test(self, test):
        """The expression a ``while`` tests: ``c`` of ``tl.condition(c, disable_licm=...)``
        (Triton 3.6; ``disable_licm`` becomes the ``scf.while``'s ``llvm.loop_annotation``)."""
        if isinstance(test, ast.Call) and isinstance(test.func, (ast.Attribute, ast.Name)):
            try:
                fn = self.visit(test.func)
            except CompilationError:
                return test
            if fn is loops.condition:
                if len(test.args) != 1 or any(k.arg != "disable_licm" for k in test.keywords):
                    raise self.error(test, "tl.condition takes the loop test and "
                                     "disable_licm=: tl.condition(i < n, disable_licm=True)")
                return test.args[0]
        return test

