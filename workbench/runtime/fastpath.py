"""The launch fast path of ``kernel[grid](*args, **kw)`` for an already compiled kernel.

Triton's approach (reference §2.3, ``JITFunction.run``): from the raw arguments compute a
specialisation key with minimal work (per parameter a code from
:mod:`workbench.runtime.argkeys`, plus the keyword layout, the option values and the raw
``WORKBENCH_INTERPRET`` / ``WORKBENCH_BOUNDS_CHECK`` / ``WORKBENCH_DEBUG`` strings), and look it
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

import inspect
import os

from .argkeys import HANDLERS, MISS, ParamInfo, constexpr_code, handler_for
from .grid import grid3_fast, normalize_grid

ENV_NAMES = ("WORKBENCH_INTERPRET", "WORKBENCH_BOUNDS_CHECK", "WORKBENCH_DEBUG")
OPTION_KWARGS = frozenset({"num_warps", "num_stages", "bounds_check", "debug",
                           "enable_fp_fusion", "num_ctas"})
MAX_FAST_ENTRIES = 4096


def _env_reader(names=ENV_NAMES):
    """A function returning the raw values of ``names`` in the environment (None when unset).

    ``os.environ.get`` costs about 1 us per name (it encodes the key and decodes the value);
    when ``os.environ`` keeps its encoded mapping (``_data``, CPython on every platform) it is
    read directly (the same values: ``os.environ[...] = ...`` and ``del`` update it), else
    ``os.environ.get`` is used."""
    data = getattr(os.environ, "_data", None)
    encode = getattr(os.environ, "encodekey", None)
    if isinstance(data, dict) and callable(encode):
        try:
            keys = tuple(encode(n) for n in names)
            ok = all((data.get(k) is None) == (os.environ.get(n) is None)
                     for k, n in zip(keys, names))
        except Exception:  # pragma: no cover - an unusual os.environ
            ok = False
        if ok:
            get = data.get
            k0, k1, k2 = keys
            return lambda: (get(k0), get(k1), get(k2))
    return lambda: tuple(os.environ.get(n) for n in names)


read_env = _env_reader()


class KernelCache(dict):
    """A JIT function's in-memory cache ((spec key, options, target) -> CompiledKernel) with
    the fast path's dict in ``fast`` (fast key -> :class:`FastEntry`). Replacing or removing
    any cache entry empties ``fast``."""

    __slots__ = ("fast",)

    def __init__(self, *args, **kwargs):
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
    (``passed``), its ``options`` (for grid functions' ``num_warps``/``num_stages``) and
    ``keep`` (objects keyed by identity, kept alive so their ids stay theirs)."""

    __slots__ = ("kernel", "passed", "options", "keep")

    def __init__(self, kernel, passed, options, keep):
        self.kernel, self.passed, self.options, self.keep = kernel, passed, options, keep


class _Layout:
    """How one call shape (number of positional args, keyword names in order) maps onto the
    parameters: ``rest`` (for each parameter after the positional ones: ``(name, from
    keyword, default)``) and ``opts`` (keyword names that are launch options)."""

    __slots__ = ("rest", "opts")

    def __init__(self, rest, opts):
        self.rest, self.opts = rest, opts


class FastBinder:
    """The fast path of one JIT function (built from its parameters once they are known).

    ``names``: parameter names in order; ``constexpr``: per parameter whether it is a
    ``tl.constexpr``; ``infos``: :class:`~workbench.runtime.argkeys.ParamInfo` per
    parameter; ``defaults``: per parameter its default or ``inspect.Parameter.empty``."""

    def __init__(self, params, no_specialize=frozenset()):
        self.names = tuple(p.name for p in params)
        self.plan = tuple((p.constexpr, ParamInfo(p.name, p.name not in no_specialize,
                                                  p.fixed_type)) for p in params)
        self.defaults = tuple(p.default for p in params)
        self._empty = inspect.Parameter.empty
        self.layouts: dict = {}

    # ------------------------------------------------------------------ binding
    def _layout(self, nargs: int, kwnames: tuple):
        """The :class:`_Layout` of a call shape, or False when the slow path must handle it
        (too many arguments, an unknown keyword, a parameter given twice or missing)."""
        names = self.names
        if nargs > len(names) or len(set(kwnames)) != len(kwnames):
            return False
        index = {n: i for i, n in enumerate(names)}
        opts = []
        for k in kwnames:
            i = index.get(k)
            if i is None:
                if k not in OPTION_KWARGS:
                    return False
                opts.append(k)
            elif i < nargs:
                return False
        rest = []
        for i in range(nargs, len(names)):
            if names[i] in kwnames:
                rest.append((names[i], True, None))
            elif self.defaults[i] is not self._empty:
                rest.append((names[i], False, self.defaults[i]))
            else:
                return False
        return _Layout(tuple(rest), tuple(opts))

    def key(self, args: tuple, kwargs: dict):
        """``(key, runtime values per parameter, bound values per parameter, keep)`` of a
        launch, or None when it is for the slow path. Never raises for bad arguments."""
        shape = (len(args), tuple(kwargs))
        lay = self.layouts.get(shape)
        if lay is None:
            lay = self.layouts[shape] = self._layout(*shape)
        if lay is False:
            return None
        vals = args
        if lay.rest:
            vals = args + tuple([kwargs[n] if kw else d for n, kw, d in lay.rest])
        codes = [lay, read_env()]
        rts = []
        keep = []
        get = HANDLERS.get
        for (cx, pi), v in zip(self.plan, vals):
            if cx:
                code = constexpr_code(v, keep)
                rts.append(None)
            else:
                code, rt = (get(type(v)) or handler_for(type(v)))(v, pi)
                rts.append(rt)
            if code is MISS:
                return None
            codes.append(code)
        if lay.opts:
            codes.append(tuple([(type(kwargs[o]), kwargs[o]) for o in lay.opts]))
        key = tuple(codes)
        try:
            hash(key)
        except TypeError:  # an unhashable option value
            return None
        return key, rts, vals, keep

    # ------------------------------------------------------------------ launching
    def launch(self, entry: FastEntry, grid, rts: list, vals: tuple):
        """Launch ``entry``'s kernel over ``grid`` with the runtime values ``rts``; returns
        the kernel. Raises what the grid function or the launcher raise."""
        grid3 = grid3_fast(grid)
        if grid3 is None:
            meta = dict(zip(self.names, vals))
            opts = entry.options
            meta["num_warps"], meta["num_stages"] = opts.num_warps, opts.num_stages
            grid3 = normalize_grid(grid, meta)
        kernel = entry.kernel
        runtime = [rts[i] for i in entry.passed]
        launcher = kernel._launcher
        if launcher is None or not (grid3[0] and grid3[1] and grid3[2]):
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
        passed = tuple(i for i, a in enumerate(spec.args) if a.passed)
        fast[key] = FastEntry(kernel, passed, options, tuple(keep))
