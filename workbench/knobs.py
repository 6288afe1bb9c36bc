"""``workbench.knobs``: Triton 3.6's ``triton.knobs`` settings, under Triton's names, read and
written through the one configuration object, :data:`workbench.config.settings`.

Each knob set (``runtime``, ``compilation``, ``cache``, ``autotuning``, ``language``,
``nvidia``, and ``workbench`` for the workbench's own settings) is a view: it stores nothing
itself. Reading a knob gives the value now in force (a value set from Python, else the
``WORKBENCH_*`` environment variable, else the default); assigning one overrides that
variable for this process (and the child processes the workbench starts); assigning
``knobs.env`` or deleting it goes back to the environment. ``with knobs.runtime.scope():``
puts back, on exit, the values its knobs had on entry. The environment is never written.

=================================  ==============================  ===========================
knob                               setting (environment variable)  Triton's variable
=================================  ==============================  ===========================
``runtime.interpret``              ``WORKBENCH_INTERPRET``         ``TRITON_INTERPRET``
``runtime.debug``                  ``WORKBENCH_DEBUG``             ``TRITON_DEBUG``
``compilation.always_compile``     ``WORKBENCH_ALWAYS_COMPILE``    ``TRITON_ALWAYS_COMPILE``
``cache.dir``                      ``WORKBENCH_CACHE_DIR``         ``TRITON_CACHE_DIR``
``autotuning.cache``               ``WORKBENCH_CACHE_AUTOTUNING``  ``TRITON_CACHE_AUTOTUNING``
``autotuning.print``               ``WORKBENCH_PRINT_AUTOTUNING``  ``TRITON_PRINT_AUTOTUNING``
``language.default_fp_fusion``     ``WORKBENCH_DEFAULT_FP_FUSION`` ``TRITON_DEFAULT_FP_FUSION``
``nvidia.ptxas``, ``.nvdisasm``    ``WORKBENCH_PTXAS``, ...        ``TRITON_PTXAS_PATH``, ...
``workbench.bounds_check``         ``WORKBENCH_BOUNDS_CHECK``      (none)
``workbench.cuda_mma``             ``WORKBENCH_CUDA_MMA``          (none)
``workbench.disk_cache``           ``WORKBENCH_DISK_CACHE``        (none)
``workbench.cpu_prefer_256``       ``WORKBENCH_CPU_PREFER_256``    (none)
=================================  ==============================  ===========================

``runtime.launch_enter_hook``, ``launch_exit_hook``, ``jit_cache_hook`` and
``jit_post_compile_hook`` hold callables (``config.settings.hooks``), called as Triton calls
them (:mod:`workbench.runtime.hooks`).

Triton's other knobs (load and stage hooks, IR dumps and overrides, AMD, proton, build, redis)
have no meaning here: reading or setting one raises AttributeError saying so (Triton's source:
``python/triton/knobs.py``).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

from . import config


class Env:
    """The value that, assigned to a knob, drops what was set and goes back to the
    environment (Triton's ``knobs.env``)."""


env = Env()

_HOOK = ("the backends load a kernel while compiling it and run no separate stage "
         "hooks; the launch and compile hooks are knobs.runtime's")
_DUMP = "compiled stages are kept on the kernel (kernel.asm[stage]) and in the disk cache"


@dataclass(frozen=True)
class NvidiaTool:
    """An NVIDIA tool as Triton's ``knobs.nvidia.ptxas`` gives it: ``path`` and ``version``
    (the ``--version`` line's release, e.g. ``"13.0"``)."""

    path: str
    version: str


class Knob:
    """One knob: a descriptor on a :class:`base_knobs` class reading and writing the setting
    ``key`` (a name of :data:`workbench.config.SETTINGS`) through
    :data:`workbench.config.settings`."""

    def __init__(self, key: str) -> None:
        config._known(key)
        self.key = key
        self.name = ""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return self.get()

    def get(self):
        """The value in force now (bool for on/off settings, str for text settings)."""
        if isinstance(config.SETTINGS[self.key], bool):
            return config.env_flag(self.key)
        return config.env_text(self.key)

    def __set__(self, obj, value) -> None:
        config.settings.set(self.key, None if isinstance(value, Env) else value)

    def __delete__(self, obj) -> None:
        config.settings.set(self.key, None)


class HookKnob:
    """A runtime hook knob (``launch_enter_hook``, ...): a callable or None, kept in
    ``config.settings.hooks`` and called as Triton calls it (:mod:`workbench.runtime.hooks`)."""

    def __init__(self) -> None:
        self.name = ""
        self.key = ""

    def __set_name__(self, owner, name: str) -> None:
        self.name = self.key = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return config.settings.hooks.get(self.name)

    def __set__(self, obj, value) -> None:
        config.settings.set_hook(self.name, None if isinstance(value, Env) else value)

    def __delete__(self, obj) -> None:
        config.settings.set_hook(self.name, None)


class _CacheDir(Knob):
    def get(self) -> str:
        return str(config.cache_dir())


class _Tool(Knob):
    def get(self) -> NvidiaTool:
        """The tool found (``$WORKBENCH_<TOOL>``, PATH, the ``sass`` extra). Raises
        RuntimeError when it is not installed, as Triton does."""
        from .backends.nvidia_tools import find_tool, tool_version
        tool = self.key.removeprefix("WORKBENCH_").lower()
        path = find_tool(tool)
        if path is None:
            raise RuntimeError(f"Cannot find {tool}: set WORKBENCH_{tool.upper()} or install "
                               "the 'sass' extra (pip install tile-workbench[sass])")
        line = tool_version(path)
        version = line.removeprefix("release ").split(",")[0].strip()
        return NvidiaTool(path, version)


class base_knobs:
    """A set of knobs (Triton's ``base_knobs``). ``_absent`` maps Triton's knob names that
    have no meaning here to the reason."""

    _absent: dict = {}

    @property
    def knob_descriptors(self) -> dict:
        """name -> :class:`Knob` (or :class:`HookKnob`) for every knob of this set."""
        return {k: v for cls in reversed(type(self).__mro__) for k, v in vars(cls).items()
                if isinstance(v, (Knob, HookKnob))}

    @property
    def knobs(self) -> dict:
        """name -> value in force, for every knob of this set."""
        return {k: getattr(self, k) for k in self.knob_descriptors}

    def copy(self):
        """Another view of the same settings (the values live in the config object)."""
        return type(self)()

    def reset(self):
        """Drop what was set on this set's knobs (back to the environment; hooks unset);
        returns self."""
        for knob in self.knob_descriptors.values():
            knob.__delete__(self)
        return self

    @contextlib.contextmanager
    def scope(self):
        """On exit, put back the values this set's knobs had been given on entry."""
        knobs = list(self.knob_descriptors.values())
        saved = [config.settings.hooks.get(k.key) if isinstance(k, HookKnob)
                 else config.settings.overrides.get(k.key) for k in knobs]
        try:
            yield
        finally:
            for k, v in zip(knobs, saved, strict=True):
                if isinstance(k, HookKnob):
                    config.settings.set_hook(k.key, v)
                else:
                    config.settings.set(k.key, v)

    def __getattr__(self, name):
        raise AttributeError(self._why(name))

    def __setattr__(self, name, value):
        if name not in self.knob_descriptors:
            raise AttributeError(self._why(name))
        super().__setattr__(name, value)

    def _why(self, name: str) -> str:
        where = f"knobs.{type(self).__name__.removesuffix('_knobs')}.{name}"
        if name in self._absent:
            return f"{where}: Triton's knob has no meaning in the workbench ({self._absent[name]})"
        return f"{where} is not a knob; the knobs of this set: {', '.join(self.knob_descriptors)}"


class runtime_knobs(base_knobs):
    """Launch-time settings: ``interpret`` (every launch on the interpreter), ``debug``
    (compile ``device_assert``), ``override_arch`` (the default of the ``arch`` option:
    ``"sm80"`` makes CUDA compiles take sm_80's decisions); the hooks
    ``launch_enter_hook``, ``launch_exit_hook``, ``jit_cache_hook``,
    ``jit_post_compile_hook`` (:mod:`workbench.runtime.hooks`)."""

    interpret = Knob("WORKBENCH_INTERPRET")
    debug = Knob("WORKBENCH_DEBUG")
    launch_enter_hook = HookKnob()
    launch_exit_hook = HookKnob()
    jit_cache_hook = HookKnob()
    jit_post_compile_hook = HookKnob()
    override_arch = Knob("WORKBENCH_OVERRIDE_ARCH")
    _absent = {**{h: _HOOK for h in ("kernel_load_start_hook", "kernel_load_end_hook",
                                     "add_stages_inspection_hook")}}


class compilation_knobs(base_knobs):
    """``always_compile``: compile even when the disk cache has the kernel."""

    always_compile = Knob("WORKBENCH_ALWAYS_COMPILE")
    _absent = {**{n: _DUMP for n in ("override", "dump_ir", "store_binary_only",
                                     "dump_ir_extract_di_local_variables", "use_ir_loc")},
               "disable_line_info": "every IR line keeps its source location",
               "enable_asan": "the CPU backend checks every access (WORKBENCH_BOUNDS_CHECK)",
               "front_end_debugging": "frontend errors always point at the kernel's line",
               "allow_non_constexpr_globals": "globals must be tl.constexpr, as in Triton",
               "instrumentation_mode": "the workbench has no instrumentation passes",
               "listener": "the workbench has no compile listener; see "
                           "knobs.runtime.jit_post_compile_hook"}


class cache_knobs(base_knobs):
    """``dir``: the cache folder (:func:`workbench.config.cache_dir`)."""

    dir = _CacheDir("WORKBENCH_CACHE_DIR")
    _absent = {n: "the workbench keeps one cache folder, knobs.cache.dir"
               for n in ("home_dir", "dump_dir", "override_dir", "manager_class",
                         "remote_manager_class")}


class autotuning_knobs(base_knobs):
    """``cache``: store autotuning results on disk; ``print``: print each tuning's timings."""

    cache = Knob("WORKBENCH_CACHE_AUTOTUNING")
    print = Knob("WORKBENCH_PRINT_AUTOTUNING")


class language_knobs(base_knobs):
    """``default_fp_fusion``: the default of the ``enable_fp_fusion`` launch option."""

    default_fp_fusion = Knob("WORKBENCH_DEFAULT_FP_FUSION")
    _absent = {"fp32_default": "give input_precision= to tl.dot"}


class nvidia_knobs(base_knobs):
    """``ptxas``, ``nvdisasm``: the tools found, as :class:`NvidiaTool` (assign a path)."""

    ptxas = _Tool("WORKBENCH_PTXAS")
    nvdisasm = _Tool("WORKBENCH_NVDISASM")
    _absent = {n: "the workbench runs ptxas itself and shows its report in compile_report"
               for n in ("cuobjdump", "ptxas_blackwell", "dump_nvptx", "disable_ptxas_opt",
                         "ptxas_options", "mock_ptx_version", "dump_ptxas_log",
                         "libdevice_path", "libcuda_path")}


class workbench_knobs(base_knobs):
    """The workbench's own settings (no Triton namesake): ``bounds_check``, ``cuda_mma``
    (``"auto"``, ``"v2"``, ``"v3"``), ``disk_cache``, ``cpu_prefer_256``."""

    bounds_check = Knob("WORKBENCH_BOUNDS_CHECK")
    cuda_mma = Knob("WORKBENCH_CUDA_MMA")
    disk_cache = Knob("WORKBENCH_DISK_CACHE")
    cpu_prefer_256 = Knob("WORKBENCH_CPU_PREFER_256")


runtime = runtime_knobs()
compilation = compilation_knobs()
cache = cache_knobs()
autotuning = autotuning_knobs()
language = language_knobs()
nvidia = nvidia_knobs()
workbench = workbench_knobs()

def refresh_knobs() -> None:
    """Triton re-reads its environment variables here; the workbench's knobs read the
    environment each time they are asked (:mod:`workbench.config`), so there is nothing to
    refresh."""


_ABSENT_SETS = {"amd": "the workbench has no AMD backend",
                "proton": "the workbench has no profiler (Triton's proton)",
                "build": "the workbench builds no C launcher",
                "redis": "the workbench has no remote cache"}


def __getattr__(name):
    if name in _ABSENT_SETS:
        raise AttributeError(f"knobs.{name}: Triton's knob set has no meaning in the workbench "
                             f"({_ABSENT_SETS[name]})")
    raise AttributeError(f"module 'workbench.knobs' has no attribute {name!r}")
