"""Broadcasting rules (Triton's ``triton-semantics.rst``), a mixin of
:class:`~workbench.language.semantic. Semantic`: NumPy-style shape broadcasting, splats,
``expand_dims`` and ``x[:, None]``."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .core import LanguageError, PyScalar, constexpr

if TYPE_CHECKING:  # annotations only
    from .core import tensor
    from .dtypes import dtype


def _unwrap(v):
    return v.value if isinstance(v, constexpr) else v


class BroadcastRules:
    """Needs ``to_tensor``, ``constant`` and ``_op`` of the Semantic."""

    if TYPE_CHECKING:  # provided by Semantic, the class this is mixed into
        def to_tensor(self, x) -> tensor: ...
        def _op(self, name, operands, d, shape, attrs=None) -> tensor: ...
        def constant(self, value, d: dtype, shape=()) -> tensor: ...

    def broadcast_shapes(self, a: tuple, b: tuple) -> tuple:
        """NumPy broadcasting of two block shapes (pad on the left; equal or 1)."""
        n = max(len(a), len(b))
        a = (1,) * (n - len(a)) + tuple(a)
        b = (1,) * (n - len(b)) + tuple(b)
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y and x != 1 and y != 1:
                raise LanguageError(f"incompatible tile shapes {list(a)} and {list(b)} "
                                    f"(dimension {i}: {x} vs {y})",
                                    "both operands must have the same shape, or size 1 in the "
                                    "dimensions that differ (use x[:, None] / x[None, :])")
            out.append(max(x, y))
        return tuple(out)

    def broadcast_to_shape(self, x, shape: tuple) -> tensor:
        """Splat a scalar or broadcast a block to ``shape`` (``tt.splat``, ``tt.expand_dims``,
        ``tt.broadcast``)."""
        shape = tuple(shape)
        if isinstance(x, PyScalar):
            return self.constant(x.value, x.dtype, shape)
        x = self.to_tensor(x)
        if x.shape == shape:
            return x
        if not shape:
            raise LanguageError(f"cannot broadcast a tile of shape {list(x.shape)} to a scalar")
        if not x.shape:
            return self._op("tt.splat", [x], x.dtype, shape)
        if len(x.shape) > len(shape):
            raise LanguageError(f"cannot broadcast shape {list(x.shape)} to {list(shape)}")
        while len(x.shape) < len(shape):
            x = self.expand_dims(x, 0)
        for i, (s, d) in enumerate(zip(x.shape, shape, strict=False)):
            if s != d and s != 1:
                raise LanguageError(f"cannot broadcast shape {list(x.shape)} to {list(shape)} "
                                    f"(dimension {i}: {s} vs {d})",
                                    "only dimensions of size 1 can be broadcast")
        return self._op("tt.broadcast", [x], x.dtype, shape)

    def broadcast_values(self, a, b):
        """Broadcast two operands to their common shape."""
        shape = self.broadcast_shapes(a.shape, b.shape) if a.shape and b.shape else \
            (a.shape or b.shape)
        return self.broadcast_to_shape(a, shape), self.broadcast_to_shape(b, shape)

    def expand_dims(self, x, axis: int) -> tensor:
        x = self.to_tensor(x)
        rank = len(x.shape) + 1
        axis = _unwrap(axis)
        if not isinstance(axis, int) or not -rank <= axis < rank:
            raise LanguageError(f"invalid axis {axis!r}. Expected {-rank} <= axis < {rank}",
                                "expand_dims inserts a dim: the axis counts in the result")
        axis %= rank
        if not x.shape:
            return self.broadcast_to_shape(x, (1,))
        shape = x.shape[:axis] + (1,) + x.shape[axis:]
        return self._op("tt.expand_dims", [x], x.dtype, shape, {"axis": axis})

    def subscript(self, x, slices) -> tensor:
        """``x[:, None]`` / ``x[None, :]``: only ``None`` and bare ``:`` are allowed.

        As in Triton (``tensor.__getitem__`` in ``language/core.py``), the ``None`` at position
        ``i`` of the index inserts a dimension at ``i`` of the result and a ``:`` keeps nothing
        and checks nothing: ``x[None]`` on a 2-D tensor gives shape ``(1, M, N)`` and
        ``p[None, None, :]`` on a scalar gives ``(1, 1)``."""
        x = self.to_tensor(x)
        if not isinstance(slices, tuple):
            slices = (slices,)
        out = x
        for i, s in enumerate(slices):
            s = _unwrap(s)
            if s is None:
                out = self.expand_dims(out, i)
            elif not (isinstance(s, slice) and s.start is None and s.stop is None
                      and s.step is None):
                raise LanguageError(f"unsupported tensor index {s!r}",
                                    "only None and ':' are allowed (x[:, None], x[None, :])")
        return out
