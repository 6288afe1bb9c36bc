"""Errors raised by :mod:`workbench.layouts`.

The layout package imports nothing else of ours, so its error is a plain :class:`ValueError`
subclass; callers higher up (the IR parser, the passes) wrap it with a source location.
"""
from __future__ import annotations


class LayoutError(ValueError):
    """A layout is malformed or an operation on it is impossible.

    The message always names the offending parameter (``threadsPerWarp``, ``order``...) or the
    offending token of a layout string, and says what was expected.
    """
