"""The interface every backend implements: a target, its stages, compile, launch, and the
backend's part of a cache entry.

A backend turns a ttir module into stage texts (with a line map each) and a launcher;
:meth:`Backend.pack` turns what the launcher needs into bytes and :meth:`Backend.load` turns
those bytes back into a launcher, so the on-disk cache stores kernels without knowing any
target.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .lazy import LazyText


@dataclass
class Stage:
    """One stage's text and, per line, the source Location it came from (or None); or a
    :class:`~workbench.backends.lazy.LazyText` that makes both when the stage is read."""

    name: str
    text: str | LazyText
    line_locs: list = field(default_factory=list)


@dataclass(frozen=True)
class PointerArg:
    """A pointer argument at launch: ``address`` of the first element, and the byte range
    ``[lo, hi)`` (absolute addresses) of the memory the array or view covers, used by bounds
    checks. ``itemsize`` in bytes. ``obj`` keeps the array alive."""

    address: int
    lo: int
    hi: int
    itemsize: int
    obj: object = None


@dataclass
class KernelMetadata:
    """What Triton's ``compiled.metadata`` offers: ``name``, ``target`` (str), ``num_warps``,
    ``num_stages``, ``shared`` (bytes of shared memory), ``n_regs`` and ``n_spills`` (from
    ptxas, None when it did not run)."""

    name: str
    target: str
    num_warps: int
    num_stages: int
    shared: int = 0
    n_regs: int | None = None
    n_spills: int | None = None


@dataclass
class BackendResult:
    """What :meth:`Backend.compile` returns: stages in order (after ``ttir``), metadata, and a
    ``launcher(grid3, runtime_args)`` callable (None when the target cannot run here; then
    ``launch_error`` says why in words)."""

    stages: list
    metadata: KernelMetadata
    launcher: Callable[..., None] | None = None
    launch_error: str | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class Loaded:
    """What :meth:`Backend.load` returns: the ``launcher`` (None when the target cannot run
    here; then ``launch_error`` says why), ``extra`` entries to add to the kernel's, and
    ``repacked``: new bytes for the entry when loading learned something worth keeping (the
    CPU backend's machine code), else None."""

    launcher: Callable[..., None] | None
    launch_error: str | None = None
    extra: dict = field(default_factory=dict)
    repacked: bytes | None = None


class Backend:
    """Base class. ``target``: a :class:`workbench.config.Target`. ``stage_names``: the stages it
    produces after ``ttir`` (``ttgir``, ``llir``, ``ptx``, ``cubin``, ``sass`` or ``llir``,
    ``asm``)."""

    def __init__(self, target):
        self.target = target

    @property
    def stage_names(self) -> tuple:
        """The stages this backend produces after ``ttir``, in order."""
        return ()

    def compile(self, ttir_module, spec, options, ctx) -> BackendResult:  # pragma: no cover
        raise NotImplementedError

    def cache_key(self) -> tuple:
        """Everything about the backend that changes its output (tool versions...)."""
        return (str(self.target),)

    def pack(self, kernel) -> bytes | None:
        """What :meth:`load` needs to launch ``kernel`` (a compiled kernel of this backend:
        ``asm``, ``metadata``, ``extra``, ``launcher``) again in another process, or None when
        this backend's kernels cannot be reloaded (then they are not stored)."""
        return None

    def load(self, data: bytes) -> Loaded:
        """A :class:`Loaded` launcher from :meth:`pack`'s bytes. Raises (ValueError, or what
        the backend's tools raise) on bytes it cannot use; the caller then recompiles."""
        raise ValueError(f"the {self.target} backend does not reload kernels")

    def lazy_stages(self, data: bytes) -> dict:
        """``{stage: LazyText}`` for the stages made on first read that :meth:`pack`'s bytes
        can make again (a cached kernel whose stage was never read); none by default."""
        return {}
