"""Pictures and views: IR panes side by side (:mod:`workbench.viz.ir_view`), pass-by-pass diffs
(:mod:`workbench.viz.snapshot_view`), layout and bank pictures, rooflines.

Submodules are imported on first use, so ``import workbench.viz`` stays cheap and pulls in no
plotting library: ``workbench.viz.render_compiled(compiled)`` loads the IR view only.
"""
from __future__ import annotations

import importlib

from ..runtime import views as _views

_LAZY = {
    "render_compiled": "ir_view",
    "render_stages": "ir_view",
    "render_snapshots": "snapshot_view",
    "compile_report": "ir_view",
    "layout_figure": "layout_view",
    "banks_figure": "bank_view",
    "layout_picture": "layout_svg",
    "banks_picture": "bank_view",
    "layout_explorer": "explorer",
    "value_layouts": "layouts_of",
    "roofline_points": "roofline",
    "sweep_figure": "sweep_view",
    "stage_view": "stage_widget",
    "stage_diff": "stage_widget",
    "pass_diff": "stage_diffs",
    "triton_diff": "stage_diffs",
    "compiled_stage_data": "stage_data",
}
# short names: viz.layout(layout, shape), viz.banks(...): the SVG views (the matplotlib figures
# stay as layout_figure / banks_figure). (The explorer is viz.layout_explorer(): the name
# `explorer` is its submodule's.)
_ALIASES = {"layout": ("layout_svg", "layout_picture"), "banks": ("bank_view", "banks_picture")}

__all__ = sorted(list(_LAZY) + list(_ALIASES) + ["access_map", "autotune_view", "roofline"])


# the views the runtime's objects show (workbench.runtime.views): registered on import, each
# loading its module on first use
def _compiled_html(kernel) -> str:
    from .ir_view import render_compiled
    return render_compiled(kernel)


def _layouts(kernel):
    from .layouts_of import layouts
    return layouts(kernel)


def _sweep_figure(result, ax=None, logx=None):
    from .sweep_view import sweep_figure
    return sweep_figure(result, ax=ax, logx=logx)


_views.register("compiled_html", _compiled_html)
_views.register("layouts", _layouts)
_views.register("sweep_figure", _sweep_figure)

# functions named like their modules are bound eagerly, so importing the submodule (which sets
# the package attribute to the module) cannot shadow them; neither imports matplotlib at import
from .access_map import access_map  # noqa: E402, F401
from .autotune_view import autotune_view  # noqa: E402, F401
from .roofline import roofline  # noqa: E402, F401


def __getattr__(name: str):
    if name in _ALIASES:
        mod, attr = _ALIASES[name]
        return getattr(importlib.import_module(f"{__name__}.{mod}"), attr)
    lazy = _LAZY.get(name)
    if lazy is None:
        raise AttributeError(f"module 'workbench.viz' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{lazy}"), name)
