"""The meta-parameters a launch of a wrapped kernel really gets, without launching it.

``kernel[grid](*args, **kwargs)`` on an ``@autotune``/``@heuristics`` wrapper adds keyword
arguments before the ``@jit`` function underneath sees them: the tuned config's meta-parameters
and compile options (``BLOCK``, ``num_warps``...) and the heuristics' values. Counting the work
of such a launch (:func:`workbench.testing.count_work`) needs those same arguments, so
:func:`resolve_launch` replays the wrappers from the outside in:

- ``Autotuner``: the config cached for this launch's tuning key (the key arguments' values and
  the array dtypes, :meth:`Autotuner._key`); when the caller passes every tuned meta-parameter
  itself, the tuner is skipped (that launch would not be tuned either); a tuner with a single
  config uses it. A key not tuned yet raises :class:`NotTunedError`, saying to launch once or
  to pass the meta-parameters.
- ``Heuristics``: each value computed from the bound arguments, as at a launch.
"""
from __future__ import annotations


class NotTunedError(ValueError):
    """An ``@autotune`` kernel has no tuned config for these arguments yet."""


def _is_jit(fn) -> bool:
    return bool(getattr(fn, "__workbench_jit__", False))


def _name(fn) -> str:
    base = fn
    while not _is_jit(base) and hasattr(base, "fn"):
        base = base.fn
    inner = getattr(base, "fn", base)
    return str(getattr(inner, "__name__", None) or getattr(base, "__name__", "kernel"))


def _tuned_config(tuner, args, kwargs):
    """The Config an Autotuner would launch ``args``/``kwargs`` with, or None when the caller
    passed every tuned meta-parameter. Raises NotTunedError for an untuned key."""
    tuned_names = {k for c in tuner.configs for k in c.kwargs}
    if tuned_names and tuned_names <= set(kwargs):
        return None
    if len(tuner.configs) == 1 and not tuner.early_config_prune and not tuner.perf_model:
        return tuner.configs[0]
    nargs = dict(zip(tuner.arg_names, args, strict=False))
    key = tuner._key({**nargs, **kwargs} if kwargs else nargs)
    config = tuner.cache.get(key)
    if config is None:
        missing = ", ".join(sorted(tuned_names)) or "its meta-parameters"
        raise NotTunedError(
            f"'{_name(tuner)}' is @autotune'd and has not been tuned for these arguments "
            f"(tuning key {key!r}; tuned keys: {list(tuner.cache) or 'none'}): launch it once "
            f"with them (that tunes it), or pass {missing} yourself")
    return config


def resolve_launch(kernel, args, kwargs: dict):
    """``(jit_kernel, kwargs)``: the ``@jit`` function under ``kernel`` and the keyword
    arguments it gets when ``kernel[grid](*args, **kwargs)`` runs (tuned config and heuristic
    values added). A plain ``@jit`` kernel comes back with ``kwargs`` unchanged. Raises
    :class:`NotTunedError` (see the module docstring)."""
    kwargs = dict(kwargs)
    k = kernel
    while not _is_jit(k) and hasattr(k, "fn"):
        if hasattr(k, "configs") and hasattr(k, "cache"):          # an Autotuner
            config = _tuned_config(k, args, kwargs)
            if config is not None:
                kwargs.update(config.all_kwargs())
        elif hasattr(k, "values") and hasattr(k, "arg_names"):     # a Heuristics
            for name, heur in k.values.items():
                kwargs[name] = heur({**dict(zip(k.arg_names, args, strict=False)), **kwargs})
        k = k.fn
    return k, kwargs
