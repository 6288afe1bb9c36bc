"""Shape ops on the CUDA backend: ``tt.trans``, ``tt.reshape``, ``tt.join``, ``tt.split``,
``tt.cat``, plus ``tt.gather`` and ``tt.histogram``.

Every shape op is an *index map*: destination element ``d`` of output ``j`` reads element
``flat_j(d)`` of the sources laid out one after another in row-major order (source ``k`` at
element offset ``k * numel(source)``):

=============  =================================================================================
``trans``      ``flat(d) = lin(s, src.shape)`` with ``s[order[i]] = d[i]`` (a permutation)
``reshape``    ``flat(d) = lin(d, dst.shape)`` (re-linearisation; ``allow_reorder`` is ignored:
               we never reorder)
``join``       ``flat(d) = d[-1] * N + lin(d[:-1], src.shape)`` (new minor dim of 2)
``split``      output ``k``: ``flat(d) = lin(d + (k,), src.shape)``
``cat``        ``flat(d) = lin(d, dst.shape)`` (concatenation along dim 0, in order)
=============  =================================================================================

The maps are written once over an "ALU" (:class:`PyAlu` on Python ints for the tests' models,
:class:`LLAlu` on LLVM i32 values for code), so what the tests check against numpy is what the
kernel computes.

Two lowerings (the same split as ``ttg.convert_layout``, :mod:`.convert_layout`):

* **register renaming** (no instruction): when all shapes are powers of two, the maps are affine
  over GF(2) on the bits of the coordinates; if, for every lane and warp basis ``v`` of the
  destination layout, ``flat(v) ^ flat(0)`` is exactly the row-major index of the sources'
  basis (the same thread holds the element), each destination register is a source register of
  the same thread (:func:`register_plan`). Triton's inferred layouts for trans/join/split make
  this the common case.
* **through shared memory** (always correct): ``bar.sync``; each thread stores its distinct
  source registers at their row-major index (``st.shared``); ``bar.sync``; each thread loads its
  destination registers from ``flat(d)`` (``ld.shared``) (PTX ISA 9.7.9.8 ld, 9.7.9.9 st,
  9.7.12.1 bar).

``tt.gather`` stores the source the same way and loads ``src[.., index, ..]``; indices outside
``[0, src.shape[axis])`` wrap modulo the extent (undefined behaviour in Triton; no fault here).
``tt.histogram`` clears ``num_bins`` i32 counters in shared memory, adds 1 per element with
``atom.shared.add.u32`` (PTX ISA 9.7.13.5; each element once, by its owning thread; masked-off
and out-of-range values are skipped, as the interpreter), then reads the counters back in the
result layout.
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import TensorType
from . import smem_access
from .types import I32, byte_size

OPS = frozenset({"tt.trans", "tt.reshape", "tt.join", "tt.split", "tt.cat", "tt.gather",
                 "tt.histogram"})


# ALUs ---------------------------------------------------------------------------------------
class PyAlu:
    """Index arithmetic on Python ints (the tests' model of the generated code)."""

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def mul(a, c: int):
        return a * c

    @staticmethod
    def div(a, c: int):
        return a // c

    @staticmethod
    def rem(a, c: int):
        return a % c


class LLAlu:
    """The same arithmetic on LLVM i32 values (unsigned: indices are never negative); Python
    int operands are folded."""

    def __init__(self, builder):
        self.b = builder

    def _c(self, v):
        return I32(v) if isinstance(v, int) else v

    def add(self, a, b):
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if isinstance(b, int) and b == 0:
            return a
        if isinstance(a, int) and a == 0:
            return b
        return self.b.add(self._c(a), self._c(b))

    def mul(self, a, c: int):
        if isinstance(a, int):
            return a * c
        return a if c == 1 else (I32(0) if c == 0 else self.b.mul(a, I32(c)))

    def div(self, a, c: int):
        if isinstance(a, int):
            return a // c
        return a if c == 1 else self.b.udiv(a, I32(c))

    def rem(self, a, c: int):
        if isinstance(a, int):
            return a % c
        return I32(0) if c == 1 else self.b.urem(a, I32(c))


def lin(alu, coords, shape):
    """Row-major index of ``coords`` in ``shape``."""
    idx, stride = 0, 1
    for c, s in zip(reversed(list(coords)), reversed(list(shape)), strict=True):
        idx = alu.add(idx, alu.mul(c, stride))
        stride *= s
    return idx


def numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _shape(t) -> tuple:
    return tuple(t.shape) if isinstance(t, TensorType) else ()


# index maps -----------------------------------------------------------------------------------
def index_maps(name: str, attrs: dict, src_shapes: list, dst_shapes: list) -> list:
    """Per output of op ``name``, a function ``flat(alu, dst_coords) -> index`` into the
    sources concatenated in row-major order (see the module docstring).

    Raises UnsupportedError for an op that is not a pure index map."""
    s0 = tuple(src_shapes[0])
    if name == "tt.trans":
        order = [int(o) for o in attrs["order"]]

        def trans(alu, d):
            s = [0] * len(order)
            for i, o in enumerate(order):
                s[o] = d[i]
            return lin(alu, s, s0)
        return [trans]
    if name in ("tt.reshape", "tt.cat"):
        dshape = tuple(dst_shapes[0])
        return [lambda alu, d: lin(alu, d, dshape)]
    if name == "tt.join":
        n = numel(s0)
        return [lambda alu, d: alu.add(alu.mul(d[-1], n), lin(alu, d[:-1], s0))]
    if name == "tt.split":
        return [lambda alu, d, k=k: lin(alu, list(d) + [k], s0) for k in range(2)]
    raise UnsupportedError(f"{name} is not an index map")


# register renaming ----------------------------------------------------------------------------
def _pow2(shape) -> bool:
    return all(s > 0 and (s & (s - 1)) == 0 for s in shape)


def _delin(f: int, shape) -> tuple:
    out = []
    for s in reversed(shape):
        out.append(f % s)
        f //= s
    return tuple(reversed(out))


def register_plan(srcs: list, dst, flat) -> list | None:
    """For each register of ``dst`` (a ThreadLayout), ``(source k, source register)`` of the
    same thread holding its element under index map ``flat`` (Python ints), or None when data
    would cross threads or the shapes are not powers of two (use shared memory then).

    ``srcs``: ThreadLayouts of the sources (equal numel)."""
    n = numel(srcs[0].shape)
    shapes = [s.shape for s in srcs] + [dst.shape]
    if not all(_pow2(s) for s in shapes) or any(numel(s.shape) != n for s in srcs):
        return None
    alu = PyAlu()
    f0 = flat(alu, (0,) * dst.rank)
    for kind in ("lane", "warp"):
        dv = getattr(dst, kind)
        for s in srcs:
            sv = getattr(s, kind)
            if len(sv) != len(dv):
                return None
            for a, b in zip(dv, sv, strict=False):
                if flat(alu, a) ^ f0 != lin(alu, b, s.shape):
                    return None
    index = []
    for s in srcs:
        m: dict = {}
        for i, r in enumerate(s.regs):
            m.setdefault(tuple(r), i)
        index.append(m)
    plan = []
    for r in dst.regs:
        f = flat(alu, r)
        k, coord = f // n, _delin(f % n, srcs[min(f // n, len(srcs) - 1)].shape)
        if k >= len(srcs) or coord not in index[k]:
            return None
        plan.append((k, index[k][coord]))
    return plan


# lowering -------------------------------------------------------------------------------------
def _regs_and_coords(kl, v):
    """(registers, per-register coordinate lists, per-register constant keys) of value v."""
    t = v.type
    regs = kl.get(v)
    if not isinstance(t, TensorType) or not t.shape:
        return regs[:1], [[]], [()]
    return regs, kl.coords(t), list(kl.layout(t).regs)


def _store_sources(kl, srcs, elem_t) -> None:
    """Every thread stores its distinct source registers (source k at element offset
    ``k * numel``), then ``bar.sync`` (the barrier before, if one is needed, is
    ``tritongpu-insert-barriers``')."""
    alu = LLAlu(kl.b)
    base = 0
    for v in srcs:
        regs, coords, keys = _regs_and_coords(kl, v)
        shape = _shape(v.type)
        seen = set()
        for reg, c, key in zip(regs, coords, keys, strict=False):
            if key in seen:
                continue
            seen.add(key)
            idx = alu.add(lin(alu, c, shape), base)
            smem_access.store_value(kl, smem_access.slot(kl, 0, LLAlu(kl.b)._c(idx), elem_t),
                                    reg, elem_t)
        base += numel(shape)
    smem_access.barrier(kl)


def _load_results(kl, res, index_of, elem_t) -> None:
    """Every thread loads the registers of result ``res`` from ``index_of(coords)``."""
    alu = LLAlu(kl.b)
    if not isinstance(res.type, TensorType) or not res.type.shape:
        idx = index_of(alu, [])
        kl.set(res, [smem_access.load_value(kl, smem_access.slot(kl, 0, alu._c(idx), elem_t),
                                            elem_t)])
        return
    tl = kl.layout(res.type)
    loaded, out = {}, []
    for key, c in zip(tl.regs, kl.coords(res.type), strict=True):
        if key not in loaded:
            idx = alu._c(index_of(alu, c))
            loaded[key] = smem_access.load_value(kl, smem_access.slot(kl, 0, idx, elem_t), elem_t)
        out.append(loaded[key])
    kl.set(res, out)


def _register_plans(op, layout) -> list | None:
    """Per result of index-map op ``op``, its :func:`register_plan` (``layout``: type ->
    ThreadLayout), or None when one of them must go through shared memory."""
    srcs = list(op.operands)
    if not all(isinstance(v.type, TensorType) and v.type.shape
               for v in srcs + list(op.results)):
        return None
    maps = index_maps(op.name, op.attributes, [_shape(v.type) for v in srcs],
                      [_shape(r.type) for r in op.results])
    s_tls = [layout(v.type) for v in srcs]
    plans = [register_plan(s_tls, layout(r.type), f)
             for r, f in zip(op.results, maps, strict=True)]
    return None if any(p is None for p in plans) else plans


def scratch_bytes(op) -> int:
    """Bytes of shared scratch shape op ``op`` needs: ``tt.gather`` its source tile,
    ``tt.histogram`` one i32 per bin, the index-map ops (trans, reshape, join, split, cat)
    every source element when the data crosses threads, else 0."""
    from .threads import thread_layout
    if op.name == "tt.gather":
        src = op.operands[0].type
        return numel(_shape(src)) * byte_size(src.scalar)
    if op.name == "tt.histogram":
        return op.result.type.shape[0] * 4
    if _register_plans(op, thread_layout) is not None:
        return 0
    return sum(numel(_shape(v.type)) * byte_size(v.type.scalar) for v in op.operands)


def lower_index_map(kl, op) -> None:
    """``tt.trans`` / ``tt.reshape`` / ``tt.join`` / ``tt.split`` / ``tt.cat``."""
    srcs = list(op.operands)
    elem_t = srcs[0].type.scalar
    maps = index_maps(op.name, op.attributes, [_shape(v.type) for v in srcs],
                      [_shape(r.type) for r in op.results])
    plans = _register_plans(op, kl.layout)
    if plans is not None:
        regs = [kl.get(v) for v in srcs]
        for r, plan in zip(op.results, plans, strict=True):
            kl.set(r, [regs[k][i] for k, i in plan])
        return
    kl.need_shared(scratch_bytes(op))
    _store_sources(kl, srcs, elem_t)
    for r, f in zip(op.results, maps, strict=True):
        _load_results(kl, r, f, elem_t)


def gather_map(src_shape, axis: int):
    """``flat(alu, coords, index) -> index`` of ``tt.gather``: coords with the ``axis`` entry
    replaced by the (wrapped) index value."""
    def flat(alu, c, idx):
        s = list(c)
        s[axis] = alu.rem(idx, src_shape[axis])
        return lin(alu, s, src_shape)
    return flat


def lower_gather(kl, op) -> None:
    """``tt.gather(src, indices) {axis}``: result[c] = src[c with c[axis] = indices[c]]."""
    from .threads import register_map
    src_v, idx_v = op.operands
    res = op.result
    elem_t = src_v.type.scalar
    axis = int(op.attributes["axis"])
    src_shape = _shape(src_v.type)
    b = kl.b
    m = register_map(kl.layout(idx_v.type), kl.layout(res.type), lambda c: c)
    idx_regs = kl.get(idx_v)
    kl.need_shared(scratch_bytes(op))
    _store_sources(kl, [src_v], elem_t)
    flat = gather_map(src_shape, axis)
    alu = LLAlu(b)
    tl = kl.layout(res.type)
    loaded, out = {}, []
    for r, (key, c) in enumerate(zip(tl.regs, kl.coords(res.type), strict=True)):
        if key not in loaded:
            iv = idx_regs[m[r]]
            if iv.type.width > 32:
                iv = b.trunc(iv, I32)
            elif iv.type.width < 32:
                iv = b.zext(iv, I32)
            idx = alu._c(flat(alu, c, iv))
            loaded[key] = smem_access.load_value(kl, smem_access.slot(kl, 0, idx, elem_t), elem_t)
        out.append(loaded[key])
    kl.set(res, out)


def lower_histogram(kl, op) -> None:
    """``tt.histogram(src, mask?)`` -> ``tensor<num_bins x i32>`` (module docstring)."""
    from .memory import owner_predicate
    src_v = op.operands[0]
    mask_v = op.operands[1] if len(op.operands) > 1 else None
    res = op.result
    nbins = res.type.shape[0]
    b = kl.b
    i32_t = res.type.scalar
    kl.need_shared(scratch_bytes(op))
    res_tl = kl.layout(res.type)
    res_coords = kl.coords(res.type)
    done = set()
    for key, c in zip(res_tl.regs, res_coords, strict=True):
        if key not in done:
            done.add(key)
            b.store(I32(0), smem_access.slot(kl, 0, c[0], i32_t))
    smem_access.barrier(kl)
    owner = owner_predicate(kl, src_v.type)
    vals = kl.get(src_v)
    masks = kl.get(mask_v) if mask_v is not None else None
    if masks is not None and len(masks) == 1 and len(vals) > 1:
        masks = masks * len(vals)
    keys = kl.layout(src_v.type).regs if isinstance(src_v.type, TensorType) else [()]
    seen = set()
    for r, (v, key) in enumerate(zip(vals, keys, strict=False)):
        if key in seen:
            continue
        seen.add(key)
        # negatives are huge unsigned values: skipped with the values >= num_bins
        pred = b.icmp_unsigned("<", v, ir.Constant(v.type, nbins))
        if v.type.width != 32:
            v = b.zext(v, I32) if v.type.width < 32 else b.trunc(v, I32)
        if owner is not None:
            pred = b.and_(pred, owner)
        if masks is not None:
            pred = b.and_(pred, masks[r])
        # an element that does not count adds 0 to bin 0 (no branch per element)
        slot = smem_access.slot(kl, 0, b.select(pred, v, I32(0)), i32_t)
        b.atomic_rmw("add", slot, b.zext(pred, I32), "monotonic")
    smem_access.barrier(kl)
    loaded, out = {}, []
    for key, c in zip(res_tl.regs, res_coords, strict=True):
        if key not in loaded:
            loaded[key] = b.load(smem_access.slot(kl, 0, c[0], i32_t), typ=I32)
        out.append(loaded[key])
    kl.set(res, out)


def lower(kl, op) -> None:
    """Dispatch one op of :data:`OPS`."""
    if op.name == "tt.gather":
        return lower_gather(kl, op)
    if op.name == "tt.histogram":
        return lower_histogram(kl, op)
    return lower_index_map(kl, op)


__all__ = ["OPS", "lower", "index_maps", "register_plan", "gather_map", "lin", "PyAlu",
           "LLAlu"]
