"""Pictures and views: IR panes side by side (:mod:`workbench.viz.ir_view`), pass-by-pass diffs
(:mod:`workbench.viz.snapshot_view`), layout and bank pictures, rooflines.

Submodules are imported on first use, so ``import workbench.viz`` stays cheap and pulls in no
plotting library: ``workbench.viz.render_compiled(compiled)`` loads the IR view only.
"""
from __future__ import annotations

import importlib

_LAZY = {
    "render_compiled": "ir_view",
    "render_stages": "ir_view",
    "render_snapshots": "snapshot_view",
    "compile_report": "ir_view",
    "layout_figure": "layout_view",
    "banks_figure": "bank_view",
    "layout_explorer": "explorer",
    "value_layouts": "layouts_of",
    "roofline_points": "roofline",
    "sweep_figure": "sweep_view",
}
# the short names issue 4 gives them: viz.layout(layout, shape), viz.banks(...). (The explorer
# is viz.layout_explorer(): the name `explorer` is its submodule's.)
_ALIASES = {"layout": ("layout_view", "layout_figure"), "banks": ("bank_view", "banks_figure")}

__all__ = sorted(list(_LAZY) + list(_ALIASES) + ["autotune_view", "roofline"])

# functions named like their modules are bound eagerly, so importing the submodule (which sets
# the package attribute to the module) cannot shadow them; neither imports matplotlib at import
from .autotune_view import autotune_view  # noqa: E402, F401
from .roofline import roofline  # noqa: E402, F401


def __getattr__(name: str):
    if name in _ALIASES:
        mod, attr = _ALIASES[name]
        return getattr(importlib.import_module(f"{__name__}.{mod}"), attr)
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'workbench.viz' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)
