"""Expression visitors of the code generator (a mixin of :class:`CodeGenerator`).

Compile-time operands are computed in Python (constexpr semantics); anything involving a
tensor goes through :class:`~workbench.language.semantic.Semantic`, which holds the rules.
"""
from __future__ import annotations

import ast

from ..errors import UnsupportedError
from ..language import tuples as ltuples
from ..language.core import tensor
from . import aggregates
from . import constexpr as ce
from .scopes import Undefined

_TENSOR_ATTRS = {"dtype", "shape", "to", "logical_and", "logical_or", "numel", "type"}
# tensor methods Triton offers that forward to a tl builtin
_TENSOR_BUILTIN_METHODS = {"sum", "max", "min", "exp", "exp2", "log", "log2", "sqrt", "rsqrt",
                           "abs", "sigmoid", "reshape", "broadcast_to", "expand_dims", "sin",
                           "cos", "floor", "ceil", "erf", "cdiv", "argmax", "argmin", "xor_sum",
                           "cumsum", "cumprod", "trans", "permute", "reduce",
                           "associative_scan", "ravel", "view", "split", "join", "flip", "sort",
                           "cast", "clamp", "item", "histogram", "topk", "gather",
                           "reduce_or", "softmax", "sqrt_rn", "store", "atomic_add",
                           "atomic_and", "atomic_cas", "atomic_max", "atomic_min",
                           "atomic_or", "atomic_xchg", "atomic_xor", "advance"}


class ExpressionsMixin:
    """``visit_*`` for expressions; needs ``self.sem``, ``self.scope``, ``self.error``."""

    def visit_Constant(self, node):
        return node.value

    def visit_Name(self, node):
        try:
            return self.scope.lookup(node.id)
        except Undefined:
            raise self.error(node, f"name {node.id!r} is not defined",
                             "define it before use, pass it as a parameter, or make it a "
                             "global tl.constexpr") from None
        except ValueError as e:
            raise self.error(node, str(e),
                             f"wrap it: {node.id} = tl.constexpr(...), or pass it as a "
                             "parameter") from None

    def visit_Tuple(self, node):
        return ltuples.tuple(self._visit_elts(node.elts))

    def visit_ListComp(self, node):
        """``[f(v) for v in t]`` over a tuple (or other compile-time sequence), unrolled at
        compile time into a ``tl.tuple``, as Triton allows (one ``for``, no ``if``)."""
        if len(node.generators) != 1 or node.generators[0].ifs or \
                node.generators[0].is_async:
            raise self.error(node, "list comprehensions are not supported inside a kernel "
                             "except [f(v) for v in a_tuple] (one for, no if)",
                             "unroll it with `for i in tl.static_range(...)`",
                             UnsupportedError)
        comp = node.generators[0]
        seq = ce.unwrap(self.visit(comp.iter))
        if not isinstance(seq, (tuple, list)):
            raise self.error(node, "list comprehensions are not supported inside a kernel "
                             "except over a tuple (as in Triton)",
                             "unroll it with `for i in tl.static_range(...)`",
                             UnsupportedError)
        out = []
        for item in seq:
            self.assign(comp.target, item)
            out.append(self.visit(node.elt))
        return ltuples.tuple(out)

    def visit_List(self, node):
        return list(self._visit_elts(node.elts))

    def _visit_elts(self, elts):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.visit(e.value)
                if not isinstance(v, (tuple, list)):
                    raise self.error(e, "only compile-time tuples can be unpacked with *")
                out.extend(v)
            else:
                out.append(self.visit(e))
        return out

    def _tensor_attribute(self, node, obj, attr):
        if attr == "T":
            import workbench.language as tl
            return tl.trans(obj, _semantic=self.sem)
        if attr in _TENSOR_BUILTIN_METHODS:
            import workbench.language as tl
            fn = getattr(tl, attr)
            return _BoundBuiltin(fn, obj)
        if attr not in _TENSOR_ATTRS:
            raise self.error(node, f"tensor has no attribute {attr!r}")
        return getattr(obj, attr)

    def visit_Attribute(self, node):
        obj = self.visit(node.value)
        attr = node.attr
        if isinstance(obj, tensor):
            return self._tensor_attribute(node, obj, attr)
        if attr == "type" and isinstance(node.value, ast.Subscript) and \
                not isinstance(obj, tuple) and ce.is_const(obj):
            return ltuples.type_of(ce.unwrap(obj))  # a tuple's constexpr element
        if attr == "type" and not (isinstance(node.value, ast.Name)
                                   and node.value.id in self.scope.lifted):
            plain = ce.unwrap(obj)
            if plain is None or isinstance(plain, (bool, int, float, str)) or (
                    type(plain) is tuple
                    and all(isinstance(e, (bool, int, float, str)) for e in plain)):
                return ltuples.constexpr_type(plain)  # a constexpr's type, as Triton gives it
        try:
            return getattr(obj, attr)
        except AttributeError:
            plain = ce.unwrap(obj)
            if attr == "value" and ce.is_const(plain):
                # a constexpr parameter arrives as its plain value; Triton's ``BLOCK.value``
                # is that value
                return plain
            if isinstance(plain, (bool, int, float)) and (
                    attr in _TENSOR_ATTRS or attr in _TENSOR_BUILTIN_METHODS or attr == "to"):
                # Triton turns ``acc = 0`` into a scalar tensor, so ``acc.to(tl.int64)`` and
                # ``value.dtype`` work there: a Python number used as a tensor becomes one
                return self._tensor_attribute(node, self.sem.to_tensor(plain), attr)
            what = getattr(obj, "__name__", None) or type(obj).__name__
            raise self.error(node, f"{what!r} has no attribute {attr!r}") from None

    def visit_BinOp(self, node):
        left, right = self.visit(node.left), self.visit(node.right)
        left, right = ce.unwrap(left), ce.unwrap(right)
        op = type(node.op)
        if ce.is_const(left) and ce.is_const(right):
            return self.py_eval(node, ce.BINOPS[op], left, right)
        if isinstance(left, tuple) or isinstance(right, tuple):
            return self._tuple_binop(node, op, left, right)
        if op not in ce.BINOP_NAMES:
            raise self.error(node, f"operator {type(node.op).__name__} is not supported on "
                             "tensors", "use tl.math / libdevice functions (e.g. exp2 for "
                             "powers of two)", UnsupportedError)
        if op is ast.MatMult:
            raise self.error(node, "@ is not supported yet", None, UnsupportedError)
        return self.sem.binary(ce.BINOP_NAMES[op], left, right)

    def _tuple_binop(self, node, op, left, right):
        """``t + u`` (concatenation) and ``t * n`` on tuples holding tensors."""
        if op is ast.Add and isinstance(left, (tuple, list)) and \
                isinstance(right, (tuple, list)):
            return ltuples.tuple(list(left) + list(right))
        if op is ast.Mult and (isinstance(left, int) or isinstance(right, int)):
            return self.py_eval(node, lambda a, b: ltuples.tuple(a * b), left, right)
        raise self.error(node, f"operator {type(node.op).__name__} is not supported between "
                         f"{type(left).__name__} and {type(right).__name__}",
                         "tuples support + (concatenation) and * by an int", UnsupportedError)

    def py_eval(self, node, fn, *args):
        """Run a Python operator on compile-time values; Python errors point at ``node``."""
        try:
            return fn(*args)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError, IndexError,
                KeyError) as e:
            raise self.error(node, f"{type(e).__name__}: {e}") from None

    def visit_UnaryOp(self, node):
        v = ce.unwrap(self.visit(node.operand))
        op = type(node.op)
        if ce.is_const(v):
            return self.py_eval(node, ce.UNARYOPS[op], v)
        if op is ast.USub:
            return self.sem.minus(v)
        if op is ast.UAdd:
            return v
        if op is ast.Invert:
            return self.sem.invert(v)
        return self.sem.logical_not(v)

    def visit_BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        result = ce.unwrap(self.visit(node.values[0]))
        for e in node.values[1:]:
            if ce.is_const(result):
                if bool(result) != is_and:  # short circuit on compile-time values
                    return result
                result = ce.unwrap(self.visit(e))
                continue
            rhs = ce.unwrap(self.visit(e))
            result = self.sem.logical("and" if is_and else "or", result, rhs)
        return result

    def visit_Compare(self, node):
        if len(node.ops) != 1:
            raise self.error(node, "chained comparisons (a < b < c) are not supported",
                             "split it: (a < b) & (b < c)", UnsupportedError)
        left = ce.unwrap(self.visit(node.left))
        right = ce.unwrap(self.visit(node.comparators[0]))
        op = type(node.ops[0])
        if ce.is_const(left) and ce.is_const(right):
            return self.py_eval(node, ce.CMPOPS[op], left, right)
        if op in (ast.Is, ast.IsNot):
            # Triton compares the objects themselves: a tensor is never None, so
            # ``ptr is not None`` is a compile-time True and the branch it guards folds
            return (left is right) == (op is ast.Is)
        if op not in ce.CMP_NAMES:
            raise self.error(node, f"{op.__name__} is not supported on tensors", None,
                             UnsupportedError)
        return self.sem.compare(ce.CMP_NAMES[op], left, right)

    def visit_Subscript(self, node):
        value = ce.unwrap(self.visit(node.value))
        index = self._visit_index(node.slice)
        if isinstance(value, tensor):
            return self.sem.subscript(value, index)
        if aggregates.is_aggregate(value):
            return aggregates.subscript(self, value, index, node)
        if not ce.is_const(index):
            raise self.error(node.slice, "a compile-time sequence can only be indexed with a "
                             "compile-time index")
        return self.py_eval(node, lambda v, i: v[i], value, index)

    def _visit_index(self, node):
        if isinstance(node, ast.Tuple):
            return tuple(self._visit_index(e) for e in node.elts)
        if isinstance(node, ast.Slice):
            parts = [ce.unwrap(self.visit(p)) if p is not None else None
                     for p in (node.lower, node.upper, node.step)]
            return slice(*parts)
        return ce.unwrap(self.visit(node))

    def visit_IfExp(self, node):
        cond = ce.unwrap(self.visit(node.test))
        if ce.is_const(cond):
            return self.visit(node.body if cond else node.orelse)
        a, b = ce.unwrap(self.visit(node.body)), ce.unwrap(self.visit(node.orelse))
        ta, tb = (getattr(v, "dtype", None) for v in (a, b))
        if ta is not None and tb is not None and (ta.is_ptr() or tb.is_ptr()) and ta != tb:
            raise self.error(node, "Ternary expression with dynamic condition has inconsistent "
                             f"type: {ta.short_name} and {tb.short_name}",  # Triton's words
                             "give both sides the same pointer type")
        return self.sem.where(cond, a, b)

    def visit_JoinedStr(self, node):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            else:
                x = ce.unwrap(self.visit(v.value))
                spec = self.visit(v.format_spec) if v.format_spec is not None else ""
                parts.append(format(x, spec) if ce.is_const(x) else repr(x))
        return "".join(parts)

    def _unsupported_expr(self, node):
        what = {ast.ListComp: "list comprehensions", ast.SetComp: "set comprehensions",
                ast.DictComp: "dict comprehensions", ast.GeneratorExp: "generator expressions",
                ast.Lambda: "lambda", ast.NamedExpr: "assignment expressions (:=)",
                ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield",
                ast.Dict: "dict literals", ast.Set: "set literals"}.get(type(node),
                                                                         type(node).__name__)
        hint = ("unroll it with `for i in tl.static_range(...)`" if "compre" in what or
                "generator" in what else "rewrite it with the supported subset (see docs)")
        raise self.error(node, f"{what} are not supported inside a kernel"
                         if what.endswith("s") else f"{what} is not supported inside a kernel",
                         hint, UnsupportedError)

    visit_SetComp = visit_DictComp = visit_GeneratorExp = _unsupported_expr
    visit_Lambda = visit_NamedExpr = visit_Await = visit_Yield = visit_YieldFrom = \
        visit_Dict = visit_Set = _unsupported_expr


class _BoundBuiltin:
    """``x.sum(axis)`` style methods: a tl builtin with the tensor as first argument."""

    __workbench_bound_builtin__ = True

    def __init__(self, fn, obj):
        self.fn, self.obj = fn, obj

    def __call__(self, *args, _semantic=None, **kwargs):
        return self.fn(self.obj, *args, _semantic=_semantic, **kwargs)
