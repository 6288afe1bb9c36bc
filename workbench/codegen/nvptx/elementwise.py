"""Elementwise ops (arith, math, casts), applied register by register.

Math follows Triton's NVIDIA lowering: ``exp(x) = ex2.approx.f32(x * log2(e))``,
``exp2(x) = ex2.approx.ftz.f32(x)`` (subnormal results flushed to zero, as Triton's libdevice
call with ftz on),
``log(x) = lg2.approx.f32(x) * ln(2)``, ``sqrt``/``rsqrt`` approximate, fp32 ``/`` as
``div.full.f32`` (PTX ISA 9.7.3: ex2, lg2, sqrt, rsqrt, div). f16 and bf16 math is computed in
f32 and rounded back; bf16 arithmetic likewise (bf16 is carried as i16 bits, see
:mod:`.types`). ``erf`` and f64 ``exp``/``exp2``/``log``/``log2``/``sin``/``cos`` come from
:mod:`.mathlib` (our own polynomials, no libdevice); other f64 transcendental functions raise
UnsupportedError.
"""
from __future__ import annotations

import math

from llvmlite import ir

from ...errors import UnsupportedError
from ...ir.types import FloatType, IntType
from .. import fp8
from . import libdevice_link, mathlib
from .fp8cvt import fp8_cast
from .types import F16, F32, F64, GLOBAL_PTR, I16, I32, I64, is_bf16, llvm_type

_INT_BIN = {"addi": "add", "subi": "sub", "muli": "mul", "divsi": "sdiv", "divui": "udiv",
            "remsi": "srem", "remui": "urem", "andi": "and_", "ori": "or_", "xori": "xor",
            "shli": "shl", "shrsi": "ashr", "shrui": "lshr"}
_INT_MINMAX = {"maxsi": (">", True), "minsi": ("<", True), "maxui": (">", False),
               "minui": ("<", False)}
_FLOAT_BIN = {"addf": "fadd", "subf": "fsub", "mulf": "fmul", "remf": "frem"}
_FLOAT_INTRINSIC = {"maxnumf": "llvm.maxnum", "minnumf": "llvm.minnum",
                    "maximumf": "llvm.maximum", "minimumf": "llvm.minimum"}
_CMPI = {"eq": ("==", True), "ne": ("!=", True), "slt": ("<", True), "sle": ("<=", True),
         "sgt": (">", True), "sge": (">=", True), "ult": ("<", False), "ule": ("<=", False),
         "ugt": (">", False), "uge": (">=", False)}
_CMPF = {"oeq": ("==", True), "one": ("!=", True), "olt": ("<", True), "ole": ("<=", True),
         "ogt": (">", True), "oge": (">=", True), "ord": ("ord", True), "ueq": ("==", False),
         "une": ("!=", False), "ult": ("<", False), "ule": ("<=", False), "ugt": (">", False),
         "uge": (">=", False), "uno": ("uno", False)}
_CASTS = {"extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "extf", "truncf",
          "bitcast"}
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


def handles(name: str) -> bool:
    """True when :func:`lower` lowers op ``name``."""
    d, _, base = name.partition(".")
    if d == "arith":
        return base in _INT_BIN or base in _INT_MINMAX or base in _FLOAT_BIN or base in (
            "divf", "cmpi", "cmpf", "select") or base in _FLOAT_INTRINSIC or base in _CASTS
    if d == "math":
        return True
    return name in ("tt.fp_to_fp", "tt.precise_divf", "tt.precise_sqrt", "tt.bitcast",
                    "tt.int_to_ptr", "tt.ptr_to_int")


def _ftype(t):
    return {"f16": F16, "f32": F32, "f64": F64}.get(t.name, F32)


def to_f32(b, v, t):
    """Widen a value of IR float type ``t`` to f32 (bf16 bits shifted left by 16: exact; fp8
    bits by :mod:`workbench.codegen.fp8`: exact)."""
    if t.is_fp8:
        return fp8.to_f32(b, v, fp8.fmt_of(t.name))
    if is_bf16(t):
        return b.bitcast(b.shl(b.zext(v, I32), I32(16)), F32)
    if t.name == "f16":
        return b.fpext(v, F32)
    if t.name == "f64":
        return b.fptrunc(v, F32)
    return v


def from_f32(b, v, t):
    """Round an f32 value to IR float type ``t`` (bf16: ``cvt.rn.bf16.f32``, sm_80+)."""
    if is_bf16(t):
        asm = ir.InlineAsm(ir.FunctionType(I16, [F32]), "cvt.rn.bf16.f32 $0, $1;", "=h,f")
        return b.call(asm, [v])
    if t.name == "f16":
        return b.fptrunc(v, F16)
    if t.name == "f64":
        return b.fpext(v, F64)
    return v


def _asm1(b, text, v, rty=F32, cons="=f,f"):
    return b.call(ir.InlineAsm(ir.FunctionType(rty, [v.type]), text, cons), [v])


def fusion_flags(kl) -> tuple:
    """LLVM fast-math flags of fp32/fp64 ``fadd``/``fsub``/``fmul``: ``contract`` when the
    kernel's ``enable_fp_fusion`` option is on (the default), so that LLVM fuses a multiply
    and an add into ``fma.rn`` and the others print as ``mul.f32``/``add.f32``, which ptxas
    may fuse too; without it they print as ``mul.rn.f32``/``add.rn.f32`` (never fused). Triton
    3.6 gets the same from its target machine's ``AllowFPOpFusion = Fast``
    (``third_party/nvidia/backend/compiler.py``, ``enable_fp_fusion``)."""
    return ("contract",) if getattr(kl, "fp_fusion", True) else ()


def math_f32(kl, base: str, x):
    """``base`` (exp, exp2, log, log2, sqrt, rsqrt, sin, cos, tanh) of the f32 value ``x`` with
    the approximate PTX instructions (``ex2.approx.f32``, ``lg2.approx.f32``...; PTX ISA
    9.7.4 floating-point instructions), as Triton's fast math lowering. Raises
    UnsupportedError for other names."""
    b = kl.b
    if base == "exp":
        return b.call(kl.intrinsic("llvm.nvvm.ex2.approx.f32", F32, [F32]),
                      [b.fmul(x, ir.Constant(F32, LOG2E), flags=fusion_flags(kl))])
    if base == "exp2":  # Triton: llvm.exp2 -> libdevice __nv_exp2f, ftz as reflected
        ftz = ".ftz" if getattr(kl, "reflect_ftz", True) else ""
        return b.call(kl.intrinsic(f"llvm.nvvm.ex2.approx{ftz}.f32", F32, [F32]), [x])
    if base == "log":
        return b.fmul(_asm1(b, "lg2.approx.f32 $0, $1;", x), ir.Constant(F32, LN2))
    if base == "log2":
        return _asm1(b, "lg2.approx.f32 $0, $1;", x)
    if base == "sqrt":
        return b.call(kl.intrinsic("llvm.nvvm.sqrt.approx.f", F32, [F32]), [x])
    if base == "rsqrt":
        return b.call(kl.intrinsic("llvm.nvvm.rsqrt.approx.f", F32, [F32]), [x])
    if base == "sin":
        return _asm1(b, "sin.approx.f32 $0, $1;", x)
    if base == "cos":
        return _asm1(b, "cos.approx.f32 $0, $1;", x)
    if base == "tanh":
        return _asm1(b, "tanh.approx.f32 $0, $1;", x)
    raise UnsupportedError(f"math.{base} is not supported by the CUDA backend yet")


def _unary_math(kl, op, base, x, t):
    b = kl.b
    if isinstance(t, IntType):
        if base == "absi":
            neg = b.sub(ir.Constant(x.type, 0), x)
            return b.select(b.icmp_signed("<", x, ir.Constant(x.type, 0)), neg, x)
        raise UnsupportedError(f"math.{base} on integers is not supported", op.loc)
    if base in ("absf", "floor", "ceil") or (base == "sqrt" and t.name == "f64"):
        name = {"absf": "llvm.fabs", "floor": "llvm.floor", "ceil": "llvm.ceil",
                "sqrt": "llvm.sqrt"}[base]
        if is_bf16(t):
            if base == "absf":
                return b.and_(x, ir.Constant(I16, 0x7FFF))
            y = to_f32(b, x, t)
            return from_f32(b, b.call(kl.intrinsic(name + ".f32", F32, [F32]), [y]), t)
        suffix = {"f16": "f16", "f32": "f32", "f64": "f64"}[t.name]
        return b.call(kl.intrinsic(f"{name}.{suffix}", x.type, [x.type]), [x])
    if base == "rsqrt" and t.name == "f64":
        # 1 / sqrt.rn.f64(x): two correctly rounded steps (PTX ISA 9.7.4: sqrt, div)
        root = b.call(kl.intrinsic("llvm.sqrt.f64", x.type, [x.type]), [x])
        return b.fdiv(ir.Constant(x.type, 1.0), root)
    if t.name == "f64":
        y = mathlib.f64_math(kl, base, x)
        if y is None and libdevice_link.defines(f"__nv_{base}", "double (double)"):
            # NVIDIA's own (``__nv_erf``...), linked from libdevice as Triton's f64 math is
            return b.call(kl.intrinsic(f"__nv_{base}", F64, [F64]), [x])
        if y is None:
            raise UnsupportedError(
                f"math.{base} in float64 is not implemented by the CUDA backend without "
                f"libdevice (it has its own f64 exp, exp2, log, log2, sqrt, rsqrt, sin and "
                f"cos; the sass extra installs libdevice); compute in float32 "
                f"(x.to(tl.float32))",
                op.loc)
        return y
    if base == "erf":
        return from_f32(b, mathlib.erf_f32(kl, to_f32(b, x, t)), t)
    return from_f32(b, math_f32(kl, base, to_f32(b, x, t)), t)


def float_binary(kl, base: str, x, y, t):
    """``arith.<base>`` (addf, mulf, divf, maxnumf, minimumf, ...) of two registers of IR
    float type ``t`` (bf16, and f16 divisions, computed in f32 and rounded back). Raises
    UnsupportedError for other ops."""
    b = kl.b
    if is_bf16(t) or (t.name == "f16" and base in ("divf", "precise_divf")):
        r = float_binary(kl, base, to_f32(b, x, t), to_f32(b, y, t), FloatType("f32"))
        return from_f32(b, r, t)
    if base in _FLOAT_BIN:
        flags = fusion_flags(kl) if base != "remf" else ()
        return getattr(b, _FLOAT_BIN[base])(x, y, flags=flags)
    if base in _FLOAT_INTRINSIC:
        suffix = t.name
        return b.call(kl.intrinsic(f"{_FLOAT_INTRINSIC[base]}.{suffix}", x.type,
                                   [x.type, x.type]), [x, y])
    if base == "divf" and t.name == "f32":
        return b.call(kl.intrinsic("llvm.nvvm.div.full", F32, [F32, F32]), [x, y])
    if base in ("divf", "precise_divf"):
        return b.fdiv(x, y)
    raise UnsupportedError(f"arith.{base} is not supported")


def _cast(kl, base, x, src, dst):
    b = kl.b
    lt = llvm_type(dst)
    if base in ("extsi", "extui", "trunci"):
        if x.type.width == lt.width:
            return x
        return {"extsi": b.sext, "extui": b.zext, "trunci": b.trunc}[base](x, lt)
    if base in ("sitofp", "uitofp"):
        f = b.sitofp if base == "sitofp" else b.uitofp
        if is_bf16(dst):
            return from_f32(b, f(x, F32), dst)
        return f(x, lt)
    if base in ("fptosi", "fptoui"):
        if is_bf16(src):
            x = to_f32(b, x, src)
        return (b.fptosi if base == "fptosi" else b.fptoui)(x, lt)
    if base == "bitcast":
        return b.bitcast(x, lt) if x.type != lt else x
    # extf / truncf / tt.fp_to_fp
    if src == dst:
        return x
    if is_bf16(src) or is_bf16(dst):
        return from_f32(b, to_f32(b, x, src), dst) if not (dst.name == "f64") else \
            b.fpext(to_f32(b, x, src), F64)
    if src.width < dst.width:
        return b.fpext(x, lt)
    return b.fptrunc(x, lt)


def _same_bits(kl, name, x, src, dst):
    """``tt.bitcast`` (same width, other type), ``tt.int_to_ptr`` (an i64 address -> a
    global pointer: LLVM ``inttoptr``) and ``tt.ptr_to_int`` (a pointer -> its i64 address:
    ``ptrtoint``), as Triton's LLVM IR has them (``inttoptr i64 %a to ptr addrspace(1)``)."""
    if name == "tt.int_to_ptr":
        return kl.b.inttoptr(x, GLOBAL_PTR)
    if name == "tt.ptr_to_int":
        return kl.b.ptrtoint(x, I64)
    return _cast(kl, "bitcast", x, src, dst)


def _compare(kl, op, x, y, t):
    b = kl.b
    pred = op.attributes["predicate"]
    if op.name == "arith.cmpi":
        sym, signed = _CMPI[pred]
        return (b.icmp_signed if signed else b.icmp_unsigned)(sym, x, y)
    if pred in ("false", "true"):
        return ir.Constant(ir.IntType(1), 1 if pred == "true" else 0)
    if is_bf16(t):
        x, y = to_f32(b, x, t), to_f32(b, y, t)
    sym, ordered = _CMPF[pred]
    return (b.fcmp_ordered if ordered else b.fcmp_unordered)(sym, x, y)


def broadcast_operands(kl, op) -> tuple[list, int]:
    """The registers of every operand of ``op``, scalars repeated to the widest operand's
    count ``n``; returns ``(lists, n)``."""
    regs = [kl.get(v) for v in op.operands]
    n = max(len(r) for r in regs)
    return [r * n if len(r) == 1 and n > 1 else r for r in regs], n


def lower(kl, op) -> None:
    """Lower one elementwise op (result registers = operands' registers, same layout)."""
    name = op.name
    base = name.split(".", 1)[1]
    regs, n = broadcast_operands(kl, op)
    src_t = op.operands[0].type.scalar if op.operands else None
    dst_t = op.result.type.scalar
    b = kl.b
    out = []
    for i in range(n):
        xs = [r[i] for r in regs]
        if base in _INT_BIN:
            out.append(getattr(b, _INT_BIN[base])(*xs))
        elif base in _INT_MINMAX:
            sym, signed = _INT_MINMAX[base]
            c = (b.icmp_signed if signed else b.icmp_unsigned)(sym, xs[0], xs[1])
            out.append(b.select(c, xs[0], xs[1]))
        elif base in _FLOAT_BIN or base in _FLOAT_INTRINSIC or base in ("divf", "precise_divf"):
            out.append(float_binary(kl, base, xs[0], xs[1], dst_t))
        elif base in ("cmpi", "cmpf"):
            out.append(_compare(kl, op, xs[0], xs[1], src_t))
        elif base == "select":
            out.append(b.select(*xs))
        elif name == "tt.fp_to_fp" and isinstance(src_t, FloatType) and (
                src_t.is_fp8 or dst_t.is_fp8):
            out.append(fp8_cast(kl, xs[0], src_t, dst_t, op.attributes.get("rounding")))
        elif base in _CASTS or name == "tt.fp_to_fp":
            out.append(_cast(kl, "extf" if name == "tt.fp_to_fp" else base, xs[0], src_t, dst_t))
        elif name in ("tt.bitcast", "tt.int_to_ptr", "tt.ptr_to_int"):
            out.append(_same_bits(kl, name, xs[0], src_t, dst_t))
        elif base == "fma":
            if is_bf16(dst_t):
                f = [to_f32(b, x, dst_t) for x in xs]
                out.append(from_f32(b, b.call(kl.intrinsic("llvm.fma.f32", F32, [F32] * 3), f),
                                    dst_t))
            else:
                out.append(b.call(kl.intrinsic(f"llvm.fma.{dst_t.name}", xs[0].type,
                                               [xs[0].type] * 3), xs))
        elif name == "tt.precise_sqrt":
            out.append(_unary_math(kl, op, "sqrt", xs[0], dst_t) if dst_t.name == "f64" else
                       from_f32(b, b.call(kl.intrinsic("llvm.sqrt.f32", F32, [F32]),
                                          [to_f32(b, xs[0], dst_t)]), dst_t))
        elif op.dialect == "math":
            out.append(_unary_math(kl, op, base, xs[0], dst_t))
        else:
            raise UnsupportedError(f"{name} is not supported by the CUDA backend", op.loc)
    kl.set(op.result, out)


__all__ = ["handles", "lower", "to_f32", "from_f32", "LOG2E", "LN2", "math"]
