"""The compile pipeline: source -> ttir -> ttir passes -> the target's backend stages.

:func:`compile_specialization` runs it for one specialisation; :func:`split_options` and
:func:`parse_signature_entry` read launch options and Triton signature strings.
``workbench.compile`` (ahead of time) lives in :mod:`workbench.runtime.aot`.
"""
from __future__ import annotations

import dataclasses
import re
import time

from ..backends.lazy import LazyText, StageMap
from ..config import CompileContext, Options, Target
from ..errors import LaunchOptionError
from ..ir.core import Location
from ..ir.printer import print_module_with_map
from .binding import launch_error
from .compiled import CompiledKernel
from .gc_pause import gc_paused
from .specialization import SHORT_TO_NUMPY, ArgSpec, Specialization, tuple_spec

OPTION_NAMES = tuple(f.name for f in dataclasses.fields(Options))
#: Triton launch options of other targets or of features the workbench does not model
#: (cooperative grids on CUDA; AMD's waves per EU, MFMA shape, k-pack): accepted so
#: Triton's scripts run, and without effect
IGNORED_OPTIONS = frozenset({"launch_cooperative_grid",
                             "waves_per_eu", "matrix_instr_nonkdim", "kpack"})

_SIG = re.compile(r"^\s*(\*?)([a-z][a-z0-9]*)((?::\d+)*)\s*$")


def is_signature_tuple(entry) -> bool:
    """Whether ``entry`` is a tuple signature entry: a (nested) tuple whose leaves are
    signature strings or compile-time values (None, ints, floats, bools), one string at
    least (a tuple of arrays is an example value instead)."""
    def leaves(e):
        return [x for i in e for x in leaves(i)] if isinstance(e, tuple) else [e]
    if not isinstance(entry, tuple):
        return False
    items = leaves(entry)
    plain = (str, int, float, bool, type(None))
    return any(isinstance(x, str) for x in items) and all(
        isinstance(x, plain) or type(x).__name__ == "constexpr" for x in items)


def parse_signature_entry(name: str, text) -> ArgSpec:
    """The ArgSpec of parameter ``name`` stated by a Triton signature string, or by a tuple
    entry (:func:`is_signature_tuple`): each string element is parsed as below, each other
    element is a constexpr element of that value (``("*fp32:16", "i32", None)``).

    ``"tensordesc<fp16[64, 64]>"`` is a host tensor descriptor of that element type and block
    shape (Triton's form).
    ``"*fp32"`` (a pointer), ``"i32"``, ``"i64"``, ``"u64"``, ``"fp32"``, ``"i1"``...; a
    ``":16"`` suffix states divisibility by 16 (``"*fp16:16"``, ``"i32:16"``), ``":1"`` the
    value 1 (as :meth:`Specialization.signature_text` prints it); no suffix states nothing.
    Raises ValueError for anything else."""
    if isinstance(text, tuple):
        return tuple_spec(name, tuple, [
            parse_signature_entry(name, e) if isinstance(e, (str, tuple)) else
            ArgSpec(name, "constexpr", "constexpr", value=getattr(e, "value", e))
            for e in text])
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a signature entry")
    if text.strip().startswith("tensordesc<"):  # a host tensor descriptor, Triton's form
        from ..language.descriptors import parse_desc_type
        element, block = parse_desc_type(text)
        if element.is_ptr() or getattr(element, "name", "") == "void":
            raise ValueError(f"{text!r}: a descriptor's element type must be a scalar type")
        return ArgSpec(name, "tensordesc",
                       f"tensordesc<{text.strip()[11:].split('[')[0].strip()}"
                       f"[{', '.join(str(b) for b in block)}]>")
    m = _SIG.match(text)
    if not m or m.group(2) not in SHORT_TO_NUMPY:
        raise ValueError(f"{text!r} is not a signature entry; use e.g. '*fp32', '*fp16:16', "
                         f"'i32', 'i32:16', 'i64', 'fp32' (types: "
                         f"{', '.join(SHORT_TO_NUMPY)})")
    star, typ, suffix = m.groups()
    hints = {int(h) for h in suffix.split(":") if h}
    if hints - {1, 16} or (hints and typ.startswith("fp") and not star):
        raise ValueError(f"{text!r}: only ':16' (divisible by 16) and ':1' (equal to 1) hints "
                         "exist, and only for pointers and ints")
    if star:
        if 1 in hints:
            raise ValueError(f"{text!r}: a pointer cannot be specialised to 1")
        return ArgSpec(name, "pointer", "*" + typ, 16 in hints)
    if 1 in hints:
        return ArgSpec(name, "scalar", typ, False, True, 1)
    return ArgSpec(name, "scalar", typ, 16 in hints)


def compile_specialization(jit_fn, spec: Specialization, options: Options, target,
                           keep_snapshots: bool = False) -> CompiledKernel:
    """Run the whole pipeline for one specialisation.

    Steps (each timed into ``timings`` in seconds: ``frontend``, ``ttir_passes``,
    ``backend``, ``total``; the pass manager and backend may add finer entries), with
    Python's cyclic garbage collector paused (:mod:`workbench.runtime.gc_pause`):
    ``workbench.frontend.generate_ttir(src, spec, options)``, the ttir pipeline of
    ``workbench.passes.pipelines.ttir_passes(options)`` run by ``PassManager``, then
    ``get_backend(target).compile(ttir, spec, options, ctx)``.
    Raises CompilationError/UnsupportedError (bad kernel), TargetError (target unavailable)."""
    from ..backends.registry import get_backend
    from ..frontend import generate_ttir
    from ..language.target_info import compiling_for
    from ..passes.manager import PassManager
    from ..passes.pipelines import ttir_passes

    target = Target.parse(target)
    backend = get_backend(target)
    src = jit_fn.src
    name = jit_fn.kernel_name(spec) if hasattr(jit_fn, "kernel_name") else src.name
    if name != src.name:  # @jit(repr=...): the compiled function's name
        src = dataclasses.replace(src, name=name)
    ctx = CompileContext(keep_snapshots=keep_snapshots)
    t_start = t0 = time.perf_counter()
    with gc_paused():  # the compile's garbage is collected once, after it, not 100s of times
        with compiling_for(target):  # tl.target_info answers for this target
            module = generate_ttir(src, spec, options)
        t1 = time.perf_counter()
        ctx.timings["frontend"] = t1 - t0
        module = PassManager(ttir_passes(options)).run(module, ctx, "ttir") or module
        t2 = time.perf_counter()
        ctx.timings["ttir_passes"] = t2 - t1
        ttir_text, ttir_locs = print_module_with_map(module, True)
        result = backend.compile(module, spec, options, ctx)
    t3 = time.perf_counter()
    ctx.timings["backend"] = t3 - t2
    ctx.timings["total"] = t3 - t_start

    source_lines = src.text.splitlines()
    first = int(getattr(src, "first_line", 1))
    asm = {"source": src.text, "ttir": ttir_text}
    line_maps = {"source": [Location(src.file, first + i, 1) for i in range(len(source_lines))],
                 "ttir": ttir_locs}
    for stage in result.stages:
        asm[stage.name] = stage.text
        line_maps[stage.name] = stage.text if isinstance(stage.text, LazyText) else \
            _fit_line_map(stage.line_locs, stage.text)
    return CompiledKernel(fn=jit_fn.fn, params=jit_fn.params, src=src, spec=spec,
                          options=options, target=target, asm=StageMap(asm),
                          line_maps=StageMap(line_maps, 1, _fit_line_map),
                          metadata=result.metadata,
                          launcher=result.launcher, launch_error=result.launch_error,
                          snapshots=ctx.snapshots, timings=ctx.timings, extra=result.extra)


def _fit_line_map(locs, text: str) -> list:
    """One entry per line of ``text`` (``str.splitlines``): a map built with
    ``text.split("\\n")`` has one extra entry for the trailing newline, which is dropped; a
    short map is padded with None."""
    n = len(text.splitlines())
    locs = list(locs or [])[:n]
    return locs + [None] * (n - len(locs))


def _check_extern_libs(fn, libs) -> None:
    """Triton's ``extern_libs={"libdevice": path}`` launch option names the bitcode file that
    ``tl.extra.libdevice`` calls link against. The workbench implements those ``__nv_*``
    functions itself on every backend (:mod:`workbench.codegen.nvptx.libdevice`), so a
    ``libdevice`` entry is accepted and its file is not read; any other library (AMD's
    ``ocml``/``ockl``) has no implementation here. Raises :class:`LaunchError` for those
    and for a value that is not a dict."""
    if libs is None:
        return
    if not isinstance(libs, dict):
        raise launch_error(fn, f"extern_libs must be a dict of library name -> bitcode path, "
                               f"not {type(libs).__name__}", "Pass {'libdevice': path}.")
    other = sorted(str(k) for k in libs if k != "libdevice")
    if other:
        raise launch_error(fn, f"extern_libs names {', '.join(other)}: only 'libdevice' is "
                               "available (the workbench implements its functions itself; "
                               "other bitcode libraries cannot be linked)",
                           "Drop those entries, or call the libdevice function instead.")


def split_options(fn, kwargs: dict, param_names, base: Options) -> tuple[dict, Options]:
    """Separate launch/compile options (the fields of Options: ``num_warps``, ``num_stages``,
    ``num_ctas``, ``enable_fp_fusion``, ``debug``, ``bounds_check``, ...; ``extern_libs`` may
    name only libdevice; :data:`IGNORED_OPTIONS` are dropped) from parameter kwargs; returns
    ``(param_kwargs, options)``. Raises :class:`LaunchOptionError` (a :class:`LaunchError`
    and an ``AssertionError``, as Triton's option checks are asserts) for a bad option value."""
    params, overrides = {}, {}
    for k, v in kwargs.items():
        if k in param_names:
            params[k] = v
        elif k in OPTION_NAMES:
            overrides[k] = v
        elif k in IGNORED_OPTIONS:
            continue
        elif k == "extern_libs" and k not in param_names:
            _check_extern_libs(fn, v)
        else:
            params[k] = v  # bind_arguments reports the unknown name
    if not overrides:
        return params, base
    try:
        return params, dataclasses.replace(base, **overrides)
    except (ValueError, TypeError) as e:
        raise launch_error(fn, f"bad launch option: {e}", "Fix the option's value.",
                           cls=LaunchOptionError) from None
