"""The static rendering a live view carries for places where its widget cannot load.

A live view (an anywidget) is sent as a mimebundle: the widget view, its static HTML rendering
(``text/html``) and a plain-text repr. A front end with a widget manager (JupyterLab, Notebook
7, VS Code's Jupyter extension) draws the widget and never shows the HTML; nbviewer, GitHub, a
page without the widget front end or an exported HTML file show the HTML instead. So whenever
the static rendering is seen, the live widget did not load, and its first line says so
(:func:`notice`), in words and as ``data-wb-fallback`` for tests.
"""
from __future__ import annotations

import html

_STYLE = ("font:12px/1.5 system-ui,sans-serif;color:#6b4a00;background:#fff6d9;"
          "border-left:3px solid #e0a800;padding:1px 8px;margin:0 0 4px;white-space:nowrap;"
          "overflow:hidden;text-overflow:ellipsis")


def notice(what: str) -> str:
    """One line of HTML (``<div data-wb-fallback="1">``) saying that the static rendering of
    ``what`` (e.g. ``"stage view"``) is shown because the live widget did not load, and what
    the live one needs; the full sentence is also its tooltip."""
    text = (f"Static {what}: the live widget did not load here (it needs a running kernel and "
            "a widget front end: JupyterLab, Notebook 7 or VS Code's Jupyter extension).")
    return (f'<div data-wb-fallback="1" class="wb-fallback-note mathjax_ignore tex2jax_ignore"'
            f' style="{_STYLE}" title="{html.escape(text)}">{html.escape(text)}</div>')


def with_fallback(out, static_html: str, plain: str, what: str):
    """``out`` (what ``anywidget.AnyWidget._repr_mimebundle_`` returned: a bundle or a
    ``(bundle, metadata)`` pair, or None) with ``text/html`` set to :func:`notice` followed by
    ``static_html`` (when given) and ``text/plain`` set to ``plain`` (when given); returns the
    ``(bundle, metadata)`` pair, or None for None."""
    if out is None:
        return None
    bundle, meta = out if isinstance(out, tuple) else (out, {})
    bundle = dict(bundle)
    if static_html:
        bundle["text/html"] = notice(what) + static_html
    if plain:
        bundle["text/plain"] = plain
    return bundle, meta
