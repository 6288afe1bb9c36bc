"""``tt.dot`` in the CPU lowering: ``c + a @ b`` on 2-D tiles, or per batch index on 3-D ones.

Numerics follow the interpreter (:func:`workbench.backends.interp.tensor_ops.dot`):

- fp32 inputs with ``inputPrecision = "tf32"`` (Triton's default): both operands are first
  truncated to TF32 (10 explicit mantissa bits, the 13 low bits cleared: what sm_80/sm_90
  tensor cores do with the raw fp32 registers Triton passes them, measured on an H200 by
  ``benchmarks/tf32_probe.py``; NaN and infinities pass through), then
  multiplied and accumulated in fp32. ``"ieee"``, ``"tf32x3"``, ``"bf16x3"``, ``"bf16x6"``
  keep full fp32 operands (those modes exist on GPUs to approach fp32 accuracy).
- fp16/bf16 inputs: exact widening to fp32, fp32 accumulation, the result rounded once to the
  accumulator's type (fp16 when ``out_dtype=float16``).
- fp64: all in fp64. int8 (any integer width): sign-extended, accumulated in i32 with
  wrap-around, as ``mma ... s32``.

Shape of the code: the operands become contiguous accumulator-type buffers (``A`` M x K,
``B`` K x N; a tile that already is one is used as it is, others are converted once) and the
accumulator an M x N buffer (the ``c`` operand's own buffer when nothing else uses ``c``, as
for ``acc = tl.dot(a, b, acc)`` in a loop, else a copy). Float dots whose N is a multiple of
4 run the register-blocked micro-kernel of :mod:`.dot_kernel`; others an i-k-j loop nest
``acc[i, j] = fma(A[i, k], B[k, j], acc[i, j])`` that LLVM vectorises over j. Both add the
products of each output element in k order with one fused multiply-add each, so they give
the same bits.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.core import Operation
from ...ir.types import FloatType, IntType, f32, f64, i32
from .. import fp8
from .dot_kernel import micro_kernel, vector_width
from .irtypes import tensor_of
from .llvmtypes import FLOAT, I32, fptrunc, storage_type, value_type
from .tiles import Buffer, contiguous_strides, loop_nest

_FULL_FP32 = ("ieee", "tf32x3", "bf16x3", "bf16x6")


def truncate_tf32(b: ir.IRBuilder, v):
    """Truncate an f32 value to TF32 (kept as f32): ``bits & 0xFFFFE000`` (round toward zero,
    as the tensor cores read fp32 registers); NaN unchanged."""
    bits = b.bitcast(v, I32)
    r = b.and_(bits, ir.Constant(I32, 0xFFFFE000 - (1 << 32)))
    isnan = b.fcmp_unordered("uno", v, v)
    return b.select(isnan, v, b.bitcast(r, FLOAT))


def _intrinsic(module, name, ty, nargs=1):
    return module.declare_intrinsic(name, [ty], ir.FunctionType(ty, [ty] * nargs))


def _accumulator_type(elem):
    """IR type of the accumulation for operand element type ``elem``."""
    if isinstance(elem, IntType):
        return i32
    if elem.name == "f64":
        return f64
    return f32


def _convert(b, v, src, dst):
    """Convert an LLVM value of IR scalar type ``src`` to IR scalar type ``dst`` (widening or
    narrowing ints, floats)."""
    if isinstance(src, FloatType) and src.is_fp8:  # exact in f32 (codegen.fp8)
        v, src = fp8.to_f32(b, v, fp8.fmt_of(src.name)), f32
    sv, dv = value_type(src), value_type(dst)
    if isinstance(dst, IntType):
        if sv.width == dv.width:
            return v
        return b.sext(v, dv) if sv.width < dv.width else b.trunc(v, dv)
    if sv == dv:
        return v
    widths = {ir.HalfType(): 16, FLOAT: 32}
    if widths.get(sv, 64) < widths.get(dv, 64):
        return b.fpext(v, dv)
    return fptrunc(b, v, dv)


def _converted(lw, tile, dst, tf32: bool) -> Buffer:
    """A fresh contiguous buffer holding ``tile`` converted to IR type ``dst`` (TF32-rounded
    when ``tf32``)."""
    b = lw.b
    out = lw.alloc(tile.shape, dst)

    def body(idx):
        e = lw.elems()
        v = _convert(b, e.get(tile, idx), tile.elem.scalar, dst)
        if tf32:
            v = truncate_tf32(b, v)
        e.store(out, idx, v)
    loop_nest(b, tile.shape, body)
    return out


def _operand(lw, tile, dst, tf32: bool) -> Buffer:
    """``tile`` as a contiguous buffer of IR type ``dst``: the tile itself when it already is
    one (no TF32 rounding to do), else a converted copy."""
    if isinstance(tile, Buffer) and tile.contiguous() and tile.elem == dst and not tf32:
        return tile
    return _converted(lw, tile, dst, tf32)


def _in_place_ok(op: Operation, tile, acc_t) -> bool:
    """May ``tt.dot`` accumulate into the buffer of its ``c`` operand? Only when ``c`` is used
    by nothing else and its buffer belongs to ``c`` alone: a loop-carried tile (the buffer of
    an ``scf.for``/``scf.while`` argument) or the fresh result of a load or another dot."""
    c = op.operands[2]
    if len(c.uses) != 1 or not isinstance(tile, Buffer) or not tile.contiguous():
        return False
    if tile.elem != acc_t:
        return False
    owner = c.defining_op
    if owner is None:
        parent = c.owner.parent.parent if c.owner is not None and c.owner.parent else None
        return parent is not None and parent.name in ("scf.for", "scf.while")
    return owner.name in ("tt.load", "tt.dot")


def lower_dot(lw, op: Operation) -> None:
    """Lower ``tt.dot [a, b, c] {inputPrecision}`` (see the module docstring)."""
    a, bb, c = (lw.tile(v) for v in op.operands)
    in_t = a.elem.scalar
    res_t = tensor_of(op.result.type).element
    acc_t = _accumulator_type(in_t)
    prec = str(op.attributes.get("inputPrecision") or "tf32").lower()
    tf32 = isinstance(in_t, FloatType) and in_t.name == "f32" and prec not in _FULL_FP32
    lw.set_loc(op)
    A = _operand(lw, a, acc_t, tf32)
    B = _operand(lw, bb, acc_t, tf32)
    acc = c if _in_place_ok(op, c, acc_t) else _converted(lw, c, acc_t, False)
    if len(A.shape) == 3:  # batched: one 2-D product per batch index, on views
        for i in range(A.shape[0]):
            _matmul(lw, _batch_view(lw, A, i), _batch_view(lw, B, i), _batch_view(lw, acc, i))
    else:
        _matmul(lw, A, B, acc)
    if res_t == acc_t:
        lw.env[op.result] = acc
    else:
        lw.env[op.result] = _converted(lw, acc, res_t, False)


def _batch_view(lw, buf: Buffer, i: int) -> Buffer:
    """The ``i``-th matrix of a contiguous 3-D buffer, as a contiguous 2-D buffer."""
    shape = tuple(buf.shape[1:])
    offset = ir.Constant(ir.IntType(64), i * shape[0] * shape[1])
    ptr = lw.b.gep(buf.ptr, [offset], source_etype=storage_type(buf.elem))
    return Buffer(shape, buf.elem, ptr, contiguous_strides(shape))


def _matmul(lw, A: Buffer, B: Buffer, acc: Buffer) -> None:
    """``acc += A @ B`` on contiguous 2-D buffers of one element type."""
    b = lw.b
    M, K = A.shape
    N = B.shape[1]
    vt = value_type(acc.elem)
    is_float = isinstance(acc.elem, FloatType)
    width = vector_width(vt, N) if is_float else 0
    if width:
        micro_kernel(lw, A, B, acc, width)
        return
    fma = _intrinsic(lw.m, "llvm.fmuladd", vt, 3) if is_float else None

    def body(idx):
        i, k, j = idx
        e = lw.elems()
        x, y, cur = e.get(A, (i, k)), e.get(B, (k, j)), e.get(acc, (i, j))
        nv = b.call(fma, [x, y, cur]) if is_float else b.add(cur, b.mul(x, y))
        e.store(acc, (i, j), nv)
    loop_nest(b, (M, K, N), body)
