"""How the compiler's objects show themselves in a notebook without importing the notebook.

The runtime's objects ask this registry for a view by name: a compiled kernel's HTML
(``"compiled_html"``: ``kernel -> str``), its table of ttgir layouts (``"layouts"``:
``kernel -> LayoutTable``), a sweep's plot (``"sweep_figure"``: ``(result, ax, logx) ->
Figure``). The Face (:mod:`workbench.viz`) registers its views with :func:`register` when it
is imported. So that a user who only ran ``import workbench`` still gets the rich view, the
first request for a view that nobody registered imports the Face package by name
(:data:`FACE`), as a plug-in is found; the compiler itself never imports it, and it works
without it (callers keep a plain fallback when :func:`lookup` returns None).
"""
from __future__ import annotations

import importlib
from typing import Callable

#: the package that registers the rich views when it is imported
FACE = "workbench.viz"

_VIEWS: dict[str, Callable] = {}


def register(name: str, view: Callable) -> None:
    """Make ``view`` the view called ``name`` (a later registration replaces an earlier one)."""
    _VIEWS[name] = view


def lookup(name: str) -> Callable | None:
    """The view called ``name``, loading :data:`FACE` first if nothing registered it yet;
    None when no view of that name exists (the Face is not installed, or has none)."""
    view = _VIEWS.get(name)
    if view is None:
        try:
            importlib.import_module(FACE)
        except ImportError:
            return None
        view = _VIEWS.get(name)
    return view
