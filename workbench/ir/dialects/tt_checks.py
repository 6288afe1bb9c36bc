"""Type rules of ``tt`` ops that an op spec's counts cannot express (Triton's op verifiers
and type constraints in ``TritonOps.td``), attached to the specs in
:mod:`workbench.ir.dialects.tt` as ``verify`` hooks."""
from __future__ import annotations

from ..types import IntType, PointerType, TensorType, like, shape_of
from .spec import fail


def _enc(t):
    return t.encoding if isinstance(t, TensorType) else None


def splat(op, ctx) -> None:
    src, t = op.operands[0].type, op.result.type
    if isinstance(src, TensorType) or not isinstance(t, TensorType) or t.element != src:
        fail(op, f"splats a scalar to a tensor of it; got {src} -> {t}")


def unsplat(op, ctx) -> None:
    src, t = op.operands[0].type, op.result.type
    ok = isinstance(src, TensorType) and src.numel == 1 and t == src.element
    if not ok:
        fail(op, f"takes the element of a one-element tensor; got {src} -> {t}")


def broadcast(op, ctx) -> None:
    s, t = op.operands[0].type, op.result.type
    ok = (isinstance(s, TensorType) and isinstance(t, TensorType) and s.rank == t.rank
          and s.element == t.element
          and all(a in (1, b) for a, b in zip(s.shape, t.shape, strict=True)))
    if not ok:
        fail(op, f"can only grow size-1 dims of the same rank and element; {s} -> {t}")
    if ctx.ttgir and s.encoding != t.encoding:
        fail(op, f"keeps the layout; {s} -> {t}")


def expand_dims(op, ctx) -> None:
    s, t = op.operands[0].type, op.result.type
    axis = op.attributes.get("axis")
    shape = list(shape_of(s))
    if not isinstance(axis, int) or not 0 <= axis <= len(shape):
        fail(op, f"axis {axis!r} out of range for {s}")
    shape.insert(axis, 1)
    if not isinstance(t, TensorType) or tuple(shape) != t.shape or s.scalar != t.element:
        fail(op, f"result must be {tuple(shape)} of {s.scalar}, got {t}")
    if ctx.ttgir:
        se = _enc(s)
        if getattr(se, "dim", None) != axis or getattr(se, "parent", None) != t.encoding:
            fail(op, f"operand layout must be #ttg.slice<{{dim = {axis}, parent = <result "
                     f"layout>}}>; {s} -> {t}")


def addptr(op, ctx) -> None:
    p, o = (v.type for v in op.operands)
    if not isinstance(p.scalar, PointerType) or not isinstance(o.scalar, IntType):
        fail(op, f"adds an integer offset to a pointer; got {p} and {o}")
    if shape_of(p) != shape_of(o) or op.result.type != p:
        fail(op, f"pointer {p}, offset {o} and result {op.result.type} must match in shape")


def _mask(op, i, p) -> None:
    if len(op.operands) > i:
        m = op.operands[i].type
        if m.scalar != IntType(1) or shape_of(m) != shape_of(p):
            fail(op, f"mask must be i1 of shape {shape_of(p)}, got {m}")


def load(op, ctx) -> None:
    p = op.operands[0].type
    if not isinstance(p.scalar, PointerType):
        fail(op, f"loads through a pointer, got {p}")
    want = like(p, p.scalar.pointee)
    if op.result.type != want:
        fail(op, f"result must be {want} (the pointee of {p}), got {op.result.type}")
    _mask(op, 1, p)
    if len(op.operands) > 2 and op.operands[2].type != want:
        fail(op, f"'other' must be {want}, got {op.operands[2].type}")


def store(op, ctx) -> None:
    p, v = op.operands[0].type, op.operands[1].type
    if not isinstance(p.scalar, PointerType):
        fail(op, f"stores the pointee through {p}, got {v}")
    want = like(p, p.scalar.pointee)
    if v != want:
        fail(op, f"stores {want} through {p}, got {v}")
    _mask(op, 2, p)


def make_range(op, ctx) -> None:
    t, a = op.result.type, op.attributes
    n = a.get("end", 0) - a.get("start", 0)
    if not isinstance(t, TensorType) or t.shape != (n,) or t.element != IntType(32):
        fail(op, f"result must be tensor<{n}xi32>, got {t}")


def program_id(op, ctx) -> None:
    if op.result.type != IntType(32) or op.attributes.get("axis") not in (0, 1, 2):
        fail(op, "returns i32 for axis 0, 1 or 2")


def _reduce_result(op, ctx, i, src, res, axis) -> None:
    s = src.type
    if not isinstance(s, TensorType) or not isinstance(axis, int) or not 0 <= axis < s.rank:
        fail(op, f"axis {axis!r} out of range for operand {s}")
    shape = s.shape[:axis] + s.shape[axis + 1:]
    if shape_of(res.type) != shape or res.type.scalar != s.element:
        fail(op, f"result #{i} must have shape {shape} of {s.element}, got {res.type}")
    if ctx.ttgir and shape:
        re_ = _enc(res.type)
        if getattr(re_, "dim", None) != axis or getattr(re_, "parent", None) != s.encoding:
            fail(op, f"result #{i} layout must be #ttg.slice<{{dim = {axis}, parent = "
                     f"<operand layout>}}>, got {res.type}")


def reduce(op, ctx) -> None:
    axis = op.attributes.get("axis")
    block = op.regions[0].blocks[0] if op.regions[0].blocks else None
    n = len(op.operands)
    if block is None or len(block.args) != 2 * n:
        fail(op, f"combine region needs {2 * n} arguments (2 per operand), has "
                 f"{len(block.args) if block else 0}")
    if len(op.results) != n:
        fail(op, f"has {n} operands but {len(op.results)} results")
    for i, (src, res) in enumerate(zip(op.operands, op.results, strict=True)):
        _reduce_result(op, ctx, i, src, res, axis)
        el = src.type.element
        if block.args[i].type != el or block.args[n + i].type != el:
            fail(op, f"combine arguments for operand #{i} must be {el}")
    term = block.ops[-1] if block.ops else None
    if term is not None and term.name == "tt.reduce.return":
        got = [v.type for v in term.operands]
        if got != [s.type.scalar for s in op.operands]:
            fail(term, f"must return {n} values of the element types, got {got}")


def dot(op, ctx) -> None:
    a, b, c = (tuple(shape_of(v.type)) for v in op.operands)
    ok = len(a) in (2, 3) and len(b) == len(a) and a[-1] == b[-2] and \
        a[:-2] == b[:-2] and c == a[:-1] + b[-1:] and tuple(shape_of(op.result.type)) == c
    if not ok:
        fail(op, f"needs MxK, KxN and MxN operands (or BxMxK, BxKxN, BxMxN); got {a}, {b}, {c}")


def convert_layout(op, ctx) -> None:
    s, t = op.operands[0].type, op.result.type
    if shape_of(s) != shape_of(t) or s.scalar != t.scalar:
        fail(op, f"changes only the layout; {s} -> {t}")


def dot_scaled(op, ctx) -> None:
    """``tt.dot_scaled``: 2-D operands whose K agree once e2m1 packing is counted, result
    shape [M, N], scales [M, K/32] and [N, K/32]."""
    a, b, d = (shape_of(v.type) for v in (op.operands[0], op.operands[1], op.results[0]))
    if len(a) != 2 or len(b) != 2 or len(d) != 2:
        fail(op, "tt.dot_scaled needs 2-D operands and result")
