"""The frontend: a kernel's Python AST -> ttir (a ``builtin.module`` with one ``tt.func``).

:func:`generate_ttir` specialises the kernel (constexpr values baked in, ints equal to 1
become the constant 1, ``tt.divisibility = 16`` on arguments divisible by 16), inlines
``@jit`` helpers and emits ops through one builder, every op with its source location.
"""
from __future__ import annotations

from ..config import Options
from ..errors import CompilationError
from ..ir import types as irt
from ..ir.core import Operation, module_op
from ..language import descriptors
from ..language import dtypes as dt
from ..language import tuples as ltuples
from ..language.semantic import Semantic
from .codegen import CodeGenerator, NamingBuilder
from .scopes import Scope
from .source import KernelSource

__all__ = ["generate_ttir", "KernelSource", "CodeGenerator"]


def _param_values(src, spec, block, sem, fn_loc):
    """Scope values of the kernel's parameters, and check the specialisation fits."""
    if len(spec.args) != len(src.params):
        raise CompilationError(
            f"kernel {src.name!r} has {len(src.params)} parameters but the specialisation "
            f"has {len(spec.args)}", fn_loc, "pass one argument per parameter")
    args = iter(block.args)
    return {pname: _param_value(a, args, sem, fn_loc, pname in src.consts)
            for pname, a in zip(src.params, spec.args, strict=False)}


def _param_value(a, args, sem, fn_loc, const: bool = False):
    """The kernel's view of argument spec ``a``, taking its IR values from ``args``: a
    constexpr's value, 1, a tensor, a descriptor, or for a tuple a :class:`tl.tuple
    <workbench.language.tuples.tuple>` (a namedtuple for a namedtuple argument) of its
    elements' values. ``const``: a ``tl.const`` pointer parameter."""
    if a.kind == "tuple":
        items = [_param_value(e, args, sem, fn_loc) for e in a.elements]
        return a.value(*items) if hasattr(a.value, "_fields") else ltuples.tuple(items)
    if a.kind == "constexpr":
        return getattr(a.value, "value", a.value)
    if a.equal_to_1:
        return 1
    if a.kind == "tensordesc":
        n = len(descriptors.param_types(a.type))
        return descriptors.from_params(a.type, [next(args) for _ in range(n)], sem)
    try:
        d = dt.from_short_name(a.type)
    except ValueError as e:
        raise CompilationError(f"parameter {a.name!r}: {e}", fn_loc) from None
    if const and isinstance(d, dt.pointer_type):  # tl.const
        d = dt.pointer_type(d.element_ty, d.address_space, const=True)
    return sem.wrap(next(args), d)


def generate_ttir(src: KernelSource, spec, options: Options | None = None) -> Operation:
    """Compile ``src`` specialised by ``spec`` (a runtime Specialization) to ttir.

    Returns a ``builtin.module`` holding one ``tt.func`` named after the kernel whose
    parameters are the passed arguments (pointers ``!tt.ptr<f32>``, scalars ``i32`` ...).
    Raises :class:`~workbench.errors.CompilationError` (or UnsupportedError) pointing at the
    user's line for any error in the kernel."""
    options = options or Options()
    tree = src.tree()
    fn_loc = src.loc(tree.lineno, tree.col_offset)
    module = module_op(loc=fn_loc)
    passed = spec.passed  # tuple arguments flattened, as Triton's signature flattens them
    types: list = []
    arg_attrs: list = []
    names: list = []
    for a in passed:
        try:
            ts = descriptors.param_types(a.type) if a.kind == "tensordesc" else \
                [dt.from_short_name(a.type).to_ir()]
        except ValueError as e:
            raise CompilationError(f"parameter {a.name!r}: {e}", fn_loc) from None
        except CompilationError as e:  # a type this target does not take (fp8 formats)
            raise CompilationError(f"parameter {a.name!r}: {e.reason}", fn_loc, e.hint,
                                   at=(1, 0, src.name)) from e.__cause__
        types += ts
        arg_attrs += [{"tt.divisibility": 16} if a.divisible_by_16 else {}] + \
            [{} for _ in ts[1:]]
        names += [a.name] * len(ts)
    attrs = {
        "sym_name": src.name,
        "function_type": irt.FunctionType(tuple(types), ()),
        "arg_attrs": arg_attrs,
        "arg_names": names,
    }
    func = Operation("tt.func", [], [], attrs, regions=1, loc=fn_loc)
    module.regions[0].block.append(func)
    block = func.regions[0].add_block(types)
    for arg, name in zip(block.args, names, strict=True):
        arg.name = name
    builder = NamingBuilder(block, loc=fn_loc)
    sem = Semantic(builder)
    sem.debug = bool(options.debug)
    sem.num_warps = options.num_warps  # tl.extra.cuda.num_warps()
    sem.module = module  # type: ignore[assignment]  # where noinline helpers go
    scope = Scope(src, _param_values(src, spec, block, sem, fn_loc))
    gen = CodeGenerator(src, builder, sem, options, scope)
    gen.visit_stmts(tree.body)
    builder.set_insertion_point_to_end(block)
    builder.create("tt.return", [], [], loc=gen.last_loc or fn_loc)
    return module
