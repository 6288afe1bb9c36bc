"""Keep LLVM 22's straight-line strength reduction (SLSR) from going quadratic on large tiles.

NVPTX code generation runs SLSR (``StraightLineStrengthReduce.cpp``) before instruction
selection. In LLVM 22 a candidate ``getelementptr T, ptr B, iN S`` with a variable index looks
for a *basis* among every dominating candidate with the same index ``S`` (a "base delta") or
the same base ``B`` (a "stride delta"), and it keeps looking until it finds one whose
difference is a constant; for each one it builds the SCEV difference and, where an instruction
already computes it, asks ``ScalarEvolution::canReuseInstruction`` (a poison analysis that
scans the block). A tile whose elements share one column offset across many rows (the
attention backward kernel's scalar loads: 1024 addresses ``row_ptr[k] + col``) makes
``n * n / 2`` such queries: 96% of the NVPTX code generation time of that kernel, 10 s on a
2-core VM, where LLVM 20's SLSR (which only looks for a basis with the same base and the same
index value) takes 0.03 s.

This module rewrites the single-index GEPs of such groups (more than ``index_limit`` GEPs
with the same element type and the same index operand, or more than ``base_limit`` with the
same element type and base operand, in one function) into the equivalent one-lane vector
form, which SLSR skips (it does not handle vector GEPs)::

    %p = getelementptr half, ptr addrspace(1) %row, i64 %col
 -> %slsr.sv.p = insertelement <1 x i64> poison, i64 %col, i64 0
    %slsr.sg.p = getelementptr half, ptr addrspace(1) %row, <1 x i64> %slsr.sv.p
    %p = extractelement <1 x ptr addrspace(1)> %slsr.sg.p, i64 0

Instruction selection scalarises the one-lane vector back into the same address arithmetic, so
the only change in the PTX is that SLSR does not rewrite those addresses in terms of each
other. Shared-memory GEPs (address space 3) are left to SLSR: their swizzled offsets are where
its rewrites pay off. The limits (100 GEPs sharing an index, 64 sharing a base) and the
restriction to global and generic pointers are measured, not derived: on tutorial 06's
attention backward kernels ptxas's output has fewer SASS instructions and fewer spill bytes
than with SLSR's rewrites of these groups (its chains of dependent address adds lengthen live
ranges), while also rewriting the shared-memory groups, or index groups of 64-66 GEPs, gives
more instructions and spills than not rewriting at all (ptxas's register allocation of these
255-register kernels moves by a few percent with any change of its input); figures in
``benchmarks/RESULTS.md`` (``python benchmarks/gep_groups_quality.py`` compares).

Works on the text of an optimised module (after ``-O3``), one ``define`` at a time; GEPs with
quoted names, aggregate element types, several indices or a constant index are left as they
are.
"""
from __future__ import annotations

import re
from collections import Counter

#: GEPs sharing an index / a base, in groups larger than these, are rewritten (SLSR's cost
#: grows with the square of a group's size); read at each call
INDEX_LIMIT = 100
BASE_LIMIT = 64

_NAME = r"[%@][-\w.$]+"
_FLAGS = r"(?:(?:inbounds|nuw|nusw) )*"
_GEP = re.compile(
    rf"^(?P<ind>\s*)(?P<name>%[-\w.$]+) = getelementptr (?P<flags>{_FLAGS})"
    rf"(?P<ty>\w+), (?P<pty>ptr(?: addrspace\((?!3\))\d+\))?) (?P<base>{_NAME}), "
    rf"(?P<ity>i64|i32) (?P<idx>%[-\w.$]+)(?P<rest>(?:, !.*)?)$")


def _rewrite_function(lines: list[str], index_limit: int, base_limit: int) -> int:
    """Rewrite, in place, the GEPs of one function's lines whose index group exceeds
    ``index_limit`` or whose base group exceeds ``base_limit``; returns how many."""
    matches = [_GEP.match(line) for line in lines]
    by_index: Counter = Counter()
    by_base: Counter = Counter()
    for m in matches:
        if m:
            by_index[m["ty"], m["idx"]] += 1
            by_base[m["ty"], m["base"]] += 1
    if not by_index or (max(by_index.values()) <= index_limit
                        and max(by_base.values()) <= base_limit):
        return 0
    count = 0
    for i, m in enumerate(matches):
        if not m or (by_index[m["ty"], m["idx"]] <= index_limit
                     and by_base[m["ty"], m["base"]] <= base_limit):
            continue
        ind, name, ity, pty = m["ind"], m["name"], m["ity"], m["pty"]
        # new names are named values (``%203.sv`` would not parse; numbered ones keep their
        # numbers since ``%203`` itself stays defined in place)
        vec, vgep = f"%slsr.sv.{name[1:]}", f"%slsr.sg.{name[1:]}"
        lines[i] = (
            f"{ind}{vec} = insertelement <1 x {ity}> poison, {ity} {m['idx']}, i64 0\n"
            f"{ind}{vgep} = getelementptr {m['flags']}{m['ty']}, {pty} {m['base']}, "
            f"<1 x {ity}> {vec}\n"
            f"{ind}{name} = extractelement <1 x {pty}> {vgep}, i64 0{m['rest']}")
        count += 1
    return count


def hide_large_gep_groups(llir_text: str, index_limit: int | None = None,
                          base_limit: int | None = None) -> tuple[str, int]:
    """``(text, n)``: the module text with the GEPs of every group larger than its limit
    (same element type and index: ``index_limit``, default :data:`INDEX_LIMIT`; same element
    type and base: ``base_limit``, default :data:`BASE_LIMIT`; within one function) in
    one-lane vector form, and ``n`` the number rewritten (0: the text is returned as is).

    The limits must be >= 1; raises ValueError otherwise."""
    index_limit = INDEX_LIMIT if index_limit is None else index_limit
    base_limit = BASE_LIMIT if base_limit is None else base_limit
    if index_limit < 1 or base_limit < 1:
        raise ValueError(f"limits must be >= 1, got {index_limit}, {base_limit}")
    lines = llir_text.split("\n")
    total = 0
    start = None
    for i, line in enumerate(lines):
        if line.startswith("define "):
            start = i
        elif line == "}" and start is not None:
            part = lines[start:i]
            n = _rewrite_function(part, index_limit, base_limit)
            if n:
                lines[start:i] = part
                total += n
            start = None
    return ("\n".join(lines), total) if total else (llir_text, 0)


__all__ = ["BASE_LIMIT", "INDEX_LIMIT", "hide_large_gep_groups"]
