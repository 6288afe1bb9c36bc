"""Dead-instruction removal on the llvmlite IR of a lowered kernel, before it is printed.

The lowering emits each op's registers for every element a thread owns, and then uses only
some of them: a 16-byte ``cp.async`` takes the pointer of the first element of each group of
8 and its mask, so the other 7 elements' address arithmetic (``getelementptr``, ``sext``) and
mask compares are never read; coordinates and swizzle terms are computed for registers a
conversion does not move; the results of a wgmma are extracted for every register. In the
tutorial matmul (128x256x64, 8 warps) 40% of the ~6000 instructions of the unoptimised IR are
such dead values. LLVM's ``-O3`` deletes them in its first passes, so the optimised IR and
the PTX are the same with or without this step; removing them first saves printing them
(llvmlite's text printer is pure Python), parsing them again in LLVM and the first passes'
work on them.

An instruction is removed when nothing reads its value and it has no other effect: integer
and float arithmetic, compares, ``select``, casts, ``getelementptr``, aggregate and vector
element moves and ``phi`` (the opcodes in :data:`PURE`). Calls (inline asm, intrinsics),
loads, stores and terminators are always kept. Removing a value can make its operands dead
in turn; the pass follows them (a worklist), so a whole unused address chain goes at once.
"""
from __future__ import annotations

from llvmlite import ir

#: opcodes (llvmlite ``Instruction.opname``) without side effects: removable when unused.
#: Integer division and remainder are included: an unused one is dead in LLVM's sense too
#: (a division by zero is undefined behaviour, never a trap the program may rely on).
PURE = frozenset({
    "add", "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor",
    "udiv", "sdiv", "urem", "srem",
    "fadd", "fsub", "fmul", "fdiv", "frem", "fneg",
    "icmp", "fcmp", "select",
    "trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp",
    "ptrtoint", "inttoptr", "bitcast", "addrspacecast",
    "getelementptr", "extractvalue", "insertvalue", "extractelement", "insertelement",
    "shufflevector", "phi", "freeze",
})


def _reads(inst) -> list:
    """The instructions whose values ``inst`` reads."""
    if isinstance(inst, ir.PhiInstr):
        vals = [v for v, _ in inst.incomings]
    else:
        vals = list(inst.operands)
    return [v for v in vals if isinstance(v, ir.Instruction)]


def remove_dead_instructions(module: ir.Module) -> int:
    """Remove, in place, every instruction of ``module``'s defined functions whose opcode is
    in :data:`PURE` and whose value nothing reads (transitively). Returns how many went."""
    removed = 0
    for fn in module.functions:
        if fn.is_declaration:
            continue
        users: dict = {}
        insts = [i for blk in fn.blocks for i in blk.instructions]
        for inst in insts:
            for v in _reads(inst):
                users[id(v)] = users.get(id(v), 0) + 1
        dead: set = set()
        work = [i for i in insts if i.opname in PURE and not users.get(id(i))]
        while work:
            inst = work.pop()
            if id(inst) in dead:
                continue
            dead.add(id(inst))
            for v in _reads(inst):
                n = users[id(v)] - 1
                users[id(v)] = n
                if n == 0 and v.opname in PURE:
                    work.append(v)
        if dead:
            for blk in fn.blocks:
                blk.instructions = [i for i in blk.instructions if id(i) not in dead]
            removed += len(dead)
    return removed


__all__ = ["PURE", "remove_dead_instructions"]
