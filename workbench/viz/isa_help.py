"""Instruction help for the PTX and SASS panes: what an instruction does, its operands and the
meaning of its modifiers (state space, type, rounding, ...), shown when the mouse rests on a line.

Written for this project from NVIDIA's *PTX ISA* (Parallel Thread Execution ISA, version 8.x:
the chapter "Instruction Set", whose sections are named in each entry's ``ref``) and the *CUDA
Binary Utilities* documentation (its "Instruction Set Reference" tables for sm_80/sm_90, for
SASS). The PTX table covers every opcode the CUDA backend emits, through LLVM's NVPTX
instruction selection and through the inline assembly in ``workbench/codegen/nvptx``
(``tests/viz/test_isa_help.py`` checks it against the PTX of the example kernels).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from .isa_tables import MODIFIERS, PTX, SASS, SASS_MODIFIERS, UNIFORM_NOTE

__all__ = ["Help", "ptx_opcode", "sass_opcode", "describe", "help_table"]


@dataclass(frozen=True)
class Help:
    """Help for one instruction as written (``op``: ``ld.global.v4.b32``): its ``base``
    opcode, a ``syntax`` line, a ``summary`` sentence, its ``modifiers`` (each ``(".global",
    "meaning")``) and ``ref``, the manual section it was written from."""

    op: str
    base: str
    syntax: str
    summary: str
    modifiers: tuple
    ref: str

    def as_dict(self) -> dict:
        """A JSON-able dict (modifiers as lists)."""
        d = asdict(self)
        d["modifiers"] = [list(m) for m in self.modifiers]
        return d


_PTX_SKIP = re.compile(r"^\s*($|//|\.|\{|\}|\)|\(|[\w$]+:)")
_PTX_PRED = re.compile(r"^\s*@!?%\w+\s+")
_SASS_LINE = re.compile(r"^\s*(?:/\*[0-9a-fA-F]+\*/)?\s*(?:@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_.]*)\b")


def ptx_opcode(line: str) -> str | None:
    """The opcode of one PTX line as written (``ld.global.v4.b32``, ``@%p1 bra`` -> ``bra``),
    or None for directives, labels, braces, comments and blank lines."""
    if _PTX_SKIP.match(line):
        return None
    body = _PTX_PRED.sub("", line).strip()
    m = re.match(r"([a-z][a-z0-9_]*(?:\.[a-z0-9_:]+)*)", body)
    if not m:
        return None
    return m.group(1)


def sass_opcode(line: str) -> str | None:
    """The opcode of one SASS line as nvdisasm prints it (``/*0040*/ @P0 LDG.E.128 R4, ...``
    -> ``LDG.E.128``), or None for labels, headers and comments."""
    if line.lstrip().startswith(("//", ".", "{", "}")):
        return None
    m = _SASS_LINE.match(line)
    return m.group(1) if m else None


def _ptx_base(op: str) -> str:
    parts = op.split(".")
    two = ".".join(parts[:2])
    return two if two in PTX else parts[0]


def _uniform(base: str) -> tuple | None:
    """The entry of a uniform-datapath opcode (``UIADD3``: ``IADD3`` on uniform registers)."""
    plain = SASS.get(base[1:]) if base.startswith("U") else None
    if plain is None:
        return None
    syntax, summary, ref = plain
    return ("U" + syntax.replace(" R", " UR").replace("[R", "[UR").replace(", R", ", UR"),
            f"{summary} {UNIFORM_NOTE}", ref)


def describe(stage: str, op: str) -> Help | None:
    """Help for opcode ``op`` of ``stage`` (``"ptx"`` or ``"sass"``), or None when the table has
    no entry for its base opcode. Modifiers the table knows are explained; others are listed
    as they are."""
    if stage == "ptx":
        base = _ptx_base(op)
        entry = PTX.get(base)
        mods_table = MODIFIERS
        rest = op[len(base):].split(".")[1:] if op.startswith(base) else []
        keys = ["." + r for r in rest]
    elif stage == "sass":
        parts = op.split(".")
        base = parts[0]
        entry = SASS.get(base) or _uniform(base)
        mods_table = SASS_MODIFIERS
        keys = parts[1:]
    else:
        return None
    if entry is None:
        return None
    syntax, summary, ref = entry
    mods = tuple((k, mods_table.get(k, mods_table.get(k.split("::")[0], ""))) for k in keys)
    return Help(op, base, syntax, summary, mods, ref)


def help_table(stage: str, lines) -> tuple[list, dict]:
    """For the lines of one ``stage`` pane: each line's opcode key (None where there is no
    instruction or no help) and the help of every distinct opcode, as JSON-able dicts."""
    find = ptx_opcode if stage == "ptx" else sass_opcode if stage == "sass" else None
    keys: list = []
    table: dict = {}
    for line in lines:
        op = find(line) if find else None
        if op is not None and op not in table:
            h = describe(stage, op)
            table[op] = h.as_dict() if h else None
        keys.append(op if op is not None and table.get(op) else None)
    return keys, {k: v for k, v in table.items() if v}
