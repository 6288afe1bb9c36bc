"""Launch grids: an int, a tuple of 1..3 ints, or a callable of the launch's meta-parameters."""
from __future__ import annotations

import numbers

from ..errors import LaunchError

#: largest grid per axis on every backend (CUDA's limits: x < 2**31, y and z <= 65535)
_MX, _MYZ = 2 ** 31 - 1, 65535


def grid3_fast(grid):
    """The 3-D grid of a plain ``grid``: an int >= 0 or a tuple/list of 1 to 3 ints >= 0
    (exactly ``int``, not bool or numpy ints) within the device limits (x < 2**31, y and
    z <= 65535); None for anything else (then :func:`normalize_grid` decides, with its
    errors, and the kernel's launch checks the limits). The launch fast path's grid."""
    t = type(grid)
    if t is tuple or t is list:
        n = len(grid)
        if n == 1:
            x = grid[0]
            if type(x) is int and 0 <= x <= _MX:
                return (x, 1, 1)
        elif n == 2:
            x, y = grid
            if type(x) is int and type(y) is int and 0 <= x <= _MX and 0 <= y <= _MYZ:
                return (x, y, 1)
        elif n == 3:
            x, y, z = grid
            if type(x) is int and type(y) is int and type(z) is int and \
                    0 <= x <= _MX and 0 <= y <= _MYZ and 0 <= z <= _MYZ:
                return (x, y, z)
        return None
    if t is int and 0 <= grid <= _MX:
        return (grid, 1, 1)
    return None


def normalize_grid(grid, meta: dict | None = None, fn=None) -> tuple[int, int, int]:
    """The 3-D grid ``(x, y, z)`` (numbers of programs per axis) of a launch.

    ``grid``: an int, a tuple or list of 1 to 3 ints (missing trailing dims are 1), or a
    callable taking ``meta`` (the dict of every bound argument, constexprs included, and the
    launch options ``num_warps``/``num_stages``) and returning one of those (as Triton's
    ``JITFunction.run``).
    Raises :class:`LaunchError` for anything else or a negative size; with ``fn`` (the
    kernel's Python function) the error points at the kernel's ``def`` line."""
    try:
        return _normalize(grid, meta)
    except LaunchError as e:
        if fn is None:
            raise
        from .binding import launch_error
        raise launch_error(fn, str(e), "Pass the grid as an int, a tuple of 1 to 3 ints >= 0 "
                           "or a function of the meta-parameters returning one.") from None


def _normalize(grid, meta: dict | None) -> tuple[int, int, int]:
    if callable(grid):
        try:
            grid = grid(dict(meta or {}))
        except KeyError as e:
            raise LaunchError(
                f"the grid function asked for {e} which is not a parameter or option of the "
                f"launch; it gets {sorted(meta or {})}") from None
    fast = grid3_fast(grid)
    if fast is not None:
        return fast
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
    return out[0], out[1], out[2]
