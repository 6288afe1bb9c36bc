"""``workbench.compile``: compile one specialisation ahead of time, like Triton's
``triton.compile`` / ``kernel.warmup``.
"""
from __future__ import annotations

from ..config import Target
from ..errors import user_facing
from ..language.core import constexpr as tl_constexpr
from .astsource import ASTSource
from .binding import bind_arguments, launch_error, specialize
from .compiled import CompiledKernel
from .compiler import is_signature_tuple, parse_signature_entry, split_options
from .jit import JITFunction, jit
from .specialization import ArgSpec, Specialization


@user_facing
def compile(fn, *signature_or_example_args, target=None, num_warps: int = 4,
            num_stages: int = 3, keep_snapshots: bool = False, options: dict | None = None,
            **constexprs) -> CompiledKernel:
    """Compile one specialisation of kernel ``fn`` (a ``@jit`` function or a plain one).

    Positional entries, one per non-constexpr parameter in order: an example value (an array,
    int, float, bool: specialised as a launch would) or a Triton signature string (``"*fp32"``,
    ``"i32"``, ``"*fp16:16"``; a tuple parameter's entry is a tuple of those, compile-time
    values standing for constexpr elements: see :func:`parse_signature_entry`) or
    ``tl.constexpr(value)``, which bakes that value into the kernel as Triton does for a
    parameter typed ``"constexpr"`` in an ``ASTSource`` signature (``stride_ak=1``). Keywords:
    the constexpr values, ``target`` (``"cpu"``, the default, ``"cuda:80"``, ``"cuda:90"``,
    ``"interpreter"``), ``num_warps``, ``num_stages``, other :class:`Options` fields, and
    ``keep_snapshots`` (keep the IR after every pass in ``.snapshots``). Triton's form
    ``compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", 90, 32),
    options={"num_warps": 8})`` is accepted too, ``target`` and ``options`` also positional;
    there no target means the active driver's (:func:`active_target`), as in Triton.
    ``WORKBENCH_BOUNDS_CHECK``/``WORKBENCH_DEBUG`` apply. A ``@jit`` function's in-memory
    cache is used and filled.
    Raises LaunchError (wrong entries), TargetError (unknown target, listing the valid ones),
    CompilationError (bad kernel)."""
    if isinstance(fn, ASTSource):  # Triton's triton.compile(ASTSource(...), target, options)
        extra = list(signature_or_example_args)
        if extra and target is None:
            target = extra.pop(0)
        if extra and options is None:
            options = extra.pop(0)
        if extra:
            raise TypeError("compile(ASTSource(...), target=None, options=None) takes at most "
                            f"2 more positional arguments, not {len(signature_or_example_args)}")
        return _compile_source(fn, target, options)
    jf = fn if isinstance(fn, JITFunction) else jit(fn)
    target = Target.parse("cpu" if target is None else str(target))
    params = jf.params
    names = {p.name for p in params}
    given = dict(constexprs, **(options or {}))
    given.setdefault("num_warps", num_warps)
    given.setdefault("num_stages", num_stages)
    kw, opts = split_options(jf.fn, given, names, jf.base_options())
    runtime_params = [p for p in params if not p.constexpr]
    entries = list(signature_or_example_args)
    if len(entries) != len(runtime_params):
        listed = ", ".join(p.name for p in runtime_params)
        raise launch_error(jf.fn, f"compile() needs {len(runtime_params)} signature entries or "
                                  f"example values, one per non-constexpr parameter ({listed}); "
                                  f"got {len(entries)}",
                           "Give constexprs as keywords, e.g. BLOCK=1024.")
    stated = {}
    values = dict(kw)
    for p, e in zip(runtime_params, entries, strict=True):
        if isinstance(e, tl_constexpr):
            stated[p.name] = ArgSpec(p.name, "constexpr", "constexpr", value=e.value)
            values[p.name] = e.value
        elif isinstance(e, str) or is_signature_tuple(e):
            try:
                stated[p.name] = parse_signature_entry(p.name, e)
            except ValueError as err:
                raise launch_error(jf.fn, f"signature entry for '{p.name}': {err}",
                                   param=p.name) from None
            values[p.name] = 0  # placeholder, replaced by the stated ArgSpec below
        else:
            values[p.name] = e
    bound_values = bind_arguments(jf.fn, params, (), values)
    bound = specialize(jf.fn, params, bound_values, jf.no_specialize_names(),
                       jf.no_align_names())
    spec = Specialization(tuple(stated.get(a.name, a) for a in bound.spec.args))
    return jf.compile_for(spec, opts, target, keep_snapshots)


def _compile_source(src: ASTSource, target, options: dict | None) -> CompiledKernel:
    jf = src.fn if isinstance(src.fn, JITFunction) else jit(src.fn)
    try:
        entries, consts = src.arguments(jf.params)
    except KeyError as e:
        raise launch_error(jf.fn, str(e.args[0]), "give every parameter a type or a constexpr "
                           "value") from None
    return compile(jf, *entries, target=active_target() if target is None else str(target),
                   options=options, **consts)


def active_target() -> str:
    """The target ``triton.compile`` compiles for when given none: as in Triton, the active
    driver's (:func:`workbench.runtime.driver.driver`), ``"cuda:90"`` on an H100/H200 when
    launches go to the GPU; ``"cpu"`` on a machine without one or under
    ``WORKBENCH_INTERPRET``."""
    from .driver import driver
    t = driver.active.get_current_target()
    return f"cuda:{t.arch}" if t.backend == "cuda" else "cpu"
