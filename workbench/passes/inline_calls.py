"""Inline ``tt.call`` of the private ``tt.func`` ops of a module (``@jit(noinline=True)``
helpers) into their callers, for the backends that run one function per kernel: a helper
the backends call on their copy of the ttir, after the ``ttir`` stage is printed (the ttir
keeps Triton's ``tt.call``; Triton keeps the call down to the LLVM level).

Each call is replaced by a copy of the callee's body, its parameters read as the call's
arguments and its results as the values of the callee's ``tt.return``. Functions no call
reaches any more are erased (MLIR's ``symbol-dce``). A helper that calls itself (recursion)
is refused with UnsupportedError.
"""
from __future__ import annotations

from ..errors import UnsupportedError
from ..ir.clone import clone_module, clone_op
from ..ir.core import Operation

MAX_DEPTH = 64


def _inline_one(call: Operation, callee: Operation) -> None:
    body = callee.regions[0].block
    vmap = {id(a): v for a, v in zip(body.args, call.operands, strict=True)}
    block = call.parent
    assert block is not None, "a tt.call outside a block"
    rets: list = []
    for op in body.ops:
        if op.name == "tt.return":
            rets = [vmap.get(id(v), v) for v in op.operands]
            break
        block.insert_before(call, clone_op(op, vmap))
    for r, v in zip(call.results, rets, strict=True):
        r.replace_all_uses_with(v)
    call.erase()


def inline_calls(module: Operation) -> Operation:
    """``module`` with every ``tt.call`` inlined and the private functions removed: a copy
    when it has calls (the caller's module is left as it is), else ``module`` itself.
    Raises UnsupportedError for calls nested deeper than 64 (recursion) or a missing callee."""
    if not any(o.name == "tt.call" for o in module.walk()):
        return module
    module = clone_module(module)
    funcs = {o.attributes.get("sym_name"): o for o in module.regions[0].block.ops
             if o.name == "tt.func"}
    for _ in range(MAX_DEPTH):
        calls = [o for o in module.walk() if o.name == "tt.call"]
        if not calls:
            break
        for call in calls:
            callee = funcs.get(str(call.attributes.get("callee", "")).lstrip("@"))
            if callee is None:
                raise UnsupportedError(f"tt.call of an unknown function "
                                       f"{call.attributes.get('callee')}", call.loc)
            _inline_one(call, callee)
    else:
        raise UnsupportedError("noinline helpers call each other more than 64 deep "
                               "(recursion is not supported)", None)
    for f in funcs.values():
        if f.attributes.get("visibility") == "private":
            f.erase()
    return module


__all__ = ["inline_calls"]
