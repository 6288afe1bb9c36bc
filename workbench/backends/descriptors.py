"""Tensor descriptors in the backends: the backends lower descriptor ops to masked pointer
accesses (:mod:`workbench.passes.rewrite_descriptors`), and expand each host-built descriptor
argument (:class:`DescriptorArg`) into the values the rewritten kernel takes: its base
pointer, its shape and strides as int64, and whether its padding is NaN. On ``cuda:90`` a
kernel whose descriptors the TMA unit can serve keeps them (:mod:`workbench.passes.
tma_lowering`), and :class:`TmaLauncher` passes each host descriptor as its encoded
``CUtensorMap`` followed by its shape and strides (:mod:`.tensormap`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnsupportedError
from ..passes.rewrite_descriptors import DescriptorRewriteError, rewritten
from .base import PointerArg


@dataclass(frozen=True)
class DescriptorArg:
    """A host tensor descriptor at launch: ``pointer`` (the array's :class:`PointerArg`),
    ``shape`` and ``strides`` (ints, elements) and ``padding_nan``."""

    pointer: PointerArg
    shape: tuple
    strides: tuple
    padding_nan: bool = False

    def expanded(self) -> list:
        """``[pointer, *shape, *strides, padding_nan, *shape, *strides]``: the arguments of
        the rewritten kernel for one descriptor parameter, in Triton's order (the rewrite's
        pointer, i64 shape, i64 strides and i1 padding, then the i32 shape and i64 strides
        that follow a descriptor in the ttir signature)."""
        return [self.pointer, *self.shape, *self.strides, self.padding_nan, *self.shape,
                *self.strides]


def expand_args(args) -> list:
    """``args`` with each :class:`DescriptorArg` replaced by its expanded values."""
    out: list = []
    for a in args:
        if isinstance(a, DescriptorArg):
            out.extend(a.expanded())
        else:
            out.append(a)
    return out


class ExpandingLauncher:
    """Wraps a launcher ``(grid3, args)`` so descriptor arguments reach it expanded; other
    attributes are the wrapped launcher's."""

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, grid, args):
        return self.inner(grid, expand_args(args))

    def __getattr__(self, name):
        return getattr(self.inner, name)


class TmaLauncher:
    """Wraps a launcher ``(grid3, args)`` of a kernel whose descriptor parameters are TMA
    descriptors: each :class:`DescriptorArg` becomes its 128-byte ``CUtensorMap`` (encoded
    with ``metas[i]``, :func:`workbench.passes.tma_lowering.tensormap_meta`, for the i-th
    descriptor parameter), then its shape and strides (Triton's ``make_tensordesc_arg``).
    Raises LaunchError when the driver refuses the descriptor."""

    def __init__(self, inner, metas):
        self.inner = inner
        self.metas = list(metas)

    def expand(self, args) -> list:
        """``args`` with every descriptor encoded (see the class docstring)."""
        from .tensormap import encode
        out: list = []
        k = 0
        for a in args:
            if isinstance(a, DescriptorArg):
                meta = self.metas[k]
                k += 1
                out.append(encode(meta, a.pointer.address, a.shape, a.strides,
                                  a.padding_nan))
                out.extend([*a.shape, *a.strides])
            else:
                out.append(a)
        return out

    def __call__(self, grid, args):
        return self.inner(grid, self.expand(args))

    def __getattr__(self, name):
        return getattr(self.inner, name)


def lower_descriptors(module, clone):
    """``module`` with its descriptor ops rewritten to pointer ops (a ``clone(module)`` copy
    when there are any). Raises :class:`UnsupportedError` at the op's line when a descriptor
    is used where the rewrite cannot follow it."""
    try:
        return rewritten(module, clone)
    except DescriptorRewriteError as e:
        raise UnsupportedError(str(e), e.op.loc,
                               "keep the descriptor outside loops and ifs: make it once and "
                               "load/store through it") from None


def wrap_launcher(launcher, module):
    """``launcher`` wrapped in :class:`ExpandingLauncher` when ``module`` (before the rewrite)
    has a descriptor kernel argument, else ``launcher`` itself (None stays None)."""
    from ..ir import types as irt
    from ..ir.core import functions
    if launcher is None:
        return None
    funcs = functions(module) if module.name == "builtin.module" else [module]
    if any(isinstance(a.type, irt.TensorDescType) for f in funcs
           for a in f.regions[0].block.args):
        return ExpandingLauncher(launcher)
    return launcher
