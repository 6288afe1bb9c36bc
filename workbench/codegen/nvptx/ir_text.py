"""The text of an llvmlite IR module, exactly as ``str(module)`` prints it, made faster.

llvmlite's printer is pure Python: each instruction's text goes through several small
methods and ``str.format`` calls (about 12 us each), which on tutorial 06's attention
backward kernels (14,000-25,000 instructions after dead-instruction removal) was 0.15-0.25 s
of a compile, more than LLVM's parsing of the same text. :func:`module_text` prints the
instruction kinds the CUDA lowering emits most (arithmetic, casts, ``getelementptr``,
``extractvalue``, ``insertelement`` / ``extractelement``, ``phi``, ``load``, ``store``) with
one f-string each, following llvmlite 0.50's own formats (``llvmlite/ir/instructions.py``:
``descr`` of each class, including its spacing, e.g. ``sext i32 %a to i64 , !dbg !7``), and
leaves every other instruction (calls, inline asm, terminators, compares, selects...) and
everything outside function bodies (globals, declarations, metadata) to llvmlite. A test
compares the result with ``str(module)`` on every kernel of the fidelity suite.
"""
from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as _ins


def _md(inst) -> str:
    """``inst._stringify_metadata(leading_comma=True)``: ``", !dbg !12"`` or ``""``."""
    md = inst.metadata
    if not md:
        return ""
    return "".join([f", !{k} {v.get_reference()}" for k, v in md.items()])


def _generic(inst) -> str:
    op = inst.opname
    if inst.flags:
        op = " ".join([op] + inst.flags)
    ops = ", ".join([v.get_reference() for v in inst.operands])
    return f"{op} {inst.type} {ops}{_md(inst)}"


def _cast(inst) -> str:
    src = inst.operands[0]
    return f"{inst.opname} {src.type} {src.get_reference()} to {inst.type} {_md(inst)}"


def _gep(inst) -> str:
    ptr = inst.pointer
    idx = ", ".join([f"{i.type} {i.get_reference()}" for i in inst.indices])
    op = "getelementptr inbounds" if inst.inbounds else "getelementptr"
    return f"{op} {inst.source_etype}, {ptr.type} {ptr.get_reference()}, {idx} {_md(inst)}"


def _extract_value(inst) -> str:
    agg = inst.aggregate
    idx = ", ".join([str(i) for i in inst.indices])
    return f"extractvalue {agg.type} {agg.get_reference()}, {idx} {_md(inst)}"


def _vector_element(inst) -> str:
    ops = ", ".join([f"{v.type} {v.get_reference()}" for v in inst.operands])
    return f"{inst.opname} {ops}"


def _phi(inst) -> str:
    incs = ", ".join([f"[{v.get_reference()}, {b.get_reference()}]"
                      for v, b in inst.incomings])
    return f"phi {' '.join(inst.flags)} {inst.type} {incs} {_md(inst)}"


def _load(inst) -> str:
    ptr = inst.operands[0]
    align = "" if inst.align is None else f", align {inst.align:d}"
    return f"load {inst.type}, {ptr.type} {ptr.get_reference()}{align}{_md(inst)}"


def _store(inst) -> str:
    val, ptr = inst.operands
    align = "" if inst.align is None else f", align {inst.align:d}"
    return (f"store {val.type} {val.get_reference()}, {ptr.type} {ptr.get_reference()}"
            f"{align}{_md(inst)}")


#: exact instruction class -> its text without the ``%name = `` part (subclasses, which may
#: print differently, go to llvmlite)
_FORMATS = {
    _ins.Instruction: _generic,
    _ins.CastInstr: _cast,
    _ins.GEPInstr: _gep,
    _ins.ExtractValue: _extract_value,
    _ins.ExtractElement: _vector_element,
    _ins.InsertElement: _vector_element,
    _ins.PhiInstr: _phi,
    _ins.LoadInstr: _load,
    _ins.StoreInstr: _store,
}


def instruction_text(inst) -> str:
    """``str(inst)`` of an llvmlite instruction (``%"x" = add i32 %"a", %"b", !dbg !3``)."""
    fmt = _FORMATS.get(type(inst))
    if fmt is None:
        return str(inst)
    body = fmt(inst)
    if isinstance(inst.type, ir.VoidType):
        return body.rstrip()
    return f"{inst.get_reference()} = {body}".rstrip()


def function_text(fn: ir.Function) -> str:
    """``str(fn)`` of an llvmlite function (its prototype, and its blocks if defined)."""
    buf: list = []
    fn.descr_prototype(buf)
    if fn.blocks:
        buf.append("{\n")
        for blk in fn.blocks:
            buf.append(f"{blk._format_name()}:\n")
            buf += [f"  {instruction_text(i)}\n" for i in blk.instructions]
        buf.append("}\n")
    return "".join(buf)


def module_text(module: ir.Module) -> str:
    """``str(module)`` of an llvmlite module, byte for byte (llvmlite 0.50's layout: header,
    identified types, global values and functions, metadata)."""
    lines = [f'; ModuleID = "{module.name}"', f'target triple = "{module.triple}"',
             f'target datalayout = "{module.data_layout}"', ""]
    lines += [it.get_declaration() for it in module.get_identified_types().values()]
    lines += [function_text(v) if isinstance(v, ir.Function) else str(v)
              for v in module.globals.values()]
    lines += module._get_metadata_lines()
    return "\n".join(lines)


__all__ = ["function_text", "instruction_text", "module_text"]
