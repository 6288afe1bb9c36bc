"""Launch grids: an int, a tuple of 1..3 ints, or a callable of the launch's meta-parameters."""
from __future__ import annotations

import numbers

from ..errors import LaunchError


def normalize_grid(grid, meta: dict | None = None) -> tuple[int, int, int]:
    """The 3-D grid ``(x, y, z)`` (numbers of programs per axis) of a launch.

    ``grid``: an int, a tuple or list of 1 to 3 ints (missing trailing dims are 1), or a
    callable taking ``meta`` (the dict of every bound argument, constexprs included, and the
    launch options ``num_warps``/``num_stages``) and returning one of those (Triton §2.2).
    Raises :class:`LaunchError` for anything else or a negative size."""
    if callable(grid):
        try:
            grid = grid(dict(meta or {}))
        except KeyError as e:
            raise LaunchError(
                f"the grid function asked for {e} which is not a parameter or option of the "
                f"launch; it gets {sorted(meta or {})}") from None
    if isinstance(grid, numbers.Integral) and not isinstance(grid, bool):
        dims = [grid]
    elif isinstance(grid, (tuple, list)):
        dims = list(grid)
    else:
        raise LaunchError(f"grid must be an int, a tuple of 1 to 3 ints or a function of the "
                          f"launch's meta-parameters returning one; got {grid!r}")
    if not 1 <= len(dims) <= 3:
        raise LaunchError(f"grid must have 1 to 3 dimensions; got {tuple(dims)!r}")
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise LaunchError(f"grid sizes must be ints; got {tuple(dims)!r}")
        if d < 0:
            raise LaunchError(f"grid sizes must be >= 0; got {tuple(dims)!r}")
        out.append(int(d))
    while len(out) < 3:
        out.append(1)
    return tuple(out)
