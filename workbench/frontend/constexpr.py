"""Compile-time evaluation: Python operators on constexpr values, with Python semantics
(``-7 // 2 == -4``, as Triton's ``language/core.py``'s ``constexpr``)."""
from __future__ import annotations

import ast
import operator

from ..language.core import constexpr, tensor

BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
          ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
          ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
# the Semantic.binary name of each AST operator
BINOP_NAMES = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
               ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.LShift: "lshift",
               ast.RShift: "rshift", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor"}
CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
          ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_,
          ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b,
          ast.NotIn: lambda a, b: a not in b}
CMP_NAMES = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq",
             ast.NotEq: "ne"}
UNARYOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
            ast.Not: operator.not_}


def unwrap(v):
    """The Python value of a constexpr (recursively in tuples); anything else unchanged."""
    if isinstance(v, constexpr):
        return v.value
    return v


def is_const(v) -> bool:
    """Whether ``v`` is known at compile time (anything that is not a tensor, recursively)."""
    if isinstance(v, tensor):
        return False
    if isinstance(v, (tuple, list)):
        return all(is_const(x) for x in v)
    return True
