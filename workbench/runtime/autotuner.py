"""``autotune``, ``Config`` and ``heuristics`` with Triton's semantics (Triton 3.6,
``triton/runtime/autotuner.py``).

``@autotune(configs, key)`` above ``@jit`` (or above ``@heuristics``): at a launch, the values
of the ``key`` arguments plus the dtype of every array argument form the tuning key; a new key
times every (pruned) config with ``do_bench(..., quantiles=(0.5, 0.2, 0.8))`` and keeps the one
with the smallest median, reused for later launches with the same key. Configs that fail to
compile (CompilationError, UnsupportedError, ptxas errors) get infinite time. A single config
after pruning is used without timing. ``reset_to_zero`` arrays are zeroed before each trial
(and before the real launch); ``restore_value`` arrays are copied before each trial and
restored after it, so in-place kernels leave their outputs as one launch would.

``@heuristics({"BLOCK": lambda args: ...})`` computes meta-parameters from the bound
arguments (a dict of name -> value, keyword arguments included) at every launch.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import time
import warnings

from ..config import env_flag
from ..errors import AutotunerError, CompilationError, LaunchError, OutOfResources
from .devices import is_cuda_array
from .interface import KernelInterface, MockTensor

_FAILED = [math.inf, math.inf, math.inf]
_NO_DTYPE = object()
_DTYPE_TEXT: dict = {}  # dtype -> str(dtype) (numpy's dtype __str__ is slow Python code)


def _dtype_text(dt) -> str:
    """``str(dt)``, memoised per dtype object."""
    try:
        text = _DTYPE_TEXT.get(dt)
    except TypeError:  # an unhashable dtype
        return str(dt)
    if text is None:
        text = _DTYPE_TEXT[dt] = str(dt)
    return text


class Config:
    """One autotuning configuration (Triton's ``triton.Config``): ``kwargs`` (meta-parameter
    name -> value, passed as constexprs), ``num_warps``, ``num_stages``, ``num_ctas`` (each
    program runs on one CTA here; see Options), ``maxnreg`` (CUDA registers per thread),
    ``pre_hook`` (called with the full argument dict before each launch with this config).
    Triton's ``ir_override`` (a file of hand-written IR) is refused with a LaunchError."""

    def __init__(self, kwargs, num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1,
                 maxnreg=None, pre_hook=None, ir_override=None):
        if ir_override is not None:
            raise LaunchError(f"Config(ir_override={ir_override!r}): the workbench compiles "
                              "every stage from the kernel's source and cannot take a "
                              "hand-written IR file; leave ir_override out")
        self.ir_override = None
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict:
        """The keyword arguments a launch with this config gets (meta-parameters and the
        compile options ``num_warps``, ``num_stages``; ``num_ctas`` when not 1; ``maxnreg``
        when set)."""
        out = dict(self.kwargs, num_warps=self.num_warps, num_stages=self.num_stages)
        if self.num_ctas != 1:
            out["num_ctas"] = self.num_ctas
        if self.maxnreg is not None:
            out["maxnreg"] = self.maxnreg
        return out

    def __repr__(self) -> str:
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_stages: {self.num_stages}",
                  f"num_ctas: {self.num_ctas}", f"maxnreg: {self.maxnreg}"]
        return ", ".join(parts)


def _base_jit(fn):
    while not getattr(fn, "__workbench_jit__", False):
        fn = fn.fn
    return fn


class WrappedKernel(KernelInterface):
    """What ``@autotune`` and ``@heuristics`` wrap and offer: ``fn`` (the wrapped kernel),
    ``base_fn`` (the ``@jit`` function underneath), ``arg_names``, ``kernel[grid](...)``."""

    def __init__(self, fn):
        self.fn = fn
        self.base_fn = _base_jit(fn)
        self.arg_names = [p.name for p in self.base_fn.params]
        self._arg_name_set = frozenset(self.arg_names)
        functools.update_wrapper(self, self.base_fn.fn, updated=())

    def __getitem__(self, grid):
        """``kernel[grid]``: a callable launching over ``grid``."""
        return functools.partial(self.run, grid=grid)

    def warmup(self, *args, grid=None, **kwargs):
        """Compile without launching (the wrapped kernel's ``warmup``)."""
        return self.run(*map(MockTensor.wrap_dtype, args), grid=grid, warmup=True, **kwargs)


class Heuristics(WrappedKernel):
    """``@heuristics(values)``: ``values[name](args) -> value`` at every launch."""

    def __init__(self, fn, values: dict):
        super().__init__(fn)
        self.values = dict(values)

    def run(self, *args, grid, **kwargs):
        """Compute the heuristic meta-parameters, then launch the wrapped kernel."""
        for name, heur in self.values.items():
            kwargs[name] = heur({**dict(zip(self.arg_names, args, strict=False)), **kwargs})
        return self.fn.run(*args, grid=grid, **kwargs)


def heuristics(values: dict):
    """Decorator: compute meta-parameters from the launch's arguments (Triton's
    ``triton.heuristics``). ``values``: name -> function of a dict of every bound argument
    (positional ones by parameter name, plus keyword arguments). Stack above ``@jit`` (and
    below or above ``@autotune``)."""
    return lambda fn: Heuristics(fn, values)


def _zero(a):
    if hasattr(a, "zero_"):
        a.zero_()
    else:
        a[...] = 0


def _copy(a):
    return a.clone() if hasattr(a, "clone") else a.copy()


def _restore(dst, src):
    if hasattr(dst, "copy_"):
        dst.copy_(src)
    else:
        dst[...] = src


def _device_of(values) -> str:
    return "cuda" if any(is_cuda_array(v) for v in values) else "cpu"


class Autotuner(WrappedKernel):
    """``@autotune(...)``. After launches: ``best_config`` (the config of the last launch),
    ``cache`` (tuning key -> Config), ``configs_timings`` (Config -> [median, p20, p80] ms of
    the last tuning), ``autotune_results`` (list of ``(Config, median ms)`` of the last tuning,
    in config order; ``inf`` for configs that failed to compile), ``results`` (tuning key ->
    that list, every key tuned so far), ``bench_time`` (seconds the last tuning took)."""

    def __init__(self, fn, configs, key, prune_configs_by=None, reset_to_zero=None,
                 restore_value=None, pre_hook=None, post_hook=None, do_bench=None,
                 cache_results: bool = False, warmup=None, rep=None, use_cuda_graph=False):
        super().__init__(fn)
        self.configs = list(configs) if configs else [Config({})]
        self.keys = list(key)
        names = set(self.arg_names)
        unknown = [k for k in self.keys if k not in names]
        if unknown:  # Triton leaves such keys out of the tuning key; so do we, and say so
            warnings.warn(f"autotune key names {unknown} are not parameters of "
                          f"'{self.base_fn.fn.__name__}' and are left out of the tuning key",
                          stacklevel=3)
            self.keys = [k for k in self.keys if k in names]
        for group, what in ((reset_to_zero or [], "reset_to_zero"),
                            (restore_value or [], "restore_value")):
            bad = [k for k in group if k not in names]
            if bad:
                raise LaunchError(f"autotune {what} names {bad} are not parameters of "
                                  f"'{self.base_fn.fn.__name__}' ({', '.join(self.arg_names)})")
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        self._restore_copies: dict = {}
        self.pre_hook = pre_hook or self._default_pre_hook
        self.post_hook = post_hook or self._default_post_hook
        prune = prune_configs_by or {}
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k", 1.0)
        self.do_bench = do_bench
        # Triton's deprecated timing keywords: kept, with Triton's warning, for old scripts
        self.num_warmups, self.num_reps, self.use_cuda_graph = warmup, rep, use_cuda_graph
        if warmup is not None or rep is not None or use_cuda_graph:
            warnings.warn("warmup, rep, and use_cuda_graph parameters are deprecated (as in "
                          "Triton 3.6): pass do_bench= instead", DeprecationWarning,
                          stacklevel=3)
        self.cache_results = cache_results or \
            env_flag("WORKBENCH_CACHE_AUTOTUNING")
        self.cache: dict = {}
        self.results: dict = {}
        self.configs_timings: dict = {}
        self.autotune_results: list = []
        self.best_config = None
        self.bench_time = 0.0
        self.nargs: dict = {}

    # ------------------------------------------------------------------ hooks
    def _default_pre_hook(self, kwargs, reset_only: bool = False):
        for name in self.reset_to_zero:
            _zero(kwargs[name])
        if not reset_only:
            self._restore_copies = {n: _copy(kwargs[n]) for n in self.restore_value}

    def _default_post_hook(self, kwargs, exception=None):
        for name in self.restore_value:
            if name in self._restore_copies:
                _restore(kwargs[name], self._restore_copies[name])
        self._restore_copies = {}

    # ------------------------------------------------------------------ tuning
    def _key(self, all_args: dict) -> tuple:
        """The tuning key: the values of the ``key`` arguments, then ``str(dtype)`` of every
        argument of the kernel that has a ``dtype`` (in argument order)."""
        names = self._arg_name_set
        key = [all_args[k] for k in self.keys if k in all_args]
        for k, v in all_args.items():
            if k in names:
                dt = getattr(v, "dtype", _NO_DTYPE)
                if dt is not _NO_DTYPE:
                    key.append(_dtype_text(dt))
        return tuple(key)

    def prune_configs(self, kwargs: dict) -> list:
        """The configs left after ``early_config_prune`` and the ``perf_model`` top-k."""
        pruned = self.configs
        if self.early_config_prune:
            pruned = list(self.early_config_prune(self.configs, self.nargs, **kwargs))
            if not pruned:
                raise AutotunerError("autotune: early_config_prune left no configuration; "
                                     "it should return at least one config")
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = max(1, int(len(pruned) * top_k))
            if len(pruned) > top_k:
                est = {i: self.perf_model(**self.nargs, **kwargs, **c.all_kwargs())
                       for i, c in enumerate(pruned)}
                pruned = [pruned[i] for i in sorted(est, key=lambda i: est[i])[:top_k]]
        return pruned

    def _bench(self, *args, grid, config, **meta) -> list:
        current = dict(meta, **config.all_kwargs())
        full = {**self.nargs, **current}

        def kernel_call():
            if config.pre_hook:
                config.pre_hook(full)
            self.pre_hook(full)
            try:
                self.fn.run(*args, grid=grid, **current)
            except Exception as e:
                self.post_hook(full, exception=e)
                raise
            self.post_hook(full, exception=None)

        bench = self.do_bench
        if bench is None:
            from .bench import do_bench as base
            # use_cuda_graph: the workbench times without graph capture either way
            bench = functools.partial(base, device=_device_of(full.values()),
                                      warmup=25 if self.num_warmups is None else self.num_warmups,
                                      rep=100 if self.num_reps is None else self.num_reps)
        try:
            out = bench(kernel_call, quantiles=(0.5, 0.2, 0.8))
        except (CompilationError, OutOfResources):  # the config cannot run: it failed
            return list(_FAILED)
        except Exception as e:  # ptxas rejecting a config counts as a failed compile
            if type(e).__name__ == "PtxasError":
                return list(_FAILED)
            raise
        return [float(v) for v in (out if isinstance(out, (list, tuple)) else [out])]

    def _disk_path(self, key, configs):
        from ..config import cache_dir
        from .disk_cache import compiler_hash, source_fingerprint
        blob = json.dumps({"src": repr(source_fingerprint(self.base_fn)), "key": repr(key),
                           "configs": [repr(c) for c in configs],
                           "compiler": compiler_hash()}, sort_keys=True)
        name = hashlib.sha256(blob.encode()).hexdigest()
        return cache_dir() / "autotune" / f"{name}.autotune.json"

    def _tune(self, key, args, grid, kwargs) -> None:
        pruned = self.prune_configs(kwargs)
        use_disk = self.cache_results and not any(c.pre_hook for c in pruned)
        if use_disk:
            from .disk_cache import read_entry
            saved = read_entry(self._disk_path(key, pruned))
            if saved is not None and len(saved.get("timings", [])) == len(pruned):
                self._record(key, pruned, saved["timings"], 0.0)
                return
        t0 = time.perf_counter()
        if len(pruned) == 1:  # nothing to choose: used untimed (nan), as Triton
            timings = [[math.nan] * 3]
        else:
            timings = [self._bench(*args, grid=grid, config=c, **kwargs) for c in pruned]
        self._record(key, pruned, timings, time.perf_counter() - t0)
        if use_disk and len(pruned) > 1:
            from .disk_cache import write_entry
            write_entry(self._disk_path(key, pruned), {"timings": timings})
        if self.pre_hook == self._default_pre_hook:  # zero reset_to_zero for the real launch
            self.pre_hook({**self.nargs, **kwargs}, reset_only=True)

    def _record(self, key, configs, timings, seconds) -> None:
        self.bench_time = seconds
        self.configs_timings = {c: t for c, t in zip(configs, timings, strict=True)}
        self.autotune_results = [(c, t[0]) for c, t in zip(configs, timings, strict=True)]
        self.results[key] = self.autotune_results
        best = min(range(len(configs)), key=lambda i: timings[i])
        self.cache[key] = configs[best]
        if env_flag("WORKBENCH_PRINT_AUTOTUNING"):
            print(f"Autotuning kernel {self.base_fn.fn.__name__} with key {key} took "
                  f"{seconds:.3f}s; best config: {configs[best]}")

    def run(self, *args, grid, **kwargs):
        """Tune (first launch of a new key) and launch with the best config. Raises
        ValueError when a keyword argument re-defines a tuned meta-parameter."""
        self.nargs = dict(zip(self.arg_names, args, strict=False))
        if kwargs and any(k in c.kwargs for c in self.configs for k in kwargs):
            clash = set(kwargs) & {k for c in self.configs for k in c.kwargs}
            raise ValueError(f"Conflicting meta-parameters: {', '.join(sorted(clash))}. "
                             "Make sure that you don't re-define auto-tuned symbols.")
        key = self._key({**self.nargs, **kwargs} if kwargs else self.nargs)
        config = self.cache.get(key)
        if config is None:
            self._tune(key, args, grid, kwargs)
            config = self.cache[key]
        self.best_config = config
        if config.pre_hook:
            config.pre_hook({**self.nargs, **kwargs, **config.all_kwargs()})
        out = self.fn.run(*args, grid=grid, **kwargs, **config.all_kwargs())
        self.nargs = {}
        return out


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
             pre_hook=None, post_hook=None, warmup=None, rep=None, use_cuda_graph=False,
             do_bench=None, cache_results: bool = False):
    """Decorator: choose the fastest of ``configs`` per value of the ``key`` arguments (and
    the dtypes of array arguments), as Triton's ``triton.autotune``.

    ``configs``: list of :class:`Config`; ``key``: parameter names; ``prune_configs_by``:
    ``{"early_config_prune": f(configs, named_args, **kwargs) -> configs, "perf_model":
    f(**args, **meta) -> estimated ms, "top_k": int or fraction}``; ``reset_to_zero`` /
    ``restore_value``: names of array arguments zeroed before / restored after each trial;
    ``pre_hook(args)`` / ``post_hook(args, exception)`` replace those defaults; ``do_bench``:
    ``f(fn, quantiles) -> ms`` (default :func:`workbench.testing.do_bench`); ``warmup``,
    ``rep`` (ms), ``use_cuda_graph``: Triton's deprecated timing keywords (a
    DeprecationWarning; the default bench then warms up and repeats for that long; no
    graph capture here);
    ``cache_results`` (or ``WORKBENCH_CACHE_AUTOTUNING=1``): keep timings in the cache
    directory across processes (not with config pre_hooks). ``WORKBENCH_PRINT_AUTOTUNING=1``
    prints each tuning. Returns a decorator producing an :class:`Autotuner`."""
    def decorator(fn):
        return Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value,
                         pre_hook, post_hook, do_bench, cache_results, warmup, rep,
                         use_cuda_graph)
    return decorator
