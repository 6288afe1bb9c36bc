"""Stages made on first use: a backend hands out a :class:`LazyText` in place of a stage text
that is costly and seldom read (the SASS listing, which ``nvdisasm`` takes seconds to make),
and the compiled kernel keeps its ``asm`` and ``line_maps`` in :class:`StageMap` s that make it
when someone reads that stage. Compiling for a launch or for a view of other stages never
runs the tool."""
from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any


class LazyText:
    """One stage's ``(text, line_locs)``, made by ``make()`` the first time :meth:`get` is
    called and kept. An exception from ``make`` propagates to the reader (and ``make`` runs
    again at the next read)."""

    def __init__(self, make: Callable[[], tuple[str, list]]):
        self._make = make
        self._value: tuple[str, list] | None = None

    @property
    def done(self) -> bool:
        """True once the text was made."""
        return self._value is not None

    def get(self) -> tuple[str, list]:
        """``(text, line_locs)``, made now if not yet."""
        if self._value is None:
            self._value = self._make()
        return self._value


class StageMap(MutableMapping):
    """``stage -> value`` in insertion (compile) order, where a value may be a
    :class:`LazyText`: reading it makes the stage and returns its text (``part = 0``, the
    ``asm`` map) or its line map passed through ``fit(locs, text)`` (``part = 1``, the
    ``line_maps`` map). Iterating, ``in`` and ``len`` make nothing."""

    def __init__(self, items: Any = (), part: int = 0,
                 fit: Callable[[list, str], list] | None = None):
        self._data: dict = dict(items)
        self._part = part
        self._fit = fit

    def __getitem__(self, key):
        v = self._data[key]
        if not isinstance(v, LazyText):
            return v
        text, locs = v.get()
        if self._part == 0:
            return text
        return self._fit(locs, text) if self._fit is not None else list(locs)

    def __setitem__(self, key, value) -> None:
        self._data[key] = value

    def __delitem__(self, key) -> None:
        del self._data[key]

    def __iter__(self) -> Iterator:
        return iter(self._data)

    def __contains__(self, key) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def pending(self) -> list:
        """Names of the stages not made yet."""
        return [k for k, v in self._data.items() if isinstance(v, LazyText) and not v.done]

    def resolved(self) -> dict:
        """A plain dict of the stages already made (for the disk cache: a stage not made is
        made again from the backend's part when the entry is loaded)."""
        return {k: self[k] for k, v in self._data.items()
                if not isinstance(v, LazyText) or v.done}

    def __repr__(self) -> str:
        shown = {k: ("<not made yet>" if isinstance(v, LazyText) and not v.done else "...")
                 for k, v in self._data.items()}
        return f"StageMap({shown})"


__all__ = ["LazyText", "StageMap"]
