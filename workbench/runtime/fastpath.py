"""The launch fast path of ``kernel[grid](*args, **kw)`` for an already compiled kernel.

Triton's approach (``triton/runtime/jit.py``, ``JITFunction.run``): from the raw arguments compute a
specialisation key with minimal work (per parameter a code from
:mod:`workbench.runtime.argkeys`, computed by a binder generated per kernel, plus the launch
options given as keywords and the raw
``WORKBENCH_INTERPRET`` and option variables' strings, :data:`ENV_NAMES`), and look it
up in a dict giving straight the :class:`CompiledKernel` and which arguments it is passed.
Equal keys imply the slow path (bind, specialise, options, target, in-memory cache) would
give the same kernel, so the fast path launches it at once. Any miss or unusual argument
(a type without a handler, a bad value, an unhashable option) returns None and the caller
takes the slow path, which produces the detailed LaunchErrors and fills the fast dict
(:meth:`FastBinder.remember`) once a launch has bound and compiled.

The fast dict lives on the JIT function's :class:`KernelCache` (its in-memory cache) and is
emptied whenever an entry of that cache is replaced or removed, so the fast path never returns
a kernel the slow path would not.
"""
from __future__ import annotations

import functools
import inspect

from ..config import LAUNCH_ENV, env_reader
from .argkeys import CX_PLAIN, HANDLERS, MISS, ParamInfo, constexpr_code, handler_for
from .grid import grid3_fast, normalize_grid
from .specialization import flat_runtime

#: environment variables a launch's kernel depends on (their raw values are in the fast key)
ENV_NAMES = LAUNCH_ENV
OPTION_KWARGS = frozenset({"num_warps", "num_stages", "bounds_check", "debug",
                           "enable_fp_fusion", "num_ctas"})
MAX_FAST_ENTRIES = 4096


read_env = env_reader(ENV_NAMES)


class KernelCache(dict):
    """A JIT function's in-memory cache ((spec key, options, target) -> CompiledKernel) with
    the fast path's dict in ``fast`` (fast key -> :class:`FastEntry`). Replacing or removing
    any cache entry empties ``fast``."""

    __slots__ = ("fast",)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fast: dict = {}

    def __setitem__(self, key, value):
        if key in self:
            self.fast.clear()
        super().__setitem__(key, value)

    def __delitem__(self, key):
        self.fast.clear()
        super().__delitem__(key)

    def clear(self):
        self.fast.clear()
        super().clear()

    def pop(self, *args):
        self.fast.clear()
        return super().pop(*args)

    def popitem(self):
        self.fast.clear()
        return super().popitem()

    def update(self, *args, **kwargs):
        self.fast.clear()
        super().update(*args, **kwargs)


class FastEntry:
    """A fast-path hit: the ``kernel``, the indices of the parameters it is passed
    (``passed``, or a function picking them: :func:`passed_plan`), its ``options`` (for
    grid functions' ``num_warps``/``num_stages``) and ``keep`` (objects keyed by identity,
    kept alive so their ids stay theirs)."""

    __slots__ = ("kernel", "passed", "options", "keep")

    def __init__(self, kernel, passed, options, keep):
        self.kernel, self.passed, self.options, self.keep = kernel, passed, options, keep


class FastBinder:
    """The fast path of one JIT function (built from its parameters once they are known).

    Triton's approach (its ``JITFunction`` generates a binder with the kernel's own
    signature): ``key`` calls a Python function generated for this kernel, with the kernel's
    parameter names and defaults and ``**_wb_options`` for launch options, so CPython's own
    call binding maps positional and keyword arguments to parameters, and one straight-line
    body computes every parameter's code (no loop over parameters). Every other name in the
    generated code starts with ``_wb_``; a kernel with a parameter named so gets its
    parameters renamed ``_wb_a0, _wb_a1, ...`` and keyword arguments renamed before the call.
    Its source is ``source``.

    ``names``: parameter names in order; ``constexpr``: per parameter whether it is a
    ``tl.constexpr``; ``infos``: :class:`~workbench.runtime.argkeys.ParamInfo` per
    parameter; ``defaults``: per parameter its default or ``inspect.Parameter.empty``."""

    def __init__(self, params, no_specialize=frozenset(), no_align=frozenset()):
        self.names = tuple(p.name for p in params)
        self.constexpr = tuple(p.constexpr for p in params)
        self.infos = tuple(ParamInfo(p.name, p.name not in no_specialize, p.fixed_type,
                                     p.name not in no_align) for p in params)
        self.defaults = tuple(p.default for p in params)
        clash = any(n.startswith("_wb_") for n in self.names)
        self._args = tuple(f"_wb_a{i}" for i in range(len(self.names))) if clash \
            else self.names
        self._kw_names = dict(zip(self.names, self._args, strict=True)) if clash else None
        self.source = self._generate()
        scope = {"_wb_read_env": read_env, "_wb_HANDLERS": HANDLERS,
                 "_wb_handler_for": handler_for, "_wb_constexpr_code": constexpr_code,
                 "_wb_MISS": MISS, "_wb_CX_PLAIN": CX_PLAIN, "_wb_OPTIONS": OPTION_KWARGS,
                 "_wb_INFOS": self.infos, "_wb_DEFAULTS": self.defaults, "_wb_type": type,
                 "_wb_tuple": tuple}
        exec(compile(self.source, f"<workbench fast binder of {','.join(self.names)}>",
                     "exec"), scope)
        self._bind = scope["_wb_bind"]

    def _generate(self) -> str:
        """The binder's source (see the class docstring)."""
        empty = inspect.Parameter.empty
        args = self._args
        sig = [a if d is empty else f"{a}=_wb_DEFAULTS[{i}]"
               for i, (a, d) in enumerate(zip(args, self.defaults, strict=True))]
        lines = [f"def _wb_bind({', '.join(sig + ['**_wb_options'])}):",
                 "    _wb_get = _wb_HANDLERS.get",
                 "    _wb_keep = []"]
        codes, rts = ["_wb_read_env()"], []
        for i, (a, cx) in enumerate(zip(args, self.constexpr, strict=True)):
            lines.append(f"    _wb_t{i} = _wb_type({a})")
            if cx:
                lines.append(f"    _wb_c{i} = (_wb_t{i}, {a}) if _wb_t{i} in _wb_CX_PLAIN "
                             f"else _wb_constexpr_code({a}, _wb_keep)")
                rts.append("None")
            else:
                lines.append(f"    _wb_c{i}, _wb_r{i} = (_wb_get(_wb_t{i}) or "
                             f"_wb_handler_for(_wb_t{i}))({a}, _wb_INFOS[{i}])")
                rts.append(f"_wb_r{i}")
            codes.append(f"_wb_c{i}")
        if args:
            lines.append("    if " + " or ".join(f"_wb_c{i} is _wb_MISS"
                                                 for i in range(len(args))) + ":")
            lines.append("        return None")
        lines += ["    if _wb_options:",
                  "        if not _wb_OPTIONS.issuperset(_wb_options):",
                  "            return None",
                  "        _wb_opt = _wb_tuple([(k, _wb_type(v), v) "
                  "for k, v in _wb_options.items()])",
                  "    else:",
                  "        _wb_opt = None",
                  f"    return ({', '.join(codes)}, _wb_opt), [{', '.join(rts)}], "
                  f"({''.join(a + ', ' for a in args)}), _wb_keep"]
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ binding
    def key(self, args: tuple, kwargs: dict):
        """``(key, runtime values per parameter, bound values per parameter, keep)`` of a
        launch, or None when it is for the slow path. Never raises for bad arguments. The key
        may be unhashable (an option given as a list): looking it up raises TypeError, which
        the caller treats as a miss."""
        try:
            if kwargs and self._kw_names is not None:
                kwargs = {self._kw_names.get(k, k): v for k, v in kwargs.items()}
            out = self._bind(*args, **kwargs)
        except TypeError:  # a bad call shape: the slow path explains it
            return None
        return out

    # ------------------------------------------------------------------ launching
    def launch(self, entry: FastEntry, grid, rts: list, vals: tuple, fn=None):
        """Launch ``entry``'s kernel over ``grid`` with the runtime values ``rts``; returns
        the kernel. Raises what the grid function or the launcher raise (a bad grid's
        error points at ``fn``'s ``def`` when given)."""
        grid3 = grid3_fast(grid)
        checked = grid3 is not None  # within the grid limits
        if grid3 is None:
            meta = dict(zip(self.names, vals, strict=False))
            opts = entry.options
            meta["num_warps"], meta["num_stages"] = opts.num_warps, opts.num_stages
            grid3 = normalize_grid(grid, meta, fn)
            checked = grid3_fast(grid3) is not None
        kernel = entry.kernel
        passed = entry.passed
        runtime = [rts[i] for i in passed] if type(passed) is tuple else passed(rts)
        launcher = kernel._launcher
        if launcher is None or not checked or not (grid3[0] and grid3[1] and grid3[2]):
            kernel.launch(grid3, runtime)
        else:
            launcher(grid3, runtime)
        return kernel

    @staticmethod
    def remember(cache: KernelCache, key, keep, kernel, spec, options) -> None:
        """Store a slow-path result under its fast ``key``: ``spec`` (the launch's
        Specialization) gives the passed parameters."""
        fast = cache.fast
        if len(fast) >= MAX_FAST_ENTRIES:
            fast.clear()
        fast[key] = FastEntry(kernel, passed_plan(spec), options, tuple(keep))


def passed_plan(spec):
    """How a fast launch picks the runtime arguments of ``spec`` from the values of every
    parameter: the indices of the passed parameters, or (with tuple arguments, whose passed
    elements are taken depth first) a function of the list of values."""
    if any(a.kind == "tuple" for a in spec.args):
        return functools.partial(flat_runtime, spec.args)
    return tuple(i for i, a in enumerate(spec.args) if a.passed)
