"""``tritongpu-F32DotTC``: fp32 dots with ``input_precision`` ``"bf16x3"``, ``"bf16x6"`` or
``"tf32x3"`` become several tensor-core dots on lower-precision pieces of the operands.

An fp32 value ``x`` is split into pieces that each fit the narrower format, most significant
first: ``hi = bf16(x)``, ``mid = bf16(x - hi)``, ``lo = bf16(x - hi - mid)`` (``arith.truncf``
rounds to nearest even; ``arith.extf`` and ``arith.subf`` take the remainder). Then, with
``c0 = 0`` (a splat of the accumulator's type):

* ``bf16x3`` (two pieces)::

      r = dot(mid_a, hi_b, c0); r = dot(hi_a, mid_b, r); r = nan_to_zero(r)
      r = dot(hi_a, hi_b, r); result = r + c

* ``bf16x6`` (three pieces) first adds ``dot(mid_a, mid_b)``, ``dot(lo_a, hi_b)`` and
  ``dot(hi_a, lo_b)``, then continues as ``bf16x3``;
* ``tf32x3``, on sm_80 and newer: ``big = cvt.rna.tf32.f32(x)`` (PTX ISA 9.7.9.21, ``cvt``;
  an elementwise inline-asm op), ``small = x - big``;
  ``r = dot(small_a, big_b, c0, tf32); r = dot(big_a, small_b, r, tf32)``;
  ``r = dot(big_a, big_b, nan_to_zero(r), tf32); result = r + c``.

``nan_to_zero`` (``cmpf uno`` + ``select``) drops the correction terms where they are NaN: a
1.0 times +inf has ``lo = 0``, and ``0 * inf`` would poison an otherwise infinite result.
The bf16 dots use ``inputPrecision = ieee`` (their operands are already bf16) and keep
``maxNumImpreciseAcc`` 0; the tf32 dots keep the original dot's ``maxNumImpreciseAcc``.

Source: Triton 3.6 ``lib/Dialect/TritonGPU/Transforms/F32DotTC.cpp`` (run by
``make_ttgir`` after ``tritongpu-coalesce``, ``emu-tf32`` on compute capability 8.x and
newer); the split follows Henry, Tang and Heinecke, "Leveraging the bfloat16 Artificial
Intelligence Datatype For Higher-Precision Computations" (arXiv:1904.06376) and the CUTLASS
3xTF32 scheme.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation, Value, functions
from ..ir.types import FloatType, IntType, TensorType
from .manager import Pass
from .values import block_of

_F32 = FloatType("f32")
_BF16 = FloatType("bf16")
_I1 = IntType(1)
#: bf16 pieces each split precision needs
BF16_PIECES = {"bf16x3": 2, "bf16x6": 3}
#: the tf32 rounding Triton's TF32x3 emits (PTX ISA: cvt.rna.tf32.f32)
TF32_ROUND = "cvt.rna.tf32.f32 $0, $1;"


class _Emitter:
    """Creates ops before ``anchor``, all at ``anchor``'s location."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor
        self.block = block_of(anchor)

    def op(self, name: str, operands, result_type, attributes=None) -> Value:
        new = Operation(name, operands, [result_type], attributes, loc=self.anchor.loc)
        self.block.insert_before(self.anchor, new)
        return new.result

    def retype(self, v: Value, element) -> TensorType:
        t = v.type
        assert isinstance(t, TensorType)
        return TensorType(t.shape, element, t.encoding)

    def split_bf16(self, x: Value, pieces: int) -> list[Value]:
        out = []
        for i in range(pieces):
            part = self.op("arith.truncf", [x], self.retype(x, _BF16))
            if i != pieces - 1:
                wide = self.op("arith.extf", [part], self.retype(x, _F32))
                x = self.op("arith.subf", [x, wide], x.type)
            out.append(part)
        return out

    def zero_like(self, c: Value) -> Value:
        zero = self.op("arith.constant", [], _F32, {"value": 0.0})
        return self.op("tt.splat", [zero], c.type)

    def dot(self, a: Value, b: Value, c: Value, precision: str = "ieee",
            imprecise: int = 0) -> Value:
        return self.op("tt.dot", [a, b, c], c.type,
                       {"inputPrecision": precision, "maxNumImpreciseAcc": imprecise})

    def nan_to_zero(self, v: Value) -> Value:
        t = v.type
        assert isinstance(t, TensorType)
        nan = self.op("arith.cmpf", [v, v], TensorType(t.shape, _I1, t.encoding),
                      {"predicate": "uno"})
        return self.op("arith.select", [nan, self.zero_like(v), v], t)

    def tf32(self, x: Value) -> Value:
        return self.op("tt.elementwise_inline_asm", [x], x.type,
                       {"asm_string": TF32_ROUND, "constraints": "=r,r",
                        "packed_element": 1, "pure": True})


def _is_f32(v: Value) -> bool:
    t = v.type
    return isinstance(t, TensorType) and t.element == _F32


def _rewrite_bf16(dot: Operation, pieces: int) -> Value:
    e = _Emitter(dot)
    a, b, c = dot.operands
    hi, mid, lo = 0, 1, 2
    pa, pb = e.split_bf16(a, pieces), e.split_bf16(b, pieces)
    r = e.zero_like(c)
    if pieces == 3:
        r = e.dot(pa[mid], pb[mid], r)
        r = e.dot(pa[lo], pb[hi], r)
        r = e.dot(pa[hi], pb[lo], r)
    r = e.dot(pa[mid], pb[hi], r)
    r = e.dot(pa[hi], pb[mid], r)
    r = e.nan_to_zero(r)
    r = e.dot(pa[hi], pb[hi], r)
    return e.op("arith.addf", [r, c], c.type)


def _rewrite_tf32x3(dot: Operation) -> Value:
    e = _Emitter(dot)
    a, b, c = dot.operands
    imprecise = int(dot.attributes.get("maxNumImpreciseAcc") or 0)
    a_big = e.tf32(a)
    a_small = e.op("arith.subf", [a, a_big], a.type)
    b_big = e.tf32(b)
    b_small = e.op("arith.subf", [b, b_big], b.type)
    r = e.dot(a_small, b_big, e.zero_like(c), "tf32", imprecise)
    r = e.dot(a_big, b_small, r, "tf32", imprecise)
    r = e.dot(a_big, b_big, e.nan_to_zero(r), "tf32", imprecise)
    return e.op("arith.addf", [r, c], c.type)


def decompose_f32_dots(module: Operation, emu_tf32: bool) -> int:
    """Rewrite, in place, every ``tt.dot`` of ``module`` (ttgir or ttir) whose A and B are fp32
    tensors and whose ``inputPrecision`` is ``bf16x3``/``bf16x6`` (always) or ``tf32x3``
    (when ``emu_tf32``) into the dots described in the module docstring; returns how many
    dots were rewritten."""
    n = 0
    for func in functions(module):
        for dot in [o for o in func.walk() if o.name == "tt.dot"]:
            a, b = dot.operands[0], dot.operands[1]
            if not (_is_f32(a) and _is_f32(b)):
                continue
            precision = dot.attributes.get("inputPrecision", "ieee")
            if precision in BF16_PIECES:
                new = _rewrite_bf16(dot, BF16_PIECES[precision])
            elif precision == "tf32x3" and emu_tf32:
                new = _rewrite_tf32x3(dot)
            else:
                continue
            dot.result.replace_all_uses_with(new)
            dot.erase()
            n += 1
    return n


@dataclass
class F32DotTC(Pass):
    """``tritongpu-F32DotTC``: :func:`decompose_f32_dots`. ``emu_tf32``: also rewrite
    ``tf32x3`` dots (Triton: compute capability 8.x and newer)."""

    emu_tf32: bool = True
    name = "tritongpu-F32DotTC"

    def run(self, module: Operation, ctx) -> None:
        decompose_f32_dots(module, self.emu_tf32)


__all__ = ["BF16_PIECES", "F32DotTC", "TF32_ROUND", "decompose_f32_dots"]
