"""Compile options and targets: one typed configuration object with ``WORKBENCH_*`` overrides."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import TargetError

#: the package version (``workbench.__version__``; part of the disk cache key)
VERSION = "0.1.0"

TARGETS = ("cpu", "cuda:80", "cuda:90", "interpreter")
#: the environment variables :meth:`Options.from_env` reads: the launch paths key their caches
#: on their raw values (workbench.runtime.jit, workbench.runtime.fastpath)
OPTION_ENV = ("WORKBENCH_BOUNDS_CHECK", "WORKBENCH_DEBUG", "WORKBENCH_CUDA_MMA")
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
    env = os.environ.get("WORKBENCH_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    try:
        import platformdirs
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return Path.home() / ".cache" / "tile-workbench"
    return Path(platformdirs.user_cache_dir("tile-workbench"))


def _env_bool(name: str, default: bool) -> bool:
    v = os.environ.get(name)
    if v is None:
        return default
    return v.strip().lower() not in ("0", "false", "no", "off", "")


@dataclass(frozen=True)
class Options:
    """Options that change compiled code (all part of the cache key).

    ``num_warps``: warps per program (power of two, GPU); ``num_stages``: software pipelining
    depth; ``bounds_check``: CPU backend checks every memory access against the launch's arrays
    (``WORKBENCH_BOUNDS_CHECK=0`` turns it off); ``debug``: compile ``device_assert``;
    ``enable_fp_fusion``: allow mul+add -> fma; ``cuda_mma``: which tensor-core instructions
    ``tl.dot`` uses on ``cuda:90`` (``"auto"``: ``wgmma`` (MMA v3) where it applies, else
    ``mma.sync``; ``"v2"``: always ``mma.sync`` (MMA v2), for A/B comparisons;
    ``WORKBENCH_CUDA_MMA=v2`` sets it).
    """

    num_warps: int = 4
    num_stages: int = 3
    bounds_check: bool = True
    debug: bool = False
    enable_fp_fusion: bool = True
    cuda_mma: str = "auto"

    def __post_init__(self):
        nw = self.num_warps
        if not isinstance(nw, int) or nw < 1 or nw & (nw - 1) or nw > 32:
            raise ValueError(f"num_warps must be a power of two between 1 and 32, got {nw!r}")
        if not isinstance(self.num_stages, int) or self.num_stages < 1:
            raise ValueError(f"num_stages must be a positive int, got {self.num_stages!r}")
        if self.cuda_mma not in CUDA_MMA_CHOICES:
            raise ValueError(f"cuda_mma must be one of {', '.join(CUDA_MMA_CHOICES)}, got "
                             f"{self.cuda_mma!r} (WORKBENCH_CUDA_MMA)")

    @staticmethod
    def from_env(**overrides) -> "Options":
        """Options from the environment variables in :data:`OPTION_ENV`, then ``overrides``."""
        mma = os.environ.get("WORKBENCH_CUDA_MMA", "").strip().lower() or "auto"
        base = Options(bounds_check=_env_bool("WORKBENCH_BOUNDS_CHECK", True),
                       debug=_env_bool("WORKBENCH_DEBUG", False), cuda_mma=mma)
        return replace(base, **overrides)


@dataclass
class CompileContext:
    """Per-compile state passed explicitly (no globals): whether to keep IR snapshots after each
    pass, and where timings go. ``snapshots[stage]`` is a list of ``(pass_name, text)``;
    ``timings`` maps a step name to seconds."""

    keep_snapshots: bool = False
    snapshots: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
