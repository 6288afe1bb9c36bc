"""PTX peephole: a widened, scaled offset computed in one basic block and read only in others
(a loop-invariant element offset hoisted out of the K loop) is written as Triton's LLVM
writes it, ``cvt.s64.s32`` then ``shl.b64``, instead of one ``mul.wide.s32`` by a power of
two (likewise ``.u32`` with ``cvt.u64.u32``). PTX ISA 9.7.1.6 (mul ``.wide``), 9.7.9.21
(cvt), 9.7.8.8 (shl): the two forms compute the same 64-bit value.

The distinction matters to ptxas, not to the arithmetic. Given ``mul.wide`` in the loop's
preheader and ``add.s64 %p, %base, %off`` in the body, ptxas keeps only the 32-bit factor
live and rematerialises every address in the body as ``IMAD.WIDE`` (the multiply-add pipe);
given the cvt/shl pair it keeps the 64-bit offset and adds it with ``IADD3`` / ``IMAD.X``,
which is what Triton 3.6's kernels run. On the H200 the tutorial-form fp16 matmul (strides as
run-time arguments, 128x256x64, 8 warps, 3 stages) had 8 such ``IMAD.WIDE`` in its K loop
where Triton's had none.

Only products whose every reader lies outside the defining block are rewritten; a product
read in its own block is left to ``mad_wide.fuse_mad_wide`` or as LLVM wrote it."""
from __future__ import annotations

import re

_MUL = re.compile(r"^(\s*)mul\.wide\.([su])32\s+(%rd\d+),\s*(%r\d+),\s*(\d+);\s*$")
_REG = re.compile(r"%\w+")
_LABEL = re.compile(r"^\s*\$?[\w.$]+:")
_BRANCH = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?:bra|ret)\b")


def split_hoisted_mul_wide(ptx: str) -> str:
    """``ptx`` with each ``mul.wide.{s,u}32 %rd, %r, 2**k`` (k >= 1) whose product is read
    only outside its own basic block replaced by ``cvt.{s,u}64.{s,u}32`` + ``shl.b64`` into
    the same register (see the module docstring); the text is otherwise unchanged."""
    if "mul.wide." not in ptx:
        return ptx
    lines = ptx.split("\n")
    block = _block_numbers(lines)
    readers: dict = {}
    for i, line in enumerate(lines):
        regs = _REG.findall(line.split("//", 1)[0])
        for r in regs[1:] if _MUL.match(line) else regs:
            readers.setdefault(r, []).append(i)
    out = []
    for i, line in enumerate(lines):
        m = _MUL.match(line)
        if m is not None:
            ind, sign, prod, x, c = m.groups()
            k = int(c).bit_length() - 1
            reads = [j for j in readers.get(prod, []) if j != i]
            if (int(c) == 1 << k and k >= 1 and reads
                    and all(block[j] != block[i] for j in reads)):
                out.append(f"{ind}cvt.{sign}64.{sign}32 \t{prod}, {x};")
                out.append(f"{ind}shl.b64 \t{prod}, {prod}, {k};")
                continue
        out.append(line)
    return "\n".join(out)


def _block_numbers(lines) -> list:
    """The basic-block number of each line: a label starts a block, a branch ends one."""
    numbers, n = [], 0
    for line in lines:
        code = line.split("//", 1)[0]
        if _LABEL.match(code):
            n += 1
        numbers.append(n)
        if _BRANCH.match(code):
            n += 1
    return numbers


__all__ = ["split_hoisted_mul_wide"]
