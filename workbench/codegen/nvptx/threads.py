"""Per-thread coordinates of distributed layouts, as generated code computes them.

A thread (``warp``, ``lane``) holding a tensor of ``shape`` in layout ``L`` owns registers
``r = 0 .. R-1`` whose tensor coordinates are (linear layouts over GF(2), arXiv:2505.23819)::

    coord(r) = register_offsets[r]  XOR  lane_part(lane)  XOR  warp_part(warp)

with ``lane_part`` the XOR of the lane bases for the set bits of the lane id (likewise warps).
The register part is a compile-time constant; the thread part is computed once per thread and
per (layout, shape) from ``tid.x`` in LLVM IR. All the layout facts come from
:mod:`workbench.layouts` (``to_linear``, ``codegen_support``): one source of truth with the
pictures and :func:`workbench.layouts.ownership.ownership`.

This module also computes *register maps*: when an op moves data between two layouts without
crossing threads (``tt.broadcast``, ``tt.expand_dims``, the slice layout of a reduce result), each
destination register reads a source register of the same thread.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from ...errors import UnsupportedError
from ...layouts.codegen_support import register_offsets, thread_bases

I32 = ir.IntType(32)


@dataclass(frozen=True)
class ThreadLayout:
    """The layout facts code generation needs for one tensor type.

    ``shape``: tensor shape; ``regs``: per register, its coordinate tuple from the register bits
    alone; ``lane``/``warp``: per lane (warp) id bit, the coordinate tuple it XORs in.
    """

    shape: tuple
    regs: tuple
    lane: tuple
    warp: tuple

    @property
    def num_regs(self) -> int:
        """Registers per thread (duplicates included)."""
        return len(self.regs)

    @property
    def rank(self) -> int:
        return len(self.shape)

    def thread_part(self, warp: int, lane: int) -> tuple:
        """The coordinate XOR-ed in by the lane and warp ids (Python ints, for tests)."""
        part = [0] * self.rank
        for bits, vecs in ((lane, self.lane), (warp, self.warp)):
            for i, vec in enumerate(vecs):
                if (bits >> i) & 1:
                    part = [a ^ b for a, b in zip(part, vec, strict=True)]
        return tuple(part)

    def coords(self, warp: int, lane: int) -> list:
        """Coordinates of every register of thread (warp, lane), register order."""
        part = self.thread_part(warp, lane)
        return [tuple(a ^ b for a, b in zip(r, part, strict=True)) for r in self.regs]


def thread_layout(tensor_type) -> ThreadLayout:
    """:class:`ThreadLayout` of a ttgir tensor type (shape + encoding).

    Raises UnsupportedError when the tensor has no layout encoding (ttir was not converted)
    or the layout cannot be linearised (LayoutError's message is kept). Cached per
    (encoding, shape).
    """
    enc = getattr(tensor_type, "encoding", None)
    shape = tuple(tensor_type.shape)
    key = (enc, shape)
    try:
        hit = _LAYOUTS.get(key)
    except TypeError:  # an unhashable encoding: not cached
        return _thread_layout(enc, shape)
    if hit is None:
        hit = _thread_layout(enc, shape)
        if len(_LAYOUTS) >= 4096:
            _LAYOUTS.clear()
        _LAYOUTS[key] = hit
    return hit


#: (encoding, shape) -> ThreadLayout (encodings are immutable; layouts that raise are not kept)
_LAYOUTS: dict = {}


def _thread_layout(enc, shape: tuple) -> ThreadLayout:
    if enc is None:
        raise UnsupportedError(
            f"tensor<{'x'.join(map(str, shape))}> has no layout encoding; the CUDA backend "
            f"lowers ttgir: run workbench.passes.pipelines.ttgir_passes first")
    try:
        regs = register_offsets(enc, shape)
        tb = thread_bases(enc, shape)
    except ValueError as e:  # LayoutError is a ValueError
        raise UnsupportedError(f"cannot lower layout {enc} for shape {list(shape)}: {e}") from None
    return ThreadLayout(shape, tuple(tuple(r) for r in regs), tuple(tuple(v) for v in tb["lane"]),
                        tuple(tuple(v) for v in tb["warp"]))


def emit_thread_part(builder: ir.IRBuilder, tl: ThreadLayout, lane, warp) -> list:
    """LLVM i32 values of the thread part of the coordinate, one per dim.

    ``lane``, ``warp``: i32 LLVM values. Each set id bit contributes its basis via XOR (a basis
    with one bit set becomes ``((id >> i) & 1) << k``, which LLVM folds into shifts and masks).
    """
    out = []
    for d in range(tl.rank):
        acc = None
        for ident, vecs in ((lane, tl.lane), (warp, tl.warp)):
            for i, vec in enumerate(vecs):
                if vec[d] == 0:
                    continue
                bit = builder.and_(builder.lshr(ident, I32(i)), I32(1))
                term = builder.mul(bit, I32(vec[d]))
                acc = term if acc is None else builder.xor(acc, term)
        out.append(acc if acc is not None else I32(0))
    return out


def emit_coords(builder: ir.IRBuilder, tl: ThreadLayout, part: list) -> list:
    """Per register, the list of per-dim i32 coordinates ``regs[r] XOR part`` (LLVM values)."""
    result = []
    for reg in tl.regs:
        result.append([builder.xor(p, I32(c)) if c else p for p, c in zip(part, reg, strict=True)])
    return result


def register_map(src: ThreadLayout, dst: ThreadLayout, project) -> list:
    """For each destination register, the source register of the same thread holding
    ``project(dst coordinate)``.

    ``project``: maps a destination coordinate tuple to a source coordinate tuple and must be
    linear over GF(2) (dropping, zeroing or inserting dims). Valid when ``project`` of every
    lane and warp basis of ``dst`` equals the basis of ``src`` (same threads, same data).
    Raises UnsupportedError otherwise (the data would have to cross threads).
    """
    for name, dv, sv in (("lane", dst.lane, src.lane), ("warp", dst.warp, src.warp)):
        if len(dv) != len(sv) or any(tuple(project(d)) != tuple(s)
                                     for d, s in zip(dv, sv, strict=True)):
            raise UnsupportedError(
                f"layouts differ across {name}s: the op would need data from other threads "
                f"(insert a ttg.convert_layout)")
    index: dict = {}
    for i, r in enumerate(src.regs):
        index.setdefault(tuple(r), i)
    out = []
    for r in dst.regs:
        key = tuple(project(r))
        if key not in index:
            raise UnsupportedError(
                f"no register of the source layout holds coordinate {key} for the destination")
        out.append(index[key])
    return out


def is_identity_map(src: ThreadLayout, dst: ThreadLayout) -> bool:
    """True when two thread layouts hold the same coordinates in the same registers."""
    return src == dst
