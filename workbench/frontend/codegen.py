"""The AST visitor: compiles a kernel's Python AST to ttir without running it.

Statements are handled here; expressions, calls and control flow live in mixins
(``expressions.py``, ``calls.py``, ``control.py``). Every op gets the Location of the
expression that created it (1-based column = ``col_offset + 1``), named after the variable
being assigned, as Triton names its values (``%offs``, ``%mask``).
"""
from __future__ import annotations

import ast

from ..errors import CompilationError, UnsupportedError, language_frames
from ..ir.builder import Builder
from ..ir.core import Location
from ..language.core import LanguageError, tensor
from . import constexpr as ce
from .calls import CallsMixin
from .control import RETURN_IN_LOOP, ControlFlowMixin
from .expressions import ExpressionsMixin
from .loops import LoopsMixin

_UNSUPPORTED_STMTS = {
    ast.Try: ("try/except is not supported inside a kernel",
              "check conditions with tl.static_assert or masks instead"),
    ast.With: ("with statements are not supported inside a kernel", None),
    ast.AsyncWith: ("async with is not supported inside a kernel", None),
    ast.AsyncFor: ("async for is not supported inside a kernel", None),
    ast.Break: ("break is not supported (Triton 3.6 does not support it either)",
                "restructure the loop: compute the trip count up front, or mask the work"),
    ast.Continue: ("continue is not supported (Triton 3.6 does not support it either)",
                   "wrap the rest of the loop body in an if"),
    ast.Raise: ("raise is not supported inside a kernel", "use tl.static_assert"),
    ast.Delete: ("del is not supported inside a kernel", None),
    ast.Global: ("global is not supported inside a kernel", None),
    ast.Nonlocal: ("nonlocal is not supported inside a kernel", None),
    ast.Import: ("import is not supported inside a kernel", "import at module level"),
    ast.ImportFrom: ("import is not supported inside a kernel", "import at module level"),
    ast.FunctionDef: ("nested functions are not supported inside a kernel",
                      "define a @jit helper at module level"),
    ast.AsyncFunctionDef: ("nested functions are not supported inside a kernel", None),
    ast.ClassDef: ("classes are not supported inside a kernel", None),
}
if hasattr(ast, "TryStar"):
    _UNSUPPORTED_STMTS[ast.TryStar] = _UNSUPPORTED_STMTS[ast.Try]
if hasattr(ast, "Match"):
    _UNSUPPORTED_STMTS[ast.Match] = ("match statements are not supported inside a kernel",
                                     "use if/else")


def _single_result(v) -> bool:
    op = v.defining_op
    return op is None or len(op.results) == 1


class NamingBuilder(Builder):
    """A Builder that names op results after the variable being assigned (the name of the
    current location), as Triton does; scalar constants keep their printer names
    (``%c1024_i32``)."""

    def create(self, name, operands=(), result_types=(), attributes=None, regions=0, loc=None,
               result_name=None):
        op = super().create(name, operands, result_types, attributes, regions, loc, result_name)
        base = (loc or self.loc).name
        if result_name is None and base and not (
                name == "arith.constant" and not getattr(op.results[0].type, "is_tensor", False)):
            for r in op.results:
                r.name = base
        return op


class CodeGenerator(ExpressionsMixin, CallsMixin, ControlFlowMixin, LoopsMixin,
                    ast.NodeVisitor):
    """Compiles one function body (the kernel, or an inlined @jit helper) with ``builder``.

    ``scope``: the function's locals; ``caller``: the call-site Location for an inlined
    helper (None for the kernel); ``outer_name``: the caller's assignment target, used to name
    the ops of the helper's return expression."""

    def __init__(self, src, builder, sem, options, scope, caller=None, depth=0,
                 outer_name=None, runtime_depth=0):
        self.src, self.builder, self.sem, self.options = src, builder, sem, options
        self.scope = scope
        self.caller = caller
        self.depth = depth
        self.outer_name = outer_name
        self.target_name = None
        self.runtime_depth = runtime_depth
        self.loop_depth = 0  # runtime loops (scf.for / scf.while) around the statement
        self.unrolled_depth = 0  # tl.static_range loops around the statement
        self.continuation = []  # statements that run after the current statement list
        self.ret = None
        self.returned = False
        self.last_loc = None
        self.in_noinline = False  # the body of a noinline helper (it may return values)

    # locations and errors ------------------------------------------------------------------
    def loc_of(self, node, name=True) -> Location:
        loc = self.src.loc(node.lineno, node.col_offset, self.target_name if name else None)
        return loc.with_caller(self.caller) if self.caller is not None else loc

    def error(self, node, message, hint=None, cls=CompilationError) -> CompilationError:
        """A CompilationError at ``node`` with a caret under it (its whole extent on one
        line)."""
        loc = self.src.loc(node.lineno, node.col_offset)
        end = None
        if getattr(node, "end_lineno", None) == node.lineno and node.end_col_offset is not None:
            end = node.end_col_offset + 1 + self.src.col_offset
        if self.caller is not None:
            loc = loc.with_caller(self.caller)
        at = None
        if self.src._tree is not None:  # Triton counts lines from the def, columns from 0
            at = (node.lineno - self.src._tree.lineno + 1, node.col_offset, self.src.name)
        return cls(message, loc, hint, end_col=end, at=at)

    def visit(self, node):
        if not hasattr(node, "lineno"):
            return super().visit(node)
        saved = self.builder.loc
        self.builder.loc = self.loc_of(node)
        try:
            return super().visit(node)
        except LanguageError as e:
            err = self.error(node, e.message, e.hint, e.error_class)
            if e.error_class is CompilationError:  # chained as Triton chains it: the
                err.__cause__ = language_frames(e)  # frames of the tl builtin that raised
            err.__suppress_context__ = True
            raise err  # noqa: B904 - the cause is set above
        except CompilationError as e:
            if e.loc is not None:
                raise
            # raised where no line was known (a dtype refusing to lower): give it this one,
            # with its cause (Triton's own exception) if it has one
            err = self.error(node, e.reason, e.hint, type(e))
            err.__cause__ = e.__cause__
            err.__suppress_context__ = True
            raise err  # noqa: B904 - the cause is set above
        except RecursionError:
            raise self.error(node, "expression nests too deeply") from None
        finally:
            self.builder.loc = saved

    def generic_visit(self, node):
        entry = _UNSUPPORTED_STMTS.get(type(node))
        if entry is not None:
            raise self.error(node, entry[0], entry[1], UnsupportedError)
        raise self.error(node, f"{type(node).__name__} is not supported inside a kernel", None,
                         UnsupportedError)

    # statements ------------------------------------------------------------------------------
    def visit_stmts(self, stmts) -> None:
        """Compile ``stmts`` in order, stopping after a ``return``. While a statement is
        compiled, ``self.continuation`` holds what runs after it (for early returns)."""
        outer = self.continuation
        try:
            for i, s in enumerate(stmts):
                self.last_loc = self.loc_of(s, name=False)
                self.continuation = list(stmts[i + 1:]) + list(outer)
                self.visit(s)
                if self.returned:
                    break
        finally:
            self.continuation = outer

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self.target_name = None
        if isinstance(node.value, ast.IfExp):
            # ``a() if c else b()`` as a statement: only the chosen side runs (its stores),
            # as Triton's scf.if; the same as ``if c: a() else: b()``
            e = node.value
            body, orelse = ast.Expr(value=e.body), ast.Expr(value=e.orelse)
            stmt = ast.If(test=e.test, body=[ast.copy_location(body, e.body)],
                          orelse=[ast.copy_location(orelse, e.orelse)])
            self.visit_If(ast.copy_location(stmt, node))
            return
        if isinstance(node.value, ast.Call):
            node.value._wb_unused = True  # type: ignore[attr-defined]  # see calls.visit_Call
        self.visit(node.value)

    def visit_Pass(self, node):
        return None

    def _single_name(self, target):
        return target.id if isinstance(target, ast.Name) else None

    def visit_Assign(self, node):
        name = self._single_name(node.targets[0]) if len(node.targets) == 1 else None
        self.target_name = name
        try:
            value = self.visit(node.value)
        finally:
            self.target_name = None
        for t in node.targets:
            self.assign(t, value)
        if name is not None:  # Triton makes a number assigned without annotation a tensor
            plain = ce.unwrap(value)
            if isinstance(plain, (bool, int, float)):
                self.scope.lifted.add(name)
            else:
                self.scope.lifted.discard(name)

    def visit_AnnAssign(self, node):
        ann = ast.unparse(node.annotation)
        if node.value is None:
            raise self.error(node, "a declaration without a value is not supported",
                             "assign a value: X: tl.constexpr = 16", UnsupportedError)
        self.target_name = self._single_name(node.target)
        try:
            value = ce.unwrap(self.visit(node.value))
        finally:
            self.target_name = None
        if ann.endswith("constexpr"):
            if not ce.is_const(value):
                raise self.error(node.value, f"{ann} variable needs a compile-time value, got "
                                 f"{value!r}", "compute it from constexprs only")
            self.assign(node.target, value)
            self.scope.constexpr_locals.add(node.target.id)
            self.scope.lifted.discard(node.target.id)
            return
        self.assign(node.target, value)

    def visit_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            self.assign(node.target, None)  # raises the unsupported-target error
        name = node.target.id
        self.target_name = name
        try:
            binop = ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=node.op,
                              right=node.value)
            ast.copy_location(binop, node)
            binop.left.lineno, binop.left.col_offset = node.target.lineno, node.target.col_offset
            value = self.visit(binop)
        finally:
            self.target_name = None
        self.assign(node.target, value)

    def assign(self, target, value) -> None:
        """Bind ``value`` to an assignment target (a name or a tuple of targets)."""
        if isinstance(target, ast.Name):
            if target.id in self.scope.constexpr_locals:
                raise self.error(target, f"cannot reassign the constexpr {target.id!r}",
                                 "use a new name")
            if isinstance(value, tensor) and value.handle.name is None and \
                    _single_result(value.handle):  # MLIR names no result of a multi-result op
                value.handle.name = target.id
            self.scope.values[target.id] = ce.unwrap(value)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            value = ce.unwrap(value)
            if not isinstance(value, (tuple, list)):
                raise self.error(target, f"cannot unpack {value!r} into "
                                 f"{len(target.elts)} names")
            if len(value) != len(target.elts):
                raise self.error(target, f"cannot unpack {len(value)} values into "
                                 f"{len(target.elts)} names")
            for t, v in zip(target.elts, value, strict=False):
                self.assign(t, v)
            return
        if isinstance(target, ast.Attribute):  # Triton: attribute assignment unsupported
            raise self.error(target, "assigning to an attribute is not supported",
                             "tensors and aggregates are immutable in kernels: build a new "
                             "value instead (e.g. acc = Acc(new_total, acc.peak))",
                             UnsupportedError)
        what = {ast.Subscript: "an item of a tensor",
                ast.Starred: "a starred target"}.get(type(target), type(target).__name__)
        raise self.error(target, f"assigning to {what} is not supported",
                         "tensors are immutable: compute a new tile (e.g. with tl.where) and "
                         "write memory with tl.store", UnsupportedError)

    def visit_Return(self, node):
        if self.loop_depth > 0:
            raise self.error(node, RETURN_IN_LOOP,
                             "compute a flag and mask the work, or restructure the loop",
                             UnsupportedError)
        if node.value is not None:
            self.target_name = self.outer_name
            try:
                self.ret = self.visit(node.value)
            finally:
                self.target_name = None
        if self.caller is None and self.ret is not None and not self.in_noinline:
            raise self.error(node, "a kernel cannot return a value",
                             "write results to memory with tl.store", UnsupportedError)
        self.returned = True

    def visit_Assert(self, node):
        cond = ce.unwrap(self.visit(node.test))
        msg = ce.unwrap(self.visit(node.msg)) if node.msg is not None else ""
        if ce.is_const(cond):
            if not cond:
                raise self.error(node, f"assertion failed: {msg}" if msg else
                                 "assertion failed")
            return
        if getattr(self.options, "debug", False):
            cond = self.sem.cast(cond, self.sem_int1())
            self.builder.create("tt.assert", [cond.handle], [], {"message": str(msg)})

    def sem_int1(self):
        from ..language import dtypes
        return dtypes.int1
