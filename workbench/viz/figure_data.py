"""Data attached to the matplotlib figures the views return (``fig.workbench_data``,
``fig.workbench_labels``...), so tests and users read what was drawn as data, not pixels."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only
    from matplotlib.figure import Figure


def attach(fig: Figure, **data: Any) -> Figure:
    """Set each keyword argument as an attribute of ``fig`` (``attach(fig,
    workbench_data=own)`` makes ``fig.workbench_data``); returns ``fig``."""
    for name, value in data.items():
        setattr(fig, name, value)
    return fig
