"""Compile options and targets, and every ``WORKBENCH_*`` setting: the one place the package
reads the environment.

=============================  =======  ===================================================
variable                       default  effect
=============================  =======  ===================================================
``WORKBENCH_INTERPRET``        off      every launch runs on the interpreter target
``WORKBENCH_BOUNDS_CHECK``     on       the CPU backend checks every memory access
``WORKBENCH_DEBUG``            off      compile ``device_assert`` (Triton's ``debug=True``)
``WORKBENCH_CUDA_MMA``         auto     ``tl.dot`` on cuda:90: ``auto``/``v3`` (``wgmma``
                                        where it applies) or ``v2`` (always ``mma.sync``)
``WORKBENCH_CUDA_TMA``         on       tensor descriptors on cuda:90 use the TMA unit
                                        (``cp.async.bulk.tensor``); off: masked pointer
                                        loads and stores, as on cuda:80
``WORKBENCH_CACHE_DIR``        (none)   the cache folder (see :func:`cache_dir`)
``WORKBENCH_DISK_CACHE``       on       compiled kernels are stored on disk
``WORKBENCH_ALWAYS_COMPILE``   off      compile even on a disk cache hit, and rewrite it
``WORKBENCH_CACHE_AUTOTUNING`` off      autotuning results are stored on disk
``WORKBENCH_PRINT_AUTOTUNING`` off      print each autotuning's time and best config
``WORKBENCH_PTXAS``            (none)   path of ``ptxas`` (else ``PATH``, then the ``sass``
                                        extra's)
``WORKBENCH_NVDISASM``         (none)   path of ``nvdisasm`` (likewise)
``WORKBENCH_CPU_PREFER_256``   off      with AVX-512, keep LLVM's 256-bit vector preference
``WORKBENCH_DEFAULT_FP_FUSION`` on      the default of ``enable_fp_fusion`` (mul+add -> fma)
``WORKBENCH_OVERRIDE_ARCH``    (none)   the default of ``arch`` (``sm80``: CUDA kernels make
                                        sm_80's decisions whatever the GPU)
=============================  =======  ===================================================

On/off settings are read by :func:`env_flag`: unset or empty gives the default; ``0``,
``false``, ``no``, ``off`` (any case) are off; any other value is on. Text settings are read
by :func:`env_text` (stripped; empty when unset). The launch fast path keys its caches on
the raw values of :data:`LAUNCH_ENV`, read by :func:`env_reader`.

:data:`settings` is the one configuration object: a value set on it from Python (what
``workbench.knobs`` does, under Triton's knob names) overrides the environment variable of
the same name until it is dropped; the environment itself is never written.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from .errors import TargetError

#: the package version (``workbench.__version__``; part of the disk cache key)
VERSION = "0.1.0"

TARGETS = ("cpu", "cuda:80", "cuda:90", "interpreter")
#: every setting: name -> default (a bool for on/off settings, a str for text settings)
SETTINGS: dict[str, bool | str] = {
    "WORKBENCH_INTERPRET": False, "WORKBENCH_BOUNDS_CHECK": True, "WORKBENCH_DEBUG": False,
    "WORKBENCH_CUDA_MMA": "auto", "WORKBENCH_CUDA_TMA": True, "WORKBENCH_CACHE_DIR": "",
    "WORKBENCH_DISK_CACHE": True,
    "WORKBENCH_ALWAYS_COMPILE": False, "WORKBENCH_CACHE_AUTOTUNING": False,
    "WORKBENCH_PRINT_AUTOTUNING": False, "WORKBENCH_PTXAS": "", "WORKBENCH_NVDISASM": "",
    "WORKBENCH_CPU_PREFER_256": False, "WORKBENCH_DEFAULT_FP_FUSION": True,
    "WORKBENCH_OVERRIDE_ARCH": "",
}
#: the environment variables :meth:`Options.from_env` reads: the launch paths key their caches
#: on their raw values (workbench.runtime.jit, workbench.runtime.fastpath)
OPTION_ENV = ("WORKBENCH_BOUNDS_CHECK", "WORKBENCH_DEBUG", "WORKBENCH_CUDA_MMA",
              "WORKBENCH_CUDA_TMA", "WORKBENCH_DEFAULT_FP_FUSION", "WORKBENCH_OVERRIDE_ARCH")
#: the environment variables a launch's kernel depends on: the interpreter switch and the
#: options'
LAUNCH_ENV = ("WORKBENCH_INTERPRET",) + OPTION_ENV
_OFF = ("0", "false", "no", "off")
#: values of ``Options.cuda_mma`` / ``WORKBENCH_CUDA_MMA``: "auto" (wgmma on cuda:90 where it
#: applies), "v3" (the same), "v2" (always mma.sync).
CUDA_MMA_CHOICES = ("auto", "v2", "v3")


@dataclass(frozen=True)
class Target:
    """A compilation target: ``backend`` in {"cpu", "cuda", "interpreter"}, ``arch`` (80, 90)
    for cuda."""

    backend: str
    arch: int | None = None

    @staticmethod
    def parse(text) -> "Target":
        """Parse ``"cpu"``, ``"interpreter"``, ``"cuda"`` (= cuda:90), ``"cuda:80"``,
        ``"cuda:90"`` (``"sm_90"`` and ``"sm90"`` also accepted). Raises :class:`TargetError`."""
        if isinstance(text, Target):
            return text
        t = str(text).strip().lower()
        if t in ("cpu", "interpreter"):
            return Target(t)
        if t == "cuda":
            return Target("cuda", 90)
        for prefix in ("cuda:", "sm_", "sm"):
            if t.startswith(prefix):
                num = t[len(prefix):].rstrip("a")
                if num.isdigit() and int(num) in (80, 86, 89, 90):
                    return Target("cuda", int(num))
        raise TargetError(
            f"unknown target {text!r}; use one of {', '.join(TARGETS)}")

    def __str__(self) -> str:
        return f"cuda:{self.arch}" if self.backend == "cuda" else self.backend


def cache_dir() -> Path:
    """The one workbench cache folder: ``$WORKBENCH_CACHE_DIR`` if set (``~`` expanded), else
    ``platformdirs.user_cache_dir("tile-workbench")`` (``~/.cache/tile-workbench`` on Linux).
    Compiled kernels, autotuning results, measured ceilings (``ceilings/``) and notebook cell
    files (``cells/``) live under it. Read at each call; not created here."""
    env = env_text("WORKBENCH_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    try:
        import platformdirs
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return Path.home() / ".cache" / "tile-workbench"
    return Path(platformdirs.user_cache_dir("tile-workbench"))


def cuda_home() -> Path:
    """The CUDA toolkit folder: ``$CUDA_HOME``, else ``$CUDA_PATH``, else ``/usr/local/cuda``
    (the toolkit's conventions; used to find its ``nvvm/libdevice``). Read at each call."""
    return Path(os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or
                "/usr/local/cuda")


def _known(name: str) -> None:
    if name not in SETTINGS:
        raise KeyError(f"{name} is not a workbench setting; add it to config.SETTINGS")


class Settings:
    """The values set from Python over the environment: ``overrides`` maps a name of
    :data:`SETTINGS` to a bool (on/off settings) or a str (text settings); ``hooks`` maps a
    Triton runtime hook's name (``launch_enter_hook``, ... :mod:`workbench.runtime.hooks`) to
    the callable set; ``generation`` counts changes (the launch caches key on it). One
    instance, :data:`settings`."""

    def __init__(self) -> None:
        self.overrides: dict[str, bool | str] = {}
        self.hooks: dict[str, Any] = {}
        self.generation = 0

    def set_hook(self, name: str, fn) -> None:
        """Set runtime hook ``name`` to the callable ``fn`` (None removes it). Raises
        TypeError when ``fn`` is neither."""
        if fn is None:
            self.hooks.pop(name, None)
        elif not callable(fn):
            raise TypeError(f"{name} must be a callable or None, not {fn!r}")
        else:
            self.hooks[name] = fn
        self.generation += 1

    def set(self, name: str, value) -> None:
        """Override setting ``name`` with ``value`` (bool for on/off settings, else str);
        None drops the override. Raises KeyError for an unknown name, TypeError for a value
        of the wrong kind."""
        _known(name)
        if value is None:
            self.overrides.pop(name, None)
        elif isinstance(SETTINGS[name], bool):
            if not isinstance(value, (bool, int)):
                raise TypeError(f"{name} is on/off: give True or False, not {value!r}")
            self.overrides[name] = bool(value)
        else:
            if not isinstance(value, (str, os.PathLike)):
                raise TypeError(f"{name} is a text setting: give a str, not {value!r}")
            self.overrides[name] = os.fspath(value)
        self.generation += 1

    def snapshot(self) -> tuple:
        """A copy of the overrides and hooks, for :meth:`restore`."""
        return dict(self.overrides), dict(self.hooks)

    def restore(self, saved: tuple) -> None:
        """Put back overrides and hooks taken by :meth:`snapshot`."""
        self.overrides, self.hooks = dict(saved[0]), dict(saved[1])
        self.generation += 1


#: the one configuration object (see the module docstring)
settings = Settings()


def child_env(first_on_path: str | None = None, **extra: str) -> dict:
    """A copy of this process's environment for a child process, with ``first_on_path`` (when
    given) put first on ``PYTHONPATH`` (so the child imports the same ``workbench``) and the
    variables ``extra`` set on top."""
    over = {k: ("1" if v is True else "0" if v is False else str(v))
            for k, v in settings.overrides.items()}  # what knobs set reaches the child too
    env = dict(os.environ, **over, **extra)
    if first_on_path is not None:
        rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join([first_on_path] + rest)
    return env


def env_flag(name: str) -> bool:
    """The on/off setting ``name`` (a key of :data:`SETTINGS`), read now: unset or empty gives
    its default, ``0``/``false``/``no``/``off`` (any case, spaces ignored) off, anything else
    on; a value set on :data:`settings` wins. Raises KeyError for a name that is not a
    setting."""
    _known(name)
    if name in settings.overrides:
        return bool(settings.overrides[name])
    v = os.environ.get(name, "").strip().lower()
    return bool(SETTINGS[name]) if not v else v not in _OFF


def env_text(name: str) -> str:
    """The text setting ``name`` (a key of :data:`SETTINGS`), read now, stripped; its default
    (empty for most) when unset or empty; a value set on :data:`settings` wins. Raises
    KeyError for a name that is not a setting."""
    _known(name)
    if name in settings.overrides:
        return str(settings.overrides[name]).strip() or str(SETTINGS[name])
    return os.environ.get(name, "").strip() or str(SETTINGS[name])


def env_reader(names: tuple) -> Callable[[], tuple]:
    """A function returning the raw values of the settings ``names`` (bytes or str, as the
    platform keeps them; None when unset) followed by :data:`settings`' generation, for
    cache keys on the launch path, where ``os.environ.get`` (about 1 us per name: it encodes
    the key and decodes the value) would be a visible cost. When ``os.environ`` keeps its
    encoded mapping (``_data``, CPython on every platform) that mapping is read directly (the
    same values: ``os.environ[...] = ...`` and ``del`` update it), else ``os.environ.get`` is
    used. Raises KeyError for a name that is not a setting."""
    for n in names:
        _known(n)
    data = getattr(os.environ, "_data", None)
    encode = getattr(os.environ, "encodekey", None)
    if isinstance(data, dict) and callable(encode):
        try:
            keys = tuple(encode(n) for n in names)
            ok = all((data.get(k) is None) == (os.environ.get(n) is None)
                     for k, n in zip(keys, names, strict=True))
        except Exception:  # pragma: no cover - an unusual os.environ
            ok = False
        if ok:
            get = data.get
            return lambda: (*map(get, keys), settings.generation)
    return lambda: (*(os.environ.get(n) for n in names), settings.generation)


@dataclass(frozen=True)
class Options:
    """Options that change compiled code (all part of the cache key).

    ``num_warps``: warps per program (power of two, GPU; more than 32 compiles for the
    host targets, and a GPU target raises OutOfResources); ``num_stages``: software pipelining
    depth; ``bounds_check``: CPU backend checks every memory access against the launch's arrays
    (``WORKBENCH_BOUNDS_CHECK=0`` turns it off); ``debug``: compile ``device_assert``;
    ``enable_fp_fusion``: allow mul+add -> fma; ``cuda_mma``: which tensor-core instructions
    ``tl.dot`` uses on ``cuda:90`` (``"auto"``: ``wgmma`` (MMA v3) where it applies, else
    ``mma.sync``; ``"v2"``: always ``mma.sync`` (MMA v2), for A/B comparisons;
    ``WORKBENCH_CUDA_MMA=v2`` sets it); ``cuda_tma``: tensor descriptors on ``cuda:90`` go
    through the TMA unit where the kernel allows it (False: masked pointer accesses;
    ``WORKBENCH_CUDA_TMA=0`` sets it); ``launch_pdl``: launch with programmatic dependent
    launch (CUDA ``cuLaunchKernelEx`` with the programmatic stream serialization attribute,
    sm_90 and later; elsewhere it has no effect and a CUDA compile report says so), so the
    kernel may start while the previous one finishes (``tl.extra.cuda.gdc_wait``);
    ``num_ctas``: Triton's CTAs per program (a thread-block cluster on sm_90; power of two, at
    most 16). Every target here runs a program on one CTA, which computes the same values; a
    CUDA compile report says so when ``num_ctas`` is not 1. ``maxnreg``: CUDA registers per
    thread the kernel may use (``.maxnreg`` on its ``.entry``, PTX ISA 11.4.1, and
    ``"ttg.maxnreg"`` on the ttgir module, as Triton); None: ptxas decides.
    ``enable_reflect_ftz``: on CUDA, libdevice functions and ``tl.math.exp2`` flush fp32
    subnormal results to zero (libdevice's ``__nvvm_reflect("__CUDA_FTZ")`` answers 1;
    ``exp2`` is ``ex2.approx.ftz.f32``, else ``ex2.approx.f32``), Triton's default.
    ``arch``: ``"sm80"``/``"sm90"`` (Triton's ``arch`` option and ``TRITON_OVERRIDE_ARCH``):
    a CUDA compile makes that architecture's decisions (passes, layouts, instructions, the
    ttgir's ``ttg.target``) while ptxas still assembles for the GPU or target compiled for;
    None: the target's own.
    """

    num_warps: int = 4
    num_stages: int = 3
    bounds_check: bool = True
    debug: bool = False
    enable_fp_fusion: bool = True
    cuda_mma: str = "auto"
    cuda_tma: bool = True
    launch_pdl: bool = False
    num_ctas: int = 1
    maxnreg: int | None = None
    enable_reflect_ftz: bool = True
    arch: str | None = None

    def __post_init__(self):
        if self.arch is not None:
            arch_capability(self.arch)  # raises ValueError for a bad form
        mr = self.maxnreg
        if mr is not None and (not isinstance(mr, int) or isinstance(mr, bool) or mr < 1):
            raise ValueError(f"maxnreg must be None or a positive int (registers per thread), "
                             f"got {mr!r}")
        nw = self.num_warps
        if not isinstance(nw, int) or nw < 1 or nw & (nw - 1):
            raise ValueError(f"num_warps must be a power of 2, got {nw!r} (a GPU block "
                             "holds at most 1024 threads: 32 warps)")
        nc = self.num_ctas
        if not isinstance(nc, int) or nc < 1 or nc > 16 or nc & (nc - 1):
            raise ValueError(f"num_ctas must be a power of two from 1 to 16 (CTAs in a "
                             f"thread-block cluster), got {nc!r}")
        if not isinstance(self.num_stages, int) or self.num_stages < 1:
            raise ValueError(f"num_stages must be a positive int, got {self.num_stages!r}")
        if self.cuda_mma not in CUDA_MMA_CHOICES:
            raise ValueError(f"cuda_mma must be one of {', '.join(CUDA_MMA_CHOICES)}, got "
                             f"{self.cuda_mma!r} (WORKBENCH_CUDA_MMA)")

    @staticmethod
    def from_env(**overrides) -> "Options":
        """Options from the environment variables in :data:`OPTION_ENV`, then ``overrides``."""
        base = Options(arch=env_text("WORKBENCH_OVERRIDE_ARCH") or None,
                       bounds_check=env_flag("WORKBENCH_BOUNDS_CHECK"),
                       debug=env_flag("WORKBENCH_DEBUG"),
                       enable_fp_fusion=env_flag("WORKBENCH_DEFAULT_FP_FUSION"),
                       cuda_mma=env_text("WORKBENCH_CUDA_MMA").lower(),
                       cuda_tma=env_flag("WORKBENCH_CUDA_TMA"))
        return replace(base, **overrides)


def arch_capability(arch: str) -> int:
    """The compute capability of an ``arch`` option, ``"sm80"`` -> 80 (Triton's form,
    ``^sm(\\d+)$``). Raises ValueError for any other text."""
    m = re.fullmatch(r"sm(\d+)", str(arch))
    if not m:
        raise ValueError(f"arch must have the form sm<capability> (e.g. 'sm80', 'sm90'), "
                         f"got {arch!r}")
    return int(m.group(1))


@dataclass
class CompileContext:
    """Per-compile state passed explicitly (no globals): whether to keep IR snapshots after each
    pass, and where timings go. ``snapshots[stage]`` is a list of ``(pass_name, text)``;
    ``timings`` maps a step name to seconds."""

    keep_snapshots: bool = False
    snapshots: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
