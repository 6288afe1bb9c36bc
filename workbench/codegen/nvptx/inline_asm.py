"""``tt.elementwise_inline_asm`` on the CUDA backend: one LLVM inline-asm call per
``packed_element`` registers of the thread, as Triton 3.6's NVIDIA lowering does.

Packing: an operand or result whose elements are narrower than 32 bits travels as integer
registers of ``k * bits`` bits, ``k = min(32 // bits, pack)`` consecutive elements each (element
``j`` in bits ``j*bits ..``, the order of a ``<k x T>`` vector, so ``mov.b32 {a, b, c, d}, $n``
unpacks it as PTX does); wider elements travel one per register. Per call the registers are
``$0 ..`` the results' (result by result), then the operands' (operand by operand): the
numbering the user's ``constraints`` string describes. Results come back as one value, or an
LLVM struct when there are several registers. ``pure = false`` marks the asm ``sideeffect``.
A thread's element count must be a multiple of ``pack`` (raises CompilationError otherwise).
"""
from __future__ import annotations

from llvmlite import ir

from ...errors import CompilationError
from ...ir.dialects.tt import is_grid_dependency_control
from .elementwise import broadcast_operands
from .types import llvm_type


def _bits(t: ir.Type) -> int:
    if isinstance(t, ir.IntType):
        return t.width
    if isinstance(t, ir.PointerType):   # a global address, passed as is ("l")
        return 64
    return {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}[type(t)]


def _per_reg(t: ir.Type, pack: int) -> int:
    bits = _bits(t)
    return min(32 // bits, pack) if bits < 32 else 1


def _pack(b, vals: list, t: ir.Type) -> ir.Value:
    """``vals`` (elements of LLVM type ``t``) as one integer register, element 0 lowest."""
    if len(vals) == 1:
        return vals[0]
    bits = _bits(t)
    vec = ir.Constant(ir.VectorType(t, len(vals)), ir.Undefined)
    for j, v in enumerate(vals):
        vec = b.insert_element(vec, v, ir.IntType(32)(j))
    return b.bitcast(vec, ir.IntType(bits * len(vals)))


def _unpack(b, reg: ir.Value, t: ir.Type, k: int) -> list:
    if k == 1:
        return [reg]
    vec = b.bitcast(reg, ir.VectorType(t, k))
    return [b.extract_element(vec, ir.IntType(32)(j)) for j in range(k)]


def _check_constraints(op, n_out: int, n_in: int) -> None:
    parts = [c.strip() for c in str(op.attributes["constraints"]).split(",") if c.strip()]
    parts = [c for c in parts if not c.startswith("~")]       # clobbers take no register
    outs = sum(c.startswith("=") for c in parts)
    if (outs, len(parts) - outs) != (n_out, n_in):
        raise CompilationError(
            f"inline_asm_elementwise constraints name {outs} output and {len(parts) - outs} "
            f"input registers, but with pack={op.attributes.get('packed_element', 1)} the "
            f"results need {n_out} and the arguments {n_in}", op.loc,
            "elements narrower than 32 bits share a 32-bit register (4 x i8, 2 x f16); "
            "wider ones take one register each")


def gdc_notes(mod, arch: int) -> list[str]:
    """Compile-report notes for ``gdc_*`` calls in ``mod`` that target ``arch`` (below 90)
    makes no-ops (``griddepcontrol`` needs sm_90, PTX ISA "griddepcontrol")."""
    if arch >= 90:
        return []
    lines = sorted({str(op.loc) for op in mod.walk() if is_grid_dependency_control(op)})
    return [f"{where}: gdc_wait/gdc_launch_dependents do nothing on sm_{arch} (griddepcontrol "
            "and programmatic dependent launch need sm_90)" for where in lines]


def lower(kl, op) -> None:
    """Lower one ``tt.elementwise_inline_asm`` (module docstring)."""
    if is_grid_dependency_control(op) and kl.arch < 90:
        kl.set(op.result, [ir.Constant(ir.IntType(32), 0)])
        return
    pack = int(op.attributes.get("packed_element", 1))
    regs, n = broadcast_operands(kl, op) if op.operands else ([], 1)
    if n % pack:
        raise CompilationError(
            f"inline_asm_elementwise packs {pack} elements per call but each thread holds {n} "
            "of this tensor", op.loc, "use a pack that divides the elements per thread "
            "(BLOCK / (32 * num_warps)), or a larger block")
    in_ts = [llvm_type(v.type.scalar) for v in op.operands]
    out_ts = [llvm_type(r.type.scalar) for r in op.results]
    in_k = [_per_reg(t, pack) for t in in_ts]
    out_k = [_per_reg(t, pack) for t in out_ts]
    out_regs = [ir.IntType(_bits(t) * k) if k > 1 else t
                for t, k in zip(out_ts, out_k, strict=True) for _ in range(pack // k)]
    _check_constraints(op, len(out_regs),
                       sum(pack // k for k in in_k))
    ret = out_regs[0] if len(out_regs) == 1 else ir.LiteralStructType(out_regs)
    b = kl.b
    outs: list[list] = [[] for _ in op.results]
    for base in range(0, n, pack):
        args = [_pack(b, r[base + j: base + j + k], t)
                for r, t, k in zip(regs, in_ts, in_k, strict=True) for j in range(0, pack, k)]
        asm = ir.InlineAsm(ir.FunctionType(ret, [a.type for a in args]),
                           str(op.attributes["asm_string"]),
                           str(op.attributes["constraints"]),
                           side_effect=op.attributes.get("pure") is False)
        call = b.call(asm, args)
        got = [call] if len(out_regs) == 1 else \
            [b.extract_value(call, i) for i in range(len(out_regs))]
        i = 0
        for res, t, k in zip(outs, out_ts, out_k, strict=True):
            for _ in range(pack // k):
                res.extend(_unpack(b, got[i], t, k))
                i += 1
    for r, vals in zip(op.results, outs, strict=True):
        kl.set(r, vals)
