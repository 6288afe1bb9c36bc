"""Control flow (a mixin of :class:`CodeGenerator`): ``if`` on compile-time conditions (the
dead branch is never compiled) or runtime scalars (``scf.if``), and ``for`` over
``tl.static_range`` (unrolled) or ``range``/``tl.range`` (``scf.for`` with loop-carried
values), following reference §1.13."""
from __future__ import annotations

import ast
import builtins

from ..errors import UnsupportedError
from ..ir.core import Block
from ..language import dtypes as dt
from ..language import loops
from ..language.core import tensor
from ..language.semantic import integer_promote, ir_type
from . import constexpr as ce


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


def discard_block(block: Block) -> None:
    """Drop every use the ops of a detached ``block`` hold (a dry run's scratch IR)."""
    for op in reversed(block.ops):
        for region in op.regions:
            for b in region.blocks:
                discard_block(b)
        op.drop_operands()
    block.ops = []


def _same_type(a: tensor, b: tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape


def _type_text(v) -> str:
    return repr(v) if isinstance(v, tensor) else f"{type(v).__name__} {v!r}"


class ControlFlowMixin:
    """``visit_If`` and ``visit_For``."""

    # if --------------------------------------------------------------------------------------
    def visit_If(self, node):
        cond = ce.unwrap(self.visit(node.test))
        if ce.is_const(cond):
            self.visit_stmts(node.body if cond else node.orelse)
            return
        self.runtime_if(node, cond)

    def _branch(self, stmts, scope):
        block = Block()
        saved_scope, saved_block = self.scope, (self.builder.block, self.builder.index)
        self.scope = scope.copy()
        self.builder.set_insertion_point_to_end(block)
        self.runtime_depth += 1
        try:
            self.visit_stmts(stmts)
            return block, self.scope
        finally:
            self.runtime_depth -= 1
            self.scope = saved_scope
            self.builder.block, self.builder.index = saved_block

    def runtime_if(self, node, cond):
        sem = self.sem
        cond = sem.to_tensor(cond)
        if cond.shape:
            raise self.error(node.test, f"if condition must be a scalar, got a tile of shape "
                             f"{list(cond.shape)}", "use tl.where(cond, a, b) to choose "
                             "elementwise")
        cond = sem.cast(cond, dt.int1)
        before = self.scope.values
        then_block, then_scope = self._branch(node.body, self.scope)
        else_block, else_scope = self._branch(node.orelse, self.scope)
        names, yields = [], ([], [])
        for name in assigned_names(node.body + node.orelse):
            a = then_scope.values.get(name)
            b = else_scope.values.get(name)
            if name not in then_scope.values or name not in else_scope.values:
                continue  # defined in one branch only: not visible after the if
            a, b = ce.unwrap(a), ce.unwrap(b)
            if ce.is_const(a) and ce.is_const(b):
                if a is b or (type(a) is type(b) and a == b):
                    self.scope.values[name] = a
                    continue
            if not isinstance(a, tensor) and not isinstance(b, tensor) and (
                    not isinstance(a, (int, float)) or not isinstance(b, (int, float))):
                raise self.error(node, f"{name!r} gets different compile-time values in the "
                                 "branches of a runtime if", None, UnsupportedError)
            a = self._materialize(a, then_block, b)
            b = self._materialize(b, else_block, a)
            if not _same_type(a, b):
                raise self.error(node, f"mismatched type for {name!r} between the then block "
                                 f"({a!r}) and the else block ({b!r})",
                                 "make both branches produce the same dtype and shape")
            names.append((name, a))
            yields[0].append(a.handle)
            yields[1].append(b.handle)
        for block, ys in ((then_block, yields[0]), (else_block, yields[1])):
            with self.builder.at_end_of(block):
                self.builder.create("scf.yield", ys, [])
        op = self.builder.create("scf.if", [cond.handle], [v.handle.type for _, v in names],
                                 regions=2)
        for region, block in zip(op.regions, (then_block, else_block)):
            region.blocks.append(block)
            block.parent = region
        for (name, v), r in zip(names, op.results):
            r.name = name
            self.scope.values[name] = sem.wrap(r, v.dtype, v.shape)
        del before

    def _materialize(self, v, block, other):
        """A compile-time number as a tensor (typed like ``other`` when it is one) at the end
        of ``block``."""
        if isinstance(v, tensor):
            return v
        with self.builder.at_end_of(block):
            if isinstance(other, tensor):
                return self.sem.cast(self.sem.to_tensor(v), other.dtype)
            return self.sem.to_tensor(v)

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
        for v in values:
            self.scope.values[node.target.id] = v
            self.visit_stmts(node.body)
            if self.returned:
                break

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
        if reverse:  # iterate t = 0, s, 2s... < start - end; iv = start - t
            start = lb
            lb, ub = sem.constant(0, iv_type), sem.sub(lb, ub)
        target = node.target.id
        carried = {}  # name -> initial value (tensor, or a number turned into one)
        for name in assigned_names(node.body):
            if name != target and name in self.scope.values:
                v = ce.unwrap(self.scope.values[name])
                if isinstance(v, tensor):
                    carried[name] = v
        quiet = self.sem.quiet
        while True:
            block, body_scope, promote = self._for_body(node, iv_type, carried,
                                                        start if reverse else None)
            if not promote:
                break
            discard_block(block)
            self.sem.quiet = True  # the retry compiles the body again: print once
            for name in promote:
                carried[name] = sem.to_tensor(ce.unwrap(self.scope.values[name]))
        self.sem.quiet = quiet
        yields = []
        for name, init in carried.items():
            v = body_scope.values[name]
            if not isinstance(v, tensor) or not _same_type(v, init):
                raise self.error(node, f"loop-carried variable {name!r} has initial type "
                                 f"{_type_text(init)} but is re-assigned to {_type_text(v)} "
                                 "in the loop",
                                 "keep its type the same: initialise it with tl.zeros(shape, "
                                 "dtype) or tl.full of the final dtype and shape")
            yields.append(v.handle)
        with self.builder.at_end_of(block):
            self.builder.create("scf.yield", yields, [])
        attrs = {}
        if getattr(r, "num_stages", None) is not None:
            attrs["tt.num_stages"] = int(r.num_stages)
        if getattr(r, "loop_unroll_factor", None) is not None:
            attrs["tt.loop_unroll_factor"] = int(r.loop_unroll_factor)
        op = self.builder.create("scf.for", [lb.handle, ub.handle, step.handle] +
                                 [v.handle for v in carried.values()],
                                 [v.handle.type for v in carried.values()], attrs, regions=1)
        op.regions[0].blocks.append(block)
        block.parent = op.regions[0]
        for (name, init), res in zip(carried.items(), op.results):
            res.name = name
            self.scope.values[name] = sem.wrap(res, init.dtype, init.shape)

    def _for_body(self, node, iv_type, carried, reverse_start):
        """Compile the loop body once into a detached block. Returns ``(block, scope,
        promote)`` where ``promote`` lists compile-time variables the body turns into
        runtime values (they must be carried: the caller retries)."""
        sem = self.sem
        types = [ir_type(iv_type)] + [ir_type(v.dtype, v.shape) for v in carried.values()]
        block = Block(types)
        block.args[0].name = node.target.id
        scope = self.scope.copy()
        for (name, init), arg in zip(carried.items(), block.args[1:]):
            arg.name = name
            scope.values[name] = sem.wrap(arg, init.dtype, init.shape)
        saved_scope, saved_ip = self.scope, (self.builder.block, self.builder.index)
        self.scope = scope
        self.builder.set_insertion_point_to_end(block)
        self.runtime_depth += 1
        try:
            iv = sem.wrap(block.args[0], iv_type)
            if reverse_start is not None:
                iv = sem.sub(reverse_start, iv)
            scope.values[node.target.id] = iv
            self.visit_stmts(node.body)
        finally:
            self.runtime_depth -= 1
            self.scope = saved_scope
            self.builder.block, self.builder.index = saved_ip
        promote = []
        for name in assigned_names(node.body):
            if name in carried or name == node.target.id or name not in saved_scope.values:
                continue
            before = ce.unwrap(saved_scope.values[name])
            after = ce.unwrap(scope.values.get(name))
            if isinstance(before, tensor):
                continue
            if isinstance(after, tensor) or not (after is before or after == before):
                if not isinstance(before, (int, float)):
                    raise self.error(node, f"{name!r} is a compile-time {type(before).__name__}"
                                     " that the loop changes", "make it a tensor before the "
                                     "loop", UnsupportedError)
                promote.append(name)
        return block, scope, promote
