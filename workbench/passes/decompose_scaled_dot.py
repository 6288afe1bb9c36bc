"""``decompose-scaled-dot``: rewrite ``tt.dot_scaled`` as bf16 arithmetic and a ``tt.dot``,
what Triton does on targets without block-scaled MMA (sm_90 included:
``lib/Dialect/TritonGPU/Transforms/DecomposeScaledBlocked.cpp``).

The compute type is bf16, or f16 when an operand is fp16 (as Triton chooses). Per operand:
widen to it (e4m3/e5m2 by ``tt.fp_to_fp``, others through f32; e2m1 unpacked from its bytes,
low nibble first, with integer ops giving bf16 bits); the e8m0 scale ``s`` becomes
``2**(s - 127)`` from its bits (bf16 ``s << 7``, so s = 0 gives 0 as in Triton; f16 through
f32 ``s << 23``), is repeated over its group of 32 elements along K and multiplies the
operand; a scale of 255 makes its group NaN. Then ``tt.dot`` -> f32 with the accumulator.

Each backend runs it on the ttir before lowering (after the ``ttir`` stage is printed; CUDA on
its copy, before the ttgir passes), so the ``ttir`` stage shows ``tt.dot_scaled`` as Triton
prints it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.builder import Builder
from ..ir.core import Operation
from ..ir.types import FloatType, IntType, TensorType
from .manager import Pass

BF16, F16, F32 = FloatType("bf16"), FloatType("f16"), FloatType("f32")
I1, I8, I16, I32 = IntType(1), IntType(8), IntType(16), IntType(32)
GROUP = 32


class _Emit:
    """Small helpers creating ttir ops at one builder's insertion point."""

    def __init__(self, b: Builder, ct: FloatType):
        self.b = b
        self.ct = ct  # the compute type: bf16, or f16 when an operand is fp16

    def op(self, name, operands, elem, shape, attrs=None):
        return self.b.value(name, operands, TensorType(tuple(shape), elem), attrs)

    def const(self, value, elem, shape):
        return self.op("arith.constant", [], elem, shape, {"value": value})

    def binop(self, name, x, value, elem):
        shape = x.type.shape
        return self.op(name, [x, self.const(value, elem, shape)], elem, shape)

    def e2m1_to_bf16(self, nib):
        """i16 nibbles (0..15) -> bf16: sign bit 3, exponent bits 2..1 (bias 1), mantissa
        bit 0; exponent 0 is the subnormal 0.5 * mantissa."""
        shape = nib.type.shape
        sign = self.binop("arith.shli", self.binop("arith.andi", nib, 8, I16), 12, I16)
        e = self.binop("arith.andi", self.binop("arith.shrui", nib, 1, I16), 3, I16)
        m = self.binop("arith.andi", nib, 1, I16)
        normal = self.op("arith.ori", [self.binop("arith.shli", self.binop(
            "arith.addi", e, 126, I16), 7, I16), self.binop("arith.shli", m, 6, I16)], I16,
            shape)
        sub = self.binop("arith.muli", m, 0x3F00, I16)
        is_sub = self.op("arith.cmpi", [e, self.const(0, I16, shape)], I1, shape,
                         {"predicate": "eq"})
        bits = self.op("arith.select", [is_sub, sub, normal], I16, shape)
        bits = self.op("arith.ori", [bits, sign], I16, shape)
        return self.op("tt.bitcast", [bits], BF16, shape)

    def unpack_e2m1(self, x, axis: int):
        """uint8 [R, C] -> bf16 twice as long along ``axis`` (low nibble first)."""
        r, c = x.type.shape
        lo = self.op("arith.extui", [self.binop("arith.andi", x, 0xF, I8)], I16, (r, c))
        hi = self.op("arith.extui", [self.binop("arith.shrui", x, 4, I8)], I16, (r, c))
        pair = self.op("tt.join", [self.e2m1_to_bf16(lo), self.e2m1_to_bf16(hi)], BF16,
                       (r, c, 2))
        if axis == 1:
            return self.op("tt.reshape", [pair], BF16, (r, 2 * c))
        pair = self.op("tt.trans", [pair], BF16, (r, 2, c), {"order": [0, 2, 1]})
        return self.op("tt.reshape", [pair], BF16, (2 * r, c))

    def widen(self, x, fmt: str, packed_axis: int):
        """An operand in the compute type (exact for every format but bf16 -> f16)."""
        if fmt == "e2m1":
            x = self.unpack_e2m1(x, packed_axis)
        elif fmt in ("e4m3", "e5m2"):
            return self.op("tt.fp_to_fp", [x], self.ct, x.type.shape)
        if x.type.element != self.ct:
            shape = x.type.shape
            x = self.op("arith.truncf", [self.op("arith.extf", [x], F32, shape)], self.ct,
                        shape)
        return x

    def scale_value(self, s):
        """e8m0 exponents (i8) -> ``2**(s - 127)`` in the compute type, from its bits: bf16
        ``s << 7``; f16 through f32 ``s << 23`` (out-of-range scales become inf or 0)."""
        shape = s.type.shape
        if self.ct == BF16:
            bits = self.binop("arith.shli", self.op("arith.extui", [s], I16, shape), 7, I16)
            return self.op("tt.bitcast", [bits], BF16, shape)
        bits = self.binop("arith.shli", self.op("arith.extui", [s], I32, shape), 23, I32)
        return self.op("arith.truncf", [self.op("tt.bitcast", [bits], F32, shape)], F16,
                       shape)

    def scaled(self, x, s, k_axis: int):
        """``x`` (compute type, K along ``k_axis``) times ``2**(s - 127)`` per group of 32 along K;
        NaN where ``s`` is 255. ``s``: i8 [rows, K/32]."""
        rows, groups = s.type.shape
        scale = self.spread(self.scale_value(s), k_axis)
        nan = self.op("arith.cmpi", [s, self.const(-1, I8, (rows, groups))], I1,
                      (rows, groups), {"predicate": "eq"})
        nan = self.spread(nan, k_axis)
        ct = self.ct
        prod = self.op("arith.mulf", [x, scale], ct, x.type.shape)
        return self.op("arith.select", [nan, self.const(float("nan"), ct, x.type.shape),
                                        prod], ct, x.type.shape)

    def spread(self, v, k_axis: int):
        """[rows, K/32] -> [rows, K] (each value repeated 32 times), transposed to [K, rows]
        when K is axis 0."""
        rows, groups = v.type.shape
        e = v.type.element
        v = self.op("tt.expand_dims", [v], e, (rows, groups, 1), {"axis": 2})
        v = self.op("tt.broadcast", [v], e, (rows, groups, GROUP))
        v = self.op("tt.reshape", [v], e, (rows, groups * GROUP))
        if k_axis == 0:
            v = self.op("tt.trans", [v], e, (groups * GROUP, rows), {"order": [1, 0]})
        return v


def decompose(op: Operation) -> None:
    """Replace one ``tt.dot_scaled`` by its decomposition (module doc)."""
    attrs = op.attributes
    seg = attrs.get("operandSegmentSizes") or [1, 1, 1] + [1] * (len(op.operands) - 3) + \
        [0] * (5 - len(op.operands))
    a, b, c = op.operands[:3]
    rest = list(op.operands[3:])
    sa = rest.pop(0) if seg[3] else None
    sb = rest.pop(0) if seg[4] else None
    bld = Builder(loc=op.loc)
    bld.set_insertion_point_before(op)
    fa, fb = attrs["a_elem_type"], attrs["b_elem_type"]
    em = _Emit(bld, F16 if "fp16" in (fa, fb) else BF16)
    x = em.widen(a, fa, 1 if attrs.get("lhs_k_pack", True) else 0)
    y = em.widen(b, fb, 0 if attrs.get("rhs_k_pack", True) else 1)
    if sa is not None:
        x = em.scaled(x, sa, 1)
    if sb is not None:
        y = em.scaled(y, sb, 0)
    d = bld.value("tt.dot", [x, y, c], op.result.type,
                  {"inputPrecision": "ieee", "maxNumImpreciseAcc": 0})
    op.result.replace_all_uses_with(d)
    op.erase()


def decompose_all(module: Operation) -> Operation:
    """Decompose every ``tt.dot_scaled`` in ``module``, in place; returns ``module``."""
    for o in [o for o in module.walk() if o.name == "tt.dot_scaled"]:
        decompose(o)
    return module


@dataclass
class DecomposeScaledDot(Pass):
    """``tt.dot_scaled`` -> bf16 scaling and ``tt.dot`` (module doc)."""

    name = "decompose-scaled-dot"

    def run(self, module: Operation, ctx=None) -> None:
        decompose_all(module)
