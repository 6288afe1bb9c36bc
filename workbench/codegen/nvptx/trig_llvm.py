"""The operations :mod:`.trig_f64`'s algorithm needs, as LLVM IR (f64 values, i64 integers):
arithmetic, ``llvm.fma``/``floor``/``rint``/``fabs`` (PTX ``fma.rn.f64``, ``cvt.rmi``,
``cvt.rni``, ``abs``; PTX ISA 9.7.3), ordered compares, selects, bit operations, and the 24-bit
digits of 2/pi as a private constant array in global memory (read with ``ld.global``)."""
from __future__ import annotations

from llvmlite import ir

from . import trig_f64
from .types import F64, I64

_TABLE_NAME = "wb_two_over_pi_digits"


def _int(v):
    return I64(v) if isinstance(v, int) else v


class LlvmOps:
    """Builds the LLVM IR of :func:`workbench.codegen.nvptx.trig_f64.trig` with ``kl``'s
    builder (``kl.b``, ``kl.intrinsic``, ``kl.module``)."""

    def __init__(self, kl):
        self.kl, self.b = kl, kl.b

    def _call(self, name, *args):
        return self.b.call(self.kl.intrinsic(name, F64, [F64] * len(args)), list(args))

    @staticmethod
    def const(v):
        return ir.Constant(F64, float(v))

    def add(self, a, b):
        return self.b.fadd(a, b)

    def sub(self, a, b):
        return self.b.fsub(a, b)

    def mul(self, a, b):
        return self.b.fmul(a, b)

    def div(self, a, b):
        return self.b.fdiv(a, b)

    def neg(self, a):
        return self.b.fsub(ir.Constant(F64, -0.0), a)

    def fma(self, a, b, c):
        return self._call("llvm.fma.f64", a, b, c)

    def floor(self, a):
        return self._call("llvm.floor.f64", a)

    def rint(self, a):
        return self._call("llvm.rint.f64", a)

    def fabs(self, a):
        return self._call("llvm.fabs.f64", a)

    def lt(self, a, b):
        return self.b.fcmp_ordered("<", a, b)

    def ge(self, a, b):
        return self.b.fcmp_ordered(">=", a, b)

    def eq(self, a, b):
        return self.b.fcmp_ordered("==", a, b)

    def both(self, a, b):
        return self.b.and_(a, b)

    def select(self, c, a, b):
        return self.b.select(c, a, b)

    def to_bits(self, a):
        return self.b.bitcast(a, I64)

    def ishr(self, v, n):
        return self.b.lshr(v, _int(n))

    def iand(self, v, m):
        return self.b.and_(v, _int(m))

    def ior(self, v, m):
        return self.b.or_(v, _int(m))

    def iadd(self, v, n):
        return self.b.add(v, _int(n))

    def isub(self, v, n):
        return self.b.sub(v, _int(n))

    def imul(self, v, n):
        return self.b.mul(v, _int(n))

    def idiv(self, v, n):
        return self.b.sdiv(v, _int(n))

    def itof(self, v):
        return self.b.sitofp(v, F64)

    def pow2(self, n):
        """2.0^n for an i64 ``n`` in the normal exponent range."""
        return self.b.bitcast(self.b.shl(self.b.add(n, I64(1023)), I64(52)), F64)

    def table(self, i):
        """``trig_f64.TABLE[i]`` for an i64 index ``i`` (in range by construction)."""
        g = self.kl.module.globals.get(_TABLE_NAME)
        ty = ir.ArrayType(F64, len(trig_f64.TABLE))
        if g is None:
            g = ir.GlobalVariable(self.kl.module, ty, _TABLE_NAME, addrspace=1)
            g.global_constant = True
            g.linkage = "private"
            g.initializer = ir.Constant(ty, list(trig_f64.TABLE))
        ptr = self.b.gep(g, [I64(0), i], inbounds=True, source_etype=ty)
        return self.b.load(ptr, typ=F64)


def trig_f64_llvm(kl, name: str, x):
    """``name`` (sin, cos, tan) of the f64 LLVM value ``x`` (:func:`.trig_f64.trig`)."""
    return trig_f64.trig(LlvmOps(kl), name, x)


__all__ = ["LlvmOps", "trig_f64_llvm"]
