"""The live stage view: an anywidget whose front end (``static/stage_widget.js`` and ``.css``,
shipped inside the package and read at import: no npm, no build step) draws the data of
:func:`workbench.viz.stage_data.compiled_stage_data` in JupyterLab, Notebook 7 and VS Code.

Its mimebundle also carries the static HTML view (:func:`workbench.viz.ir_view.render_compiled`,
hover linking by CSS and an inline script) as ``text/html``, so nbviewer, GitHub and anything
without a widget manager still show the stages; ``text/plain`` is the kernel's repr.
"""
from __future__ import annotations

from importlib import resources

import anywidget
import traitlets

from .lexers import style_css
from .stage_data import compiled_stage_data

__all__ = ["StageView", "stage_view", "default_visible"]

# preference order of the panes shown at first when no stages are asked for (every text stage
# is still sent and can be ticked on)
_FIRST_SHOWN = ("ttgir", "ptx", "sass", "llir", "asm", "ttir")


def _static(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


_ESM = _static("stage_widget.js")
_CSS = _static("stage_widget.css") + "\n" + style_css(".wb-sw .wb-code")


def default_visible(names: list[str]) -> list[str]:
    """The stages shown at first: up to three of ``names`` by :data:`_FIRST_SHOWN`, kept in
    ``names``' (compile) order; all of them when there are three or fewer."""
    if len(names) <= 3:
        return list(names)
    picked = [n for n in _FIRST_SHOWN if n in names][:3]
    return [n for n in names if n in picked]


class StageView(anywidget.AnyWidget):
    """The stage view widget: ``data`` (see :func:`compiled_stage_data`) drawn by the bundled
    ES module; ``static_html`` (the fallback rendering) and ``plain`` go into the mimebundle
    beside the widget view."""

    _esm = _ESM
    _css = _CSS
    data = traitlets.Dict().tag(sync=True)

    def __init__(self, data: dict, static_html: str = "", plain: str = "", **kwargs):
        super().__init__(data=data, **kwargs)
        self._static_html = static_html
        self._plain = plain

    def _repr_mimebundle_(self, **kwargs):
        out = super()._repr_mimebundle_(**kwargs)
        if out is None:
            return None
        bundle, meta = out if isinstance(out, tuple) else (out, {})
        bundle = dict(bundle)
        if self._static_html:
            bundle["text/html"] = self._static_html
        if self._plain:
            bundle["text/plain"] = self._plain
        return bundle, meta


def stage_view(compiled, stages=None):
    """The live stage view of a compiled kernel (``workbench.compile(...)`` or what a launch
    returns). ``stages``: the panes shown at first (a list or a comma-separated string; default
    up to three of ttgir, ptx, sass, llir, asm, ttir); every text stage can be ticked on in the
    view."""
    from .ir_view import render_compiled
    if isinstance(stages, str):
        stages = [s.strip() for s in stages.split(",") if s.strip()]
    data = compiled_stage_data(compiled, stages)
    if not stages:
        data["visible"] = default_visible([p["stage"] for p in data["panes"]])
    return StageView(data, render_compiled(compiled, stages), repr(compiled))
