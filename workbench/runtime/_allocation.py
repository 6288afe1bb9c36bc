"""The global-memory allocator for kernels that need scratch memory at launch
(``workbench.set_allocator``, Triton's ``triton.set_allocator``).

An allocator is called as ``allocator(size_bytes, alignment_bytes, stream)`` and returns an
object with ``data_ptr()`` (a torch tensor, a numpy-backed buffer...). The default,
:class:`NullAllocator`, refuses. The setting is per context (a ``contextvars.ContextVar``),
as in Triton. A kernel that builds tensor maps in global scratch (device-side tensor
descriptors lowered to TMA on ``cuda:90``) calls it at every launch for ``scratch bytes per
program * programs`` bytes, 128-byte aligned, with the current stream
(:class:`workbench.backends.descriptors.ScratchLauncher`); no other kernel asks for scratch.
Unlike Triton, such a launch without an allocator set does not fail: it uses a device buffer
the kernel keeps (grown when a launch needs more), which is safe while its launches share
one stream; set an allocator to launch one kernel on several streams at once.
"""
from __future__ import annotations

from contextvars import ContextVar

from ..errors import LaunchError


class NullAllocator:
    """The default allocator: any request raises :class:`LaunchError`."""

    def __call__(self, size: int, alignment: int, stream):
        raise LaunchError("this kernel needs global scratch memory at launch but no allocator "
                          "was set; call workbench.set_allocator(fn) with "
                          "fn(size, alignment, stream) returning a buffer")


_NULL = NullAllocator()
_allocator: ContextVar = ContextVar("workbench_allocator", default=None)


def set_allocator(allocator) -> None:
    """Set the allocator called for launch-time scratch memory (see the module docstring).
    Raises TypeError when ``allocator`` is not callable."""
    if not callable(allocator):
        raise TypeError(f"set_allocator takes a callable (size, alignment, stream) -> buffer, "
                        f"not {allocator!r}")
    _allocator.set(allocator)


def get_allocator():
    """The allocator set in this context (:class:`NullAllocator` by default)."""
    got = _allocator.get()
    return _NULL if got is None else got


def current_allocator():
    """The allocator set in this context, or None when none was set (a launch of a kernel
    that needs scratch then uses a buffer of its own)."""
    return _allocator.get()
