"""The notebook front end: ``%load_ext workbench`` (or ``%load_ext workbench.notebook``)
registers the ``%%tilekernel`` cell magic and puts ``jit`` and ``tl`` in the user's namespace.

This package is imported only when the extension is loaded; the compiler never imports it.
"""
from __future__ import annotations


def load_ipython_extension(ip) -> None:
    """Register ``%%tilekernel`` on the IPython shell ``ip`` and push ``jit``
    (:func:`workbench.jit`) and ``tl`` (:mod:`workbench.language`) into its user namespace."""
    from .magics import TileKernelMagics
    ip.register_magics(TileKernelMagics)
    from . import layout_magic
    layout_magic.register(ip)  # %tilelayout
    import workbench
    import workbench.language as tl
    ip.push({"jit": workbench.jit, "tl": tl})
    from .cells import cell_names
    cell_names(ip)   # errors and tables name notebook cells "In [12], line 5"
    from ..runtime.compiled import CompiledKernel
    ip.display_formatter.ipython_display_formatter.for_type(CompiledKernel, show_stage_view)


def show_stage_view(compiled) -> None:
    """Display ``compiled`` (a CompiledKernel that is a cell's last expression) as the live
    stage view (:func:`workbench.viz.stage_view`), which also carries the static HTML."""
    from IPython.display import display

    from ..viz.stage_widget import stage_view
    display(stage_view(compiled))


def unload_ipython_extension(ip) -> None:
    """Nothing to undo beyond IPython's own bookkeeping (magics stay until restart)."""
