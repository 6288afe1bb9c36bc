"""``@jit(noinline=True)`` helpers: compiled once per specialisation into a private
``tt.func`` of the module and reached by ``tt.call``, as Triton 3.6 does
(``CodeGenerator.call_JitFunction``)::

    %1 = tt.call @__main__.helper__fp32_fp32__(%a, %a) : (f32, f32) -> f32
    ...
    tt.func private @__main__.helper__fp32_fp32__(%a: f32, %b: f32) -> f32
        attributes {noinline = true} { ... }

The callee's name is Triton's mangling: ``module.qualname__<argument types>__<constants>``.
Triton refuses a tile argument to a noinline helper when compiling for a GPU; so do we on
``cuda`` targets, while the host targets inline the call (what Triton's interpreter does: it
runs the helper as a Python call).
"""
from __future__ import annotations

import inspect

from ..errors import UnsupportedError
from ..ir import types as irt
from ..ir.core import Operation
from ..language import dtypes as dt
from ..language.core import tensor
from ..language.target_info import current_target
from . import carry
from . import constexpr as ce
from .scopes import Scope


def _mangle_type(d) -> str:
    """Triton's ``dtype.mangle()``: ``fp32``, ``bf16``, ``i32``, ``u8``, ``u1``, ``Pfp16``."""
    return d.mangle()


def _mangle_const(v) -> str:
    """Triton's spelling of a constant argument: ``repr(constexpr(v))`` (``constexpr[3]``,
    ``constexpr[2.0]``) with the characters LLVM names refuse replaced."""
    text = f"constexpr[{str(v) if isinstance(v, dt.dtype) else repr(v)}]"
    return text.replace(".", "_d_").replace("'", "_sq_").replace("[", "_").replace("]", "_")


def _module_of(gen) -> Operation:
    """The module being generated (the builder's block may be an ``if`` branch not yet
    attached to its op, so the frontend records it on the Semantic)."""
    module = getattr(gen.sem, "module", None)
    if module is None:
        raise UnsupportedError("noinline helpers need a module to hold their functions", None)
    return module


def wants_call(gen, fn, args, kws, node) -> bool:
    """Whether the call of ``fn`` at ``node`` becomes a ``tt.call``: ``fn`` is noinline and
    its runtime arguments are scalars. Raises Triton's UnsupportedError for a tile argument on
    a CUDA target."""
    if not getattr(fn, "noinline", False):
        return False
    values = list(args) + list(kws.values())
    if any(carry.is_runtime(v) and not isinstance(ce.unwrap(v), tensor) for v in values):
        return False  # tuples and descriptors: inlined
    tiles = [ce.unwrap(v) for v in values
             if isinstance(ce.unwrap(v), tensor) and ce.unwrap(v).numel != 1]
    if not tiles:
        return True
    target = current_target()
    if target is not None and target.backend == "cuda":
        raise gen.error(node, f"Function {fn.fn.__name__} is marked noinline, but was called "
                        f"with non-scalar argument {tiles[0]!r}",
                        "pass scalars, or drop noinline (Triton's interpreter alone accepts "
                        "tiles here)", UnsupportedError)
    return False


def call_noinline(gen, fn, args, kws, node):
    """Emit ``tt.call`` of the private function compiled from ``fn`` for these arguments
    (compiling it first if the module lacks it); returns its results as the helper's value."""
    sig = inspect.signature(fn.fn)
    try:
        bound = sig.bind(*args, **kws)
    except TypeError as e:
        raise gen.error(node, f"bad arguments to {fn.fn.__name__}(): {e}") from None
    bound.apply_defaults()
    values = {k: ce.unwrap(v) for k, v in bound.arguments.items()}
    runtime = [k for k, v in values.items() if isinstance(v, tensor)]
    consts = {i: v for i, (k, v) in enumerate(values.items()) if k not in runtime}
    name = f"{fn.fn.__module__}.{fn.fn.__qualname__}__" + \
        "_".join(_mangle_type(values[k].dtype) for k in runtime) + "__" + \
        "_".join(f"({i},)c{_mangle_const(v)}" for i, v in consts.items())
    module = _module_of(gen)
    cache = module.__dict__.setdefault("_wb_noinline", {})
    if name not in cache:
        cache[name] = _compile_callee(gen, fn, values, runtime, name, module, node)
    ret_template = cache[name]
    func = next(o for o in module.regions[0].block.ops
                if o.name == "tt.func" and o.attributes["sym_name"] == name)
    results = list(func.attributes["function_type"].results)
    call = gen.builder.create("tt.call", [values[k].handle for k in runtime], results,
                              {"callee": name}, loc=gen.loc_of(node, name=False))
    if ret_template is None:
        return None
    leaves = [tensor(r, t.dtype, t.shape, gen.sem)
              for r, t in zip(call.results, carry.flatten(ret_template), strict=True)]
    return carry.unflatten(ret_template, leaves)


def _compile_callee(gen, fn, values, runtime, name, module, node):
    """Add ``tt.func private @name`` with the body of ``fn`` to ``module``; returns the
    helper's return value in the callee (the template of the call's results)."""
    from .source import KernelSource
    src = getattr(fn, "src", None) or KernelSource.from_function(fn.fn)
    tree = src.tree()
    loc = src.loc(tree.lineno, tree.col_offset)
    types = [values[k].handle.type for k in runtime]
    func = Operation("tt.func", [], [], {
        "sym_name": name, "function_type": irt.FunctionType(tuple(types), ()),
        "arg_attrs": [{} for _ in types], "arg_names": list(runtime),
        "visibility": "private", "noinline": True}, regions=1, loc=loc)
    module.regions[0].block.append(func)
    block = func.regions[0].add_block(types)
    scope_values = dict(values)
    for k, arg in zip(runtime, block.args, strict=True):
        arg.name = k
        scope_values[k] = tensor(arg, values[k].dtype, values[k].shape, gen.sem)
    with gen.builder.at_end_of(block), gen.builder.at_loc(loc):
        sub = type(gen)(src, gen.builder, gen.sem, gen.options, Scope(src, scope_values),
                        caller=None, depth=gen.depth + 1, runtime_depth=0)
        sub.in_noinline = True
        sub.visit_stmts(tree.body)
        ret = sub.ret
        if ret is not None and not carry.is_runtime(ret):
            ret = gen.sem.to_tensor(ce.unwrap(ret))
        leaves = carry.flatten(ret) if ret is not None else []
        gen.builder.create("tt.return", [t.handle for t in leaves], [],
                           loc=sub.last_loc or loc)
    func.attributes["function_type"] = irt.FunctionType(
        tuple(types), tuple(t.handle.type for t in leaves))
    return ret


__all__ = ["wants_call", "call_noinline"]
