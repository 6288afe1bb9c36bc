"""Python's cyclic garbage collector paused while a kernel compiles.

A compile allocates hundreds of thousands of small objects that live until it ends (IR ops
and values, llvmlite instructions with their parent links, layout tables). Each time the
allocations outnumber the frees by 700 (CPython's default threshold), the collector walks
the young objects, and every tenth of those walks the older ones too: on tutorial 06's
attention backward kernel that was 0.2 s of a 1.3 s compile (160 collections), on the
128x256x64 matmul 0.01-0.02 s. Nothing the compiler builds depends on when collections
happen (reference counting frees acyclic garbage at once either way), so the collector is
switched off for the compile and back on afterwards; the garbage with cycles (llvmlite's
IR) is then freed by the first young-generation collection after the compile, one walk
instead of hundreds.

Process-wide state, handled with care: the collector is only switched back on when the
last of several overlapping compiles (threads, nested compiles) ends, and only if it was on
when the first one began (a program that turned it off keeps it off).
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_state = {"depth": 0, "was_enabled": False}


@contextmanager
def gc_paused() -> Iterator[None]:
    """Context manager: no automatic cyclic garbage collection inside (``gc.disable``);
    the collector's earlier state is restored when the outermost such block ends, also on
    an exception. Explicit ``gc.collect()`` calls still work inside."""
    with _LOCK:
        if _state["depth"] == 0:
            _state["was_enabled"] = gc.isenabled()
            gc.disable()
        _state["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _state["depth"] -= 1
            if _state["depth"] == 0 and _state["was_enabled"]:
                gc.enable()


__all__ = ["gc_paused"]
