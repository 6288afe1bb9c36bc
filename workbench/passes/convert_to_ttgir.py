"""``convert-triton-to-tritongpu``: give every tensor a layout (ttir -> ttgir).

Triton's pass gives every tensor the default blocked layout (``getDefaultBlockedEncoding``:
sizePerThread 1, row-major order, :func:`workbench.layouts.default_blocked`) and lets later
passes (coalesce, remove-layout-conversions) move layouts around. Our pass aims at what
Triton prints *after* remove-layout-conversions (modulo coalescing), so the ttgir a
learner reads here looks like Triton's final ttgir (compare ``ir_rowsum.txt``):

1. Anchors keep their layouts: loads, stores and atomics use the default layout of their shape;
   ``tt.reduce`` results get ``#ttg.slice<{dim = axis, parent = <input layout>}>`` (scalars for
   1-D inputs); loop-carried values and ``scf`` results use the default layout.
2. Layout-transparent ops (elementwise ``arith``/``math``, ``tt.addptr``, ``tt.splat``,
   ``tt.make_range``, constants, ``tt.broadcast``, ``tt.expand_dims``) take the layout their
   users demand when all users agree (a backward walk), else the default one. ``expand_dims``
   of a value in ``slice(dim=axis, parent=P)`` yields ``P``; otherwise its operand is demanded
   in ``slice(axis, <result layout>)``, so ``tl.arange(0, N)[:, None]`` needs no conversion.
3. Shape ops (``tt.trans``, ``tt.join``, ``tt.split``, ``tt.reshape``) take the layout
   inferred from their operand's (:mod:`.shape_layouts`), as Triton's ``infer*OpEncoding``
   do, so they move no data; where none exists they use the default layout.
4. Where an operand's layout still differs from what its user needs, a cheap producer
   (``tt.make_range``, ``tt.splat``, ``arith.constant``) is duplicated in the needed layout,
   and anything else gets a ``ttg.convert_layout`` before the user (as Triton's type
   converter materialises it), or right after the definition when the value comes from an
   enclosing block (so it is not converted again in every loop iteration).

Module attributes (sorted as MLIR prints them): ``"ttg.num-ctas"``, ``"ttg.num-warps"``,
``ttg.target``, ``"ttg.threads-per-warp"``. Scalars (and 0-d values) have no encoding.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..ir.core import Operation, Value, functions
from ..ir.types import TensorType
from ..layouts import (
    BlockedLayout,
    DotOperandLayout,
    SliceLayout,
    blocked_for_shape,
    default_blocked,
)
from .insertion import insert_for_use
from .manager import Pass
from .shape_layouts import SHAPE_OPS, infer_result, split_operand_layout
from .traits import ELEMENTWISE
from .values import block_of, shaped_type, tensor_type

#: Ops whose results take whatever layout their users want (all tensor operands share it): the
#: elementwise ops of the specs, and the producers and broadcasts that follow their users.
_TRANSPARENT = ELEMENTWISE | {"tt.splat", "tt.make_range", "tt.broadcast", "tt.expand_dims",
                              "arith.constant"}
#: Producers without tensor operands: duplicated rather than converted.
_CHEAP = frozenset({"tt.make_range", "tt.splat", "arith.constant"})


def _is_tensor(v: Value) -> bool:
    return isinstance(v.type, TensorType) and len(shaped_type(v).shape) > 0


def _transparent(op: Operation) -> bool:
    if len(op.results) != 1 or not _is_tensor(op.result):
        return False
    return op.name in _TRANSPARENT


def _enclosed(block, op: Operation) -> bool:
    """True when ``block`` is ``op``'s block or encloses it."""
    b = op.parent
    while b is not None:
        if b is block:
            return True
        owner = b.parent.parent if b.parent is not None else None
        b = owner.parent if owner is not None else None
    return False


class _Converter:
    def __init__(self, num_warps: int, threads_per_warp: int):
        self.num_warps = num_warps
        self.tpw = threads_per_warp
        self.chosen: dict[int, object] = {}
        self.cache: dict[tuple, Operation] = {}
        self.last_clone: dict[int, Operation] = {}
        self.cloned: set[int] = set()

    def default(self, shape) -> BlockedLayout:
        return default_blocked(tuple(shape), self.num_warps, self.tpw)

    def layout(self, v: Value):
        return shaped_type(v).encoding if _is_tensor(v) else None

    def set_layout(self, v: Value, lay) -> None:
        if _is_tensor(v) and lay is not None:
            v.type = tensor_type(v).with_encoding(lay)

    # phase A: backward demand ------------------------------------------------------------
    def demand(self, func: Operation) -> None:
        """Choose the layout of every transparent op's result from what its users want.

        Walks the ops in reverse pre-order, so every user is seen before the value's producer."""
        wants: dict[int, set] = {}
        for op in reversed(list(func.walk())):
            if _transparent(op):
                r = op.result
                ds = wants.get(id(r), set())
                lay = next(iter(ds)) if len(ds) == 1 else self.default(shaped_type(r).shape)
                self.chosen[id(r)] = lay
                demands = self.operand_layouts(op, lay)
            elif op.name in ("tt.reduce", "tt.scan", "tt.dot"):
                demands = [None] * len(op.operands)
            else:
                demands = [self.default(shaped_type(v).shape) if _is_tensor(v) else None
                           for v in op.operands]
            for v, want in zip(op.operands, demands, strict=False):
                if want is not None and _is_tensor(v):
                    wants.setdefault(id(v), set()).add(want)

    def operand_layouts(self, op: Operation, lay) -> list:
        """Layouts a transparent op with result layout ``lay`` wants for its operands."""
        if op.name == "tt.expand_dims":
            return [SliceLayout(op.attributes["axis"], lay)]
        return [lay if _is_tensor(v) else None for v in op.operands]

    # phase B: forward assignment -----------------------------------------------------------
    def assign(self, func: Operation) -> None:
        for op in list(func.walk()):
            self.visit(op)
        for op in list(func.walk()):
            if op.name in _CHEAP and op.results and not op.result.uses and \
                    id(op) in self.cloned:
                op.erase()

    def visit(self, op: Operation) -> None:
        name = op.name
        if name == "tt.func":
            for a in op.regions[0].blocks[0].args:
                self.set_layout(a, self.default(shaped_type(a).shape) if _is_tensor(a) else None)
            return
        if _transparent(op):
            self.visit_transparent(op)
            return
        if name in ("tt.reduce", "tt.scan"):
            self.visit_reduce_or_scan(op)
            return
        if name == "tt.dot":
            self.visit_dot(op)
            return
        if name in SHAPE_OPS and self.visit_shape(op):
            return
        if name == "tt.unsplat":  # reads the element in whatever layout it has (no convert)
            self.set_layout(op.result, None)
            return
        self.visit_default(op)

    def visit_shape(self, op: Operation) -> bool:
        """``tt.trans``/``join``/``split``/``reshape``: the result layout is inferred from the
        operand's (:mod:`.shape_layouts`), so the op moves no data; a join's second operand
        is converted to the first's layout, a split's operand first to a splittable layout.
        Returns False (the default treatment) when no layout can be inferred."""
        src = self.layout(op.operands[0])
        if op.name == "tt.split" and infer_result(op, src) is None:
            want = split_operand_layout(shaped_type(op.results[0]).shape, self.num_warps,
                                        self.tpw)
            self.coerce(op, 0, want)
            src = want
        dst = infer_result(op, src)
        if dst is None:
            return False
        for i in range(1, len(op.operands)):
            self.coerce(op, i, src)
        for r in op.results:
            self.set_layout(r, dst)
        return True

    def visit_transparent(self, op: Operation) -> None:
        """A layout-transparent op takes the layout chosen in phase A (an ``expand_dims`` of a
        slice takes the slice's parent); its operands are coerced to match."""
        lay = self.chosen[id(op.result)]
        if op.name == "tt.expand_dims":
            src = self.layout(op.operands[0])
            if isinstance(src, SliceLayout) and src.dim == op.attributes["axis"]:
                lay = src.parent
        for i, want in enumerate(self.operand_layouts(op, lay)):
            if want is not None:
                self.coerce(op, i, want)
        self.set_layout(op.result, lay)

    def visit_reduce_or_scan(self, op: Operation) -> None:
        """Every operand in the first operand's layout; a scan's results keep it, a reduce's
        results are its slice along ``axis``."""
        first = self.layout(op.operands[0])
        for i in range(1, len(op.operands)):
            self.coerce(op, i, first)
        for r in op.results:
            if not _is_tensor(r):
                continue
            if op.name == "tt.scan":
                self.set_layout(r, first)
            else:
                self.set_layout(r, SliceLayout(op.attributes["axis"], first))

    def visit_default(self, op: Operation) -> None:
        """Every tensor operand, result and region argument in the default blocked layout."""
        name = op.name
        for i, v in enumerate(op.operands):
            if _is_tensor(v):
                self.coerce(op, i, self.default(shaped_type(v).shape))
        for r in op.results:
            self.set_layout(r, self.default(shaped_type(r).shape) if _is_tensor(r) else None)
        for region in op.regions:
            for block in region.blocks:
                if name == "tt.reduce" or name == "tt.scan":
                    continue
                for a in block.args:
                    lay = self.default(shaped_type(a).shape) if _is_tensor(a) else None
                    self.set_layout(a, lay)

    def visit_dot(self, op: Operation) -> None:
        """Triton's ``TritonDotPattern``: result blocked with sizePerThread 1, 2 or 4 along
        the last two dims (at most their extents; 1 along a batch dim) depending on elements
        per thread, order fastest-last; a and b in ``#ttg.dot_op`` of it."""
        shape = tuple(shaped_type(op.result).shape)
        rank = len(shape)
        per_thread = prod(shape) // (self.num_warps * self.tpw)
        inner = 4 if per_thread >= 16 else 2 if per_thread >= 4 else 1
        spt = (1,) * (rank - 2) + (min(inner, shape[-2]), min(inner, shape[-1]))
        order = tuple(range(rank - 1, -1, -1))
        d = blocked_for_shape(shape, spt, order, self.num_warps, self.tpw)
        self.coerce(op, 0, DotOperandLayout(0, d))
        self.coerce(op, 1, DotOperandLayout(1, d))
        self.coerce(op, 2, d)
        self.set_layout(op.result, d)

    def coerce(self, op: Operation, i: int, want) -> None:
        """Make operand ``i`` of ``op`` arrive in layout ``want``: duplicate a cheap producer
        or insert a ``ttg.convert_layout`` before ``op``."""
        v = op.operands[i]
        if not _is_tensor(v) or shaped_type(v).encoding == want:
            return
        key = (id(v), want)
        new = self.cache.get(key)
        if new is None or new.parent is None or not _enclosed(new.parent, op):
            d = v.defining_op
            t = tensor_type(v).with_encoding(want)
            if d is not None and d.name in _CHEAP:
                new = Operation(d.name, list(d.operands), [t], dict(d.attributes), loc=d.loc)
                new.result.name = v.name
                anchor = self.last_clone.get(id(d), d)
                block_of(anchor).insert(block_of(anchor).ops.index(anchor) + 1, new)
                self.last_clone[id(d)] = new
                self.cloned.add(id(d))
            else:
                new = Operation("ttg.convert_layout", [v], [t], loc=op.loc)
                insert_for_use(v, op, new)
            self.cache[key] = new
        op.set_operand(i, new.result)


def convert_to_ttgir(module: Operation, num_warps: int = 4, target="cuda:90",
                     threads_per_warp: int = 32, num_ctas: int = 1) -> Operation:
    """Convert a ttir ``module`` to ttgir in place (see the module docstring) and return it.

    Args:
        num_warps: warps per program (power of two, 1..32).
        target: ``"cuda:80"``/``"cuda:90"`` or a :class:`workbench.config.Target`.
        threads_per_warp: 32 (NVIDIA); num_ctas: 1 (clusters are not supported).
    Raises: ``workbench.layouts.LayoutError`` (a ValueError) for a bad ``num_warps``.
    Source: Triton 3.6 ``TritonToTritonGPUPass.cpp`` (module attributes, reduce, expand_dims
    and dot patterns) and ``getDefaultBlockedEncoding``.
    """
    attrs = dict(module.attributes)
    attrs.update({"ttg.num-ctas": int(num_ctas), "ttg.num-warps": int(num_warps),
                  "ttg.target": str(target), "ttg.threads-per-warp": int(threads_per_warp)})
    module.attributes = dict(sorted(attrs.items()))
    for func in functions(module):
        conv = _Converter(int(num_warps), int(threads_per_warp))
        conv.demand(func)
        conv.assign(func)
    return module


@dataclass
class ConvertToTTGIR(Pass):
    """The ``convert-triton-to-tritongpu`` pass. Options: ``num_warps`` (4), ``target``
    (``"cuda:90"``), ``threads_per_warp`` (32), ``num_ctas`` (1)."""

    name = "convert-triton-to-tritongpu"
    num_warps: int = 4
    target: str = "cuda:90"
    threads_per_warp: int = 32
    num_ctas: int = 1

    def run(self, module: Operation, ctx=None) -> None:
        convert_to_ttgir(module, self.num_warps, self.target, self.threads_per_warp,
                         self.num_ctas)
