"""Triton 3.6's runtime hooks (``knobs.runtime.launch_enter_hook``, ``launch_exit_hook``,
``jit_cache_hook``, ``jit_post_compile_hook``), called as Triton calls them
(``python/triton/runtime/jit.py`` and ``compiler/compiler.py``), so profilers and tracers
written for Triton (proton's launch hooks, tritonparse's compile hook) see the workbench's
launches and compiles.

The hooks live on the one configuration object (``workbench.config.settings.hooks``); when
none is set, a launch pays nothing for them (the fast launch path is taken only then).

* ``launch_enter_hook(metadata)`` / ``launch_exit_hook(metadata)`` around every launch of a
  ``@jit`` kernel: ``metadata`` is a :class:`LazyDict` whose ``get()`` gives ``name``,
  ``function``, ``stream`` and what ``@jit(launch_metadata=f)``'s ``f(grid, kernel_metadata,
  args)`` returns (called only when ``get()`` is).
* ``jit_cache_hook(key=, repr=, fn=, compile=, is_manual_warmup=, already_compiled=False)``
  before a kernel is compiled (a miss of the kernel's in-memory cache); a true result skips
  the compile and the launch (the launch returns None). ``jit_post_compile_hook`` (same
  arguments) after it. ``compile["specialization_data"]`` is a JSON text that
  :meth:`JITFunction.preload` compiles again.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, NamedTuple

from ..config import settings
from ..errors import LaunchError
from .specialization import ArgSpec, Specialization

#: the hook names Triton's ``knobs.runtime`` has and the workbench calls
HOOK_NAMES = ("launch_enter_hook", "launch_exit_hook", "jit_cache_hook",
              "jit_post_compile_hook")


class LazyDict:
    """Triton's ``LazyDict``: a dict whose extra entries come from functions called on the
    first :meth:`get` (profilers ask for them only when they record the launch)."""

    def __init__(self, data: dict):
        self.data = data
        self.extras: list = []

    def add(self, func, args) -> None:
        """Merge ``func(*args)`` (a dict) into the data when :meth:`get` is called."""
        self.extras.append((func, args))

    def get(self) -> dict:
        """The data with every pending extra merged in."""
        for func, args in self.extras:
            self.data = self.data | func(*args)
        self.extras.clear()
        return self.data


class JitFunctionInfo(NamedTuple):
    """What a compile hook gets as ``fn`` (Triton's ``JitFunctionInfo``)."""

    module: str
    name: str
    jit_function: Any


def launch(kernel, grid3: tuple, runtime_args, arg_values: dict, jit_fn=None) -> None:
    """Launch ``kernel`` over ``grid3`` with the launch hooks around it (when set).
    ``arg_values``: parameter name -> the value passed (for ``launch_metadata``)."""
    enter = settings.hooks.get("launch_enter_hook")
    leave = settings.hooks.get("launch_exit_hook")
    if enter is None and leave is None:
        kernel.launch(grid3, runtime_args)
        return
    meta = launch_metadata(kernel, grid3, arg_values, jit_fn) if enter is not None else None
    if enter is not None:
        enter(meta)
    kernel.launch(grid3, runtime_args)
    if leave is not None:
        leave(meta)


def launch_metadata(kernel, grid3: tuple, arg_values: dict, jit_fn=None) -> LazyDict:
    """Triton's ``CompiledKernel.launch_metadata``: ``name``, ``function`` (the launcher),
    ``stream`` (the current CUDA stream's handle; 0 on host targets), plus
    ``launch_metadata(grid, kernel.metadata, args)`` of ``@jit(launch_metadata=...)``."""
    stream = 0
    if kernel.target.backend == "cuda":
        from ..backends.cuda_launch import current_stream
        stream = current_stream()
    out = LazyDict({"name": kernel.name, "function": kernel.launcher, "stream": stream})
    fn = getattr(jit_fn, "launch_metadata", None)
    if fn is not None:
        out.add(fn, (tuple(grid3), kernel.metadata, dict(arg_values)))
    return out


def call_compile_hook(which: str, jit_fn, spec: Specialization, options, target,
                      is_warmup: bool):
    """Call hook ``which`` (``"jit_cache_hook"`` or ``"jit_post_compile_hook"``) with Triton's
    arguments for compiling ``spec``; returns its result (None when the hook is not set)."""
    hook = settings.hooks.get(which)
    if hook is None:
        return None
    device = 0 if target.backend == "cuda" else str(target)  # the workbench launches on GPU 0
    signature = {a.name: a.signature() for a in spec.args}
    constants, attrs = _constants_and_attrs(spec.args, ())
    key = (spec.key(), dataclasses.astuple(options), str(target))
    name = jit_fn.fn.__qualname__
    arg_reprs = ", ".join(f"{a.name}: {a.signature()}" for a in spec.args)
    text = (f"{name}[num_warps={options.num_warps}, num_ctas={options.num_ctas}, "
            f"num_stages={options.num_stages}, enable_fp_fusion={options.enable_fp_fusion}, "
            f"launch_cooperative_grid=False]({arg_reprs})")
    compile_args = {
        "key": key, "signature": signature, "device": device, "constants": constants,
        "num_warps": options.num_warps, "num_ctas": options.num_ctas,
        "num_stages": options.num_stages, "enable_fp_fusion": options.enable_fp_fusion,
        "launch_cooperative_grid": False, "extern_libs": None, "configs": [attrs],
        "specialization_data": specialization_data(jit_fn, spec, options, target),
        "is_warmup": is_warmup}
    return hook(key=key, repr=text, fn=JitFunctionInfo(jit_fn.fn.__module__, name, jit_fn),
                compile=compile_args, is_manual_warmup=is_warmup, already_compiled=False)


def _constants_and_attrs(args, path: tuple) -> tuple[dict, dict]:
    """Triton's path-keyed ``constants`` (constexprs and ints specialised to 1) and ``attrs``
    (``[["tt.divisibility", 16]]`` for arguments known divisible by 16)."""
    constants, attrs = {}, {}
    for i, a in enumerate(args):
        p = path + (i,)
        if a.kind == "tuple":
            c, t = _constants_and_attrs(a.elements, p)
            constants.update(c)
            attrs.update(t)
        elif a.kind == "constexpr":
            constants[p] = a.value
        elif a.equal_to_1:
            constants[p] = 1
        elif a.divisible_by_16:
            attrs[p] = [["tt.divisibility", 16]]
    return constants, attrs


# ------------------------------------------------------------------ specialization data
def _arg_json(a: ArgSpec) -> dict:
    out: dict = {"name": a.name, "kind": a.kind, "type": a.type,
                 "divisible_by_16": a.divisible_by_16, "equal_to_1": a.equal_to_1}
    if a.kind == "tuple":
        cls: Any = a.value
        out["class"] = None if cls in (None, tuple) else f"{cls.__module__}:{cls.__qualname__}"
        out["elements"] = [_arg_json(e) for e in a.elements]
    elif a.kind == "constexpr" or a.value is not None:  # a scalar's value: ints == 1
        out["value"] = _value_json(a.value)
    return out


def _value_json(v):
    from ..language import dtypes as dt
    if v is None or isinstance(v, (bool, int, float, str)):
        return {"constexpr": v}
    if isinstance(v, dt.dtype) and v.name in dt.ALL:
        return {"dtype": v.name}
    return {"unserializable": repr(v)}


def specialization_data(jit_fn, spec: Specialization, options, target) -> str:
    """The JSON text :meth:`JITFunction.preload` compiles back: the kernel's qualified name,
    the target, the options and every argument's specialisation."""
    return json.dumps({"name": f"{jit_fn.fn.__module__}.{jit_fn.fn.__qualname__}",
                       "target": str(target), "options": dataclasses.asdict(options),
                       "args": [_arg_json(a) for a in spec.args]})


def _arg_from_json(d: dict) -> ArgSpec:
    value = None
    elements: tuple = ()
    if d["kind"] == "tuple":
        elements = tuple(_arg_from_json(e) for e in d["elements"])
        value = _import_class(d["class"]) if d.get("class") else tuple
    elif "value" in d:
        value = _value_from_json(d["value"], d["name"])
    return ArgSpec(d["name"], d["kind"], d["type"], d["divisible_by_16"], d["equal_to_1"],
                   value, elements)


def _value_from_json(v: dict, name: str):
    if "constexpr" in v:
        return v["constexpr"]
    if "dtype" in v:
        from ..language import dtypes as dt
        return dt.ALL[v["dtype"]]
    raise LaunchError(f"preload: constexpr '{name}' was {v['unserializable']}, which the "
                      "specialization data cannot carry; launch or warm up the kernel instead")


def _import_class(text: str):
    import importlib
    module, _, qualname = text.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def parse_specialization_data(jit_fn, data: str):
    """``(Specialization, Options, Target)`` from :func:`specialization_data`'s text. Raises
    LaunchError when the text is not JSON of that form or names another kernel."""
    from ..config import Options, Target
    try:
        d = json.loads(data)
        spec = Specialization(tuple(_arg_from_json(a) for a in d["args"]))
        options = Options(**d["options"])
        target = Target.parse(d["target"])
    except LaunchError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, ImportError) as e:
        raise LaunchError(f"preload: not the specialization data of a workbench kernel "
                          f"({type(e).__name__}: {e})") from None
    fn: Any = jit_fn.fn
    want = f"{fn.__module__}.{fn.__qualname__}"
    if d["name"] != want:
        raise LaunchError(f"preload: the specialization data is for '{d['name']}', not "
                          f"'{want}'")
    return spec, options, target
