"""``triton-rewrite-tensor-descriptor-to-pointer``: tensor descriptor ops -> ordinary masked
loads, stores and atomics on tiles of pointers (Triton 3.6 runs this pass in ``make_ttir`` for
targets without TMA, ``lib/Dialect/Triton/Transforms/RewriteTensorDescriptorToPointer.cpp``;
every workbench backend runs it before lowering).

A descriptor is its base pointer, its shape and strides as i64 scalars and its padding. For a
tile at offsets ``o_d`` (block ``B_d``), element ``(i_0, ...)`` sits at ``base + sum_d (o_d +
i_d) * stride_d`` and is in bounds when ``0 <= o_d + i_d < shape_d`` for every ``d``; loads of
out-of-bounds elements give the padding (zero or NaN), stores and atomics skip them (the TMA
unit's behaviour, which the rewrite reproduces).

* ``tt.make_tensor_descriptor`` gives these parts directly (its i32 shape sign-extended).
* A ``!tt.tensordesc`` kernel argument becomes, as in Triton's rewrite, a pointer argument
  followed by new arguments ``shape_d: i64``, ``stride_d: i64`` and ``padding_is_nan: i1``
  (the launcher passes them from the host descriptor); the i32 shape and i64 stride arguments
  the frontend already added stay where they were.

A descriptor carried by an ``scf.for`` or ``scf.while`` or returned by an ``scf.if`` travels
as those parts (Triton's rewrite does the same); one reaching any other op (a call) raises
:class:`DescriptorRewriteError` naming the op.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ir import types as irt
from ..ir.builder import Builder
from ..ir.core import Operation, Value, functions
from .manager import Pass

_USES = ("tt.descriptor_load", "tt.descriptor_store", "tt.descriptor_reduce",
         "tt.descriptor_gather", "tt.descriptor_scatter")


def _ty(v: Value) -> Any:
    """``v.type`` as ``Any``: the shapes and elements read here are those of tensor or
    descriptor types, which the ops' verifiers guarantee."""
    return v.type


class DescriptorRewriteError(ValueError):
    """A descriptor used where the rewrite cannot follow it (a loop-carried value, a call
    argument); ``op`` is the offending op."""

    def __init__(self, message: str, op: Operation):
        super().__init__(message)
        self.op = op


@dataclass
class _Desc:
    base: Value
    shape: list      # i64 scalars
    strides: list    # i64 scalars
    nan: object      # False / True (known) or an i1 Value
    block: irt.TensorType
    signedness: str


def has_descriptors(module: Operation) -> bool:
    """Whether any op or kernel argument of ``module`` is a tensor descriptor."""
    for op in module.walk():
        if op.name == "tt.make_tensor_descriptor" or op.name in _USES:
            return True
        if op.name == "tt.func" and any(isinstance(a.type, irt.TensorDescType)
                                        for a in op.regions[0].block.args):
            return True
    return False


def descriptor_arg_layout(func: Operation) -> list:
    """Per argument of the ``tt.func`` (before the rewrite), the rank of a descriptor
    argument or 0: the launcher expands a rank-n descriptor into ``1 + 2n + 1`` values."""
    return [len(a.type.block.shape) if isinstance(a.type, irt.TensorDescType) else 0
            for a in func.regions[0].block.args]


class _Emitter:
    """Small typed helpers over a Builder (every op at the op being rewritten's location)."""

    def __init__(self, b: Builder):
        self.b = b

    def op(self, name, operands, t, attrs=None) -> Value:
        return self.b.create(name, list(operands), [t], attrs).result

    def const(self, value, t) -> Value:
        return self.op("arith.constant", [], t, {"value": value})

    def splat(self, v: Value, shape) -> Value:
        return self.op("tt.splat", [v], irt.TensorType(tuple(shape), v.type))

    def bcast(self, v: Value, shape) -> Value:
        if tuple(_ty(v).shape) == tuple(shape):
            return v
        return self.op("tt.broadcast", [v], irt.TensorType(tuple(shape), _ty(v).element))

    def index(self, off: Value, n: int, axis: int, rank: int) -> Value:
        """``off + arange(0, n)`` as i64, shaped 1 x .. x n (at ``axis``) x .. x 1."""
        r = self.op("tt.make_range", [], irt.TensorType((n,), irt.i32), {"start": 0, "end": n})
        r = self.op("arith.extsi", [r], irt.TensorType((n,), irt.i64))
        if off.type != irt.i64:
            off = self.op("arith.extsi", [off], irt.i64)
        v = self.op("arith.addi", [self.splat(off, (n,)), r], _ty(r))
        return self.expand_to(v, axis, rank)

    def expand_to(self, v: Value, axis: int, rank: int) -> Value:
        """A 1-D tile ``v`` with size-1 dims inserted so its dim sits at ``axis``."""
        shape = list(_ty(v).shape)
        for a in range(rank):
            if a == axis:
                continue
            shape.insert(a, 1)
            v = self.op("tt.expand_dims", [v], irt.TensorType(tuple(shape), _ty(v).element),
                        {"axis": a})
        return v


def _pointers_and_mask(e: _Emitter, d: _Desc, idx: list, shape: tuple):
    """The pointer tile and the in-bounds mask of the elements whose per-dim i64 indices are
    ``idx`` (each broadcastable to ``shape``)."""
    total = mask = None
    for k, i in enumerate(idx):
        st = e.splat(d.strides[k], _ty(i).shape)
        term = e.bcast(e.op("arith.muli", [i, st], _ty(i)), shape)
        total = term if total is None else e.op("arith.addi", [total, term], _ty(term))
        zero = e.const(0, _ty(i))
        lo = e.op("arith.cmpi", [i, zero], _ty(i).with_element(irt.i1), {"predicate": "sge"})
        hi = e.op("arith.cmpi", [i, e.splat(d.shape[k], _ty(i).shape)],
                  _ty(i).with_element(irt.i1), {"predicate": "slt"})
        ok = e.bcast(e.op("arith.andi", [lo, hi], _ty(lo)), shape)
        mask = ok if mask is None else e.op("arith.andi", [mask, ok], _ty(ok))
    ptr_t = irt.TensorType(tuple(shape), d.base.type)
    ptrs = e.op("tt.addptr", [e.splat(d.base, shape), total], ptr_t)
    return ptrs, mask


def _padding(e: _Emitter, d: _Desc, t: irt.TensorType) -> Value:
    zero = e.const(0.0 if isinstance(t.element, irt.FloatType) else 0, t)
    if d.nan is False or not isinstance(t.element, irt.FloatType):
        return zero
    nan = e.const(float("nan"), t)
    if d.nan is True:
        return nan
    return e.op("arith.select", [d.nan, nan, zero], t)


def _block_indices(e: _Emitter, d: _Desc, offsets: list) -> list:
    rank = len(d.block.shape)
    return [e.index(o, n, k, rank) for k, (o, n) in enumerate(zip(offsets, d.block.shape,
                                                                  strict=True))]


def _rows_cols(e: _Emitter, d: _Desc, x: Value, y: Value, n_cols: int) -> list:
    rows = e.op("arith.extsi", [x], _ty(x).with_element(irt.i64))
    rows = e.expand_to(rows, 0, 2)
    return [rows, e.index(y, n_cols, 1, 2)]


def _rmw_kind(kind: str, t: irt.Type, signedness: str) -> str:
    if isinstance(t, irt.FloatType):
        return {"add": "fadd"}.get(kind, kind)
    if signedness == "u" and kind in ("min", "max"):
        return "u" + kind
    return kind


def _rewrite_use(op: Operation, d: _Desc, b: Builder) -> None:
    e = _Emitter(b)
    name = op.name
    if name in ("tt.descriptor_gather", "tt.descriptor_scatter"):
        x, y = op.operands[1], op.operands[2]
        shape = (_ty(x).shape[0], d.block.shape[1])
        idx = _rows_cols(e, d, x, y, d.block.shape[1])
    else:
        n = len(d.block.shape)
        shape = tuple(d.block.shape)
        idx = _block_indices(e, d, list(op.operands[1:1 + n]))
    ptrs, mask = _pointers_and_mask(e, d, idx, shape)
    if name in ("tt.descriptor_load", "tt.descriptor_gather"):
        t = _ty(op.result)
        attrs = {k: v for k, v in op.attributes.items() if k in ("cache", "evict")}
        full = irt.TensorType(shape, t.element, t.encoding)  # a rank-reduced load (leading
        new = b.create("tt.load", [ptrs, mask, _padding(e, d, full)], [full], attrs)
        result = new.result  # unit dims dropped by triton-combine) is reshaped after
        if tuple(t.shape) != tuple(shape):
            result = b.create("tt.reshape", [result], [t]).result
        op.result.replace_all_uses_with(result)
        return
    value = op.operands[-1]
    if name == "tt.descriptor_reduce":
        kind = _rmw_kind(op.attributes["kind"], d.block.element, d.signedness)
        b.create("tt.atomic_rmw", [ptrs, value, mask], [value.type],
                 {"atomic_rmw_op": kind, "sem": "relaxed", "scope": "gpu"})
        return
    b.create("tt.store", [ptrs, value, mask], [])


def _from_make(op: Operation, b: Builder) -> _Desc:
    t = _ty(op.result)
    n = len(t.block.shape)
    e = _Emitter(b)
    shape = [e.op("arith.extsi", [s], irt.i64) for s in op.operands[1:1 + n]]
    strides = list(op.operands[1 + n:1 + 2 * n])
    return _Desc(op.operands[0], shape, strides, op.attributes.get("padding") == "nan",
                 t.block, t.signedness)


def _unit_stride(block) -> Value:
    """An ``arith.constant 1 : i64`` at the start of the function body ``block``."""
    b = Builder(block, 0)
    return b.create("arith.constant", [], [irt.i64], {"value": 1}).result


def _rewrite_func_args(func: Operation) -> dict:
    """Replace each ``!tt.tensordesc`` argument by a pointer and insert its i64 shape, i64
    strides and i1 padding arguments after it; returns ``{old Value: _Desc}``."""
    block = func.regions[0].block
    attrs = func.attributes
    old_args = list(block.args)
    arg_attrs = list(attrs.get("arg_attrs") or [{} for _ in old_args])
    names = list(attrs.get("arg_names") or [None] * len(old_args))
    new_args: list = []
    new_attrs: list = []
    new_names: list = []
    descs: dict = {}
    for i, a in enumerate(old_args):
        if not isinstance(a.type, irt.TensorDescType):
            a.index = len(new_args)
            new_args.append(a)
            new_attrs.append(arg_attrs[i] if i < len(arg_attrs) else {})
            new_names.append(names[i] if i < len(names) else None)
            continue
        t = a.type
        n = len(t.block.shape)
        ptr = Value(irt.PointerType(t.block.element), block, len(new_args), a.name)
        extra = [Value(irt.i64, block, 0, a.name) for _ in range(2 * n)] + \
            [Value(irt.i1, block, 0, a.name)]
        for v in [ptr] + extra:
            v.index = len(new_args)
            new_args.append(v)
            new_attrs.append({"tt.divisibility": 16} if v is ptr else {})
            new_names.append(names[i] if i < len(names) else None)
        # the last stride of a host descriptor is 1 (TensorDescriptor checks it): the
        # constant lets the axis analysis see the last dimension as contiguous
        strides = extra[n:2 * n - 1] + [_unit_stride(block)]
        descs[a] = _Desc(ptr, extra[:n], strides, extra[-1], t.block, t.signedness)
    block.args = new_args
    ftype = attrs.get("function_type")
    results = ftype.results if isinstance(ftype, irt.FunctionType) else ()
    attrs["function_type"] = irt.FunctionType(tuple(v.type for v in new_args), results)
    attrs["arg_attrs"] = new_attrs
    if attrs.get("arg_names") is not None:
        attrs["arg_names"] = new_names
    return descs


def _error(op: Operation):
    return DescriptorRewriteError(
        f"a tensor descriptor is used by {op.name}; descriptors can be loaded from, stored "
        "to, reduced into and carried by loops and ifs, nothing else", op)


class _Rewriter:
    """Walks a function in order, keeping the parts of every descriptor value; descriptors
    that cross an ``scf.for`` or ``scf.if`` are carried as their parts (pointer, i64 shape,
    i64 strides, i1 padding), as Triton's rewrite does."""

    def __init__(self, func: Operation):
        self.descs = _rewrite_func_args(func)
        self.dead: list = []

    def parts(self, d: _Desc, before: Operation) -> list:
        nan = d.nan
        if not isinstance(nan, Value):
            b = Builder(loc=before.loc)
            b.set_insertion_point_before(before)
            nan = b.create("arith.constant", [], [irt.i1], {"value": bool(nan)}).result
        return [d.base, *d.shape, *d.strides, nan]

    def expand(self, values, before: Operation) -> list:
        out: list = []
        for v in values:
            out += self.parts(self.descs[v], before) if v in self.descs else [v]
        return out

    def bind(self, olds, news) -> None:
        """Map old values onto new ones: a descriptor onto its parts, others replaced."""
        k = 0
        for old in olds:
            t = old.type
            if isinstance(t, irt.TensorDescType):
                n = len(t.block.shape)
                ps = news[k:k + 2 * n + 2]
                self.descs[old] = _Desc(ps[0], list(ps[1:1 + n]), list(ps[1 + n:1 + 2 * n]),
                                        ps[-1], t.block, t.signedness)
                k += 2 * n + 2
            else:
                news[k].name = old.name
                old.replace_all_uses_with(news[k])
                k += 1

    def block(self, block) -> None:
        for op in list(block.ops):
            self.op(op)

    def op(self, op: Operation) -> None:
        name = op.name
        if name == "tt.make_tensor_descriptor":
            b = Builder(loc=op.loc)
            b.set_insertion_point_after(op)
            self.descs[op.result] = _from_make(op, b)
            self.dead.append(op)
        elif name in _USES:
            d = self.descs.get(op.operands[0])
            if d is None:
                raise DescriptorRewriteError(f"{name} on a descriptor of unknown origin", op)
            b = Builder(loc=op.loc)
            b.set_insertion_point_before(op)
            _rewrite_use(op, d, b)
            op.erase()
        elif name in ("scf.yield", "scf.condition") and \
                any(v in self.descs for v in op.operands):
            new = self.expand(list(op.operands), op)
            op.drop_operands()
            for v in new:
                op._add_operand(v)
        elif name in ("scf.for", "scf.if", "scf.while") and _carries(op, self.descs):
            self.region_op(op)
        else:
            if any(v in self.descs for v in op.operands):
                raise _error(op)
            for region in op.regions:
                for blk in region.blocks:
                    self.block(blk)

    def region_op(self, op: Operation) -> None:
        """A new ``scf.for``/``scf.if``/``scf.while`` whose descriptor operands, block
        arguments and results are expanded into parts; the bodies move over and are
        rewritten."""
        n_fixed = {"scf.for": 3, "scf.if": 1}.get(op.name, 0)
        fixed = list(op.operands[:n_fixed])
        inits = self.expand(op.operands[n_fixed:], op)
        types = _expand_types([r.type for r in op.results])
        new = Operation(op.name, fixed + inits, types, dict(op.attributes),
                        len(op.regions), op.loc)
        assert op.parent is not None
        op.parent.insert_before(op, new)
        for old_r, new_r in zip(op.regions, new.regions, strict=True):
            for old_b in old_r.blocks:
                nb = new_r.add_block(_expand_types([a.type for a in old_b.args]))
                self.bind(old_b.args, nb.args)
                for inner in list(old_b.ops):
                    nb.append(inner)
                old_b.ops = []
                self.block(nb)
        self.bind(op.results, new.results)
        self.dead.append(op)


def _expand_types(types) -> list:
    out: list = []
    for t in types:
        if isinstance(t, irt.TensorDescType):
            n = len(t.block.shape)
            out += [irt.PointerType(t.block.element)] + [irt.i64] * (2 * n) + [irt.i1]
        else:
            out.append(t)
    return out


def _carries(op: Operation, descs: dict) -> bool:
    return any(v in descs for v in op.operands) or \
        any(isinstance(r.type, irt.TensorDescType) for r in op.results)


def rewrite_function(func: Operation) -> None:
    """Rewrite every descriptor op of ``func`` (a ``tt.func``) in place; raises
    :class:`DescriptorRewriteError` for a descriptor used by another op."""
    rw = _Rewriter(func)
    rw.block(func.regions[0].block)
    for op in reversed(rw.dead):
        op.erase()


@dataclass
class RewriteTensorDescriptorToPointer(Pass):
    """The pass object (no options); see the module docstring."""

    name = "triton-rewrite-tensor-descriptor-to-pointer"

    def run(self, module: Operation, ctx=None) -> None:
        for func in functions(module) if module.name == "builtin.module" else [module]:
            rewrite_function(func)


def rewritten(module: Operation, clone) -> Operation:
    """``module`` with its descriptors rewritten: ``clone(module)`` rewritten when it has any
    (the caller's module stays as it is), else ``module`` itself."""
    if not has_descriptors(module):
        return module
    from .cse import CSE
    from .dce import DCE
    copy = clone(module)
    RewriteTensorDescriptorToPointer().run(copy)
    CSE().run(copy, None)
    DCE().run(copy, None)
    return copy
