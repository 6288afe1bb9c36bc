"""PTX peephole: ``mul.wide.s32 %rd1, %r2, C; ... add.s64 %rd3, %rd4, %rd1;`` becomes
``mad.wide.s32 %rd3, %r2, C, %rd4;`` (likewise ``.u32``), the form Triton's LLVM emits for an
address ``base + sext(offset) * size`` (PTX ISA 9.7.1.4 mad: ``.wide`` multiplies two 32-bit
values into 64 bits and adds a 64-bit one).

LLVM 22's NVPTX instruction selection (llvmlite 0.50) emits the multiply and the add apart,
and ptxas then assembles each such address into ``IMAD.WIDE`` on the multiply-add pipe
instead of the ``LEA`` / ``LEA.HI.X.SX32`` pair it makes of ``mad.wide`` (the ALU pipe). On
the H200, with the dot's address arithmetic on that pipe, an fp16 matmul at 128x256x64 and 8
warps stalled on the math pipe and on fixed-latency waits (Nsight Compute's
``math_pipe_throttle``, ``wait``) where Triton's did not.

The rewrite is local and conservative: the product register must be defined once and read
once (by the add), both in one basic block (no label or branch between), with the 32-bit
factor not written in between; the fused instruction takes the add's place (so the addend is
read where the add read it). Anything else is left as LLVM wrote it."""
from __future__ import annotations

import re

_MUL = re.compile(r"^(\s*)mul\.wide\.([su]32)\s+(%rd\d+),\s*(%r\d+),\s*(-?\d+|%r\d+);\s*$")
_ADD = re.compile(r"^(\s*)add\.s64\s+(%rd\d+),\s*(%rd\d+),\s*(%rd\d+);\s*$")
_DEST = re.compile(r"^\s*(?:@!?%p\d+\s+)?[a-z][\w.:]*\s+(%\w+)")
_REG = re.compile(r"%\w+")
_BOUNDARY = re.compile(r"^\s*(\$?[\w.$]+:|bra|ret|@|\{|\})")


def fuse_mad_wide(ptx: str) -> str:
    """``ptx`` with each fusable ``mul.wide`` + ``add.s64`` pair made one ``mad.wide`` (see
    the module docstring); the text is otherwise unchanged."""
    if "mul.wide." not in ptx:
        return ptx
    lines = ptx.split("\n")
    counts: dict = {}
    for line in lines:
        for r in _REG.findall(line.split("//", 1)[0]):
            counts[r] = counts.get(r, 0) + 1
    drop = set()
    for i, line in enumerate(lines):
        m = _MUL.match(line)
        if m is None or counts.get(m.group(3)) != 2:  # the product: defined here, read once
            continue
        fused = _fuse_at_add(lines, i, m.groups()[1:])
        if fused is not None:
            lines[fused[0]] = fused[1]
            drop.add(i)
    if not drop:
        return ptx
    return "\n".join(line for i, line in enumerate(lines) if i not in drop)


def _fuse_at_add(lines, i: int, mul: tuple):
    """(line index, fused text) for the ``mul.wide`` at line ``i`` (its sign, product,
    factor and constant), or None when its one reader is not a fusable ``add.s64``."""
    sign, prod, x, c = mul
    for j in range(i + 1, min(i + 64, len(lines))):
        code = lines[j].split("//", 1)[0]
        if not code.strip():
            continue
        if prod in _REG.findall(code):
            a = _ADD.match(code)
            if a is None:
                return None
            ind, dst, p, q = a.groups()
            if (p == prod) == (q == prod):  # not exactly one operand is the product
                return None
            if _written_between(lines, i + 1, j, (x,)):
                return None
            return j, f"{ind}mad.wide.{sign} \t{dst}, {x}, {c}, {q if p == prod else p};"
        if _BOUNDARY.match(code):
            return None
    return None


def _written_between(lines, lo: int, hi: int, regs) -> bool:
    for k in range(lo, hi):
        d = _DEST.match(lines[k].split("//", 1)[0])
        if d is not None and d.group(1) in regs:
            return True
    return False


__all__ = ["fuse_mad_wide"]
