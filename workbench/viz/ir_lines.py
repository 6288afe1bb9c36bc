"""Per-line facts the IR views need: which part of a line is debug noise (``loc(...)``,
``!dbg !N``, ``.loc`` directives, location tables), which kernel source line a line came from,
and one colour per source line.

Pure functions over strings and :class:`workbench.ir.core.Location`-like objects (anything with
``.file``, ``.line``, ``.col`` and optionally ``.caller``/``.root()``); no HTML here.
"""
from __future__ import annotations

import colorsys
import os
import re
from dataclasses import dataclass

from ..errors import place

# A trailing MLIR location: ` loc(#loc3)`, ` loc("f.py":3:7)`, ` loc("x"("f.py":3:7))`,
# ` loc(callsite(#loc1 at #loc2))`; parentheses nest at most three deep in what Triton prints.
_P0 = r'(?:[^()"]|"[^"]*")*'
_P1 = rf"(?:{_P0}(?:\({_P0}\))?)*"
_P2 = rf"(?:{_P1}(?:\({_P1}\))?)*"
_MLIR_SUFFIX = re.compile(rf"\s+loc\({_P2}\)\s*$")
_MLIR_TABLE = re.compile(r"^\s*#loc\d*\s*=")
_LLVM_SUFFIX = re.compile(r",\s*!dbg\s+!\d+\s*$")
_LLVM_TABLE = re.compile(r"^\s*!(\d+|llvm\.dbg\.cu|llvm\.module\.flags|llvm\.ident)\s*=")
_DIRECTIVE = re.compile(r"^\s*\.(loc|file|cfi_[a-z_]+)\b")
_SECTION = re.compile(r"^\s*\.section\s+\.?(\S+)")
_SASS_DEBUG = re.compile(r"^\s*//##\s")

MLIR_STAGES = ("ttir", "ttgir", "mlir")


@dataclass(frozen=True)
class SplitLine:
    """One line of a stage: ``code`` (what is shown by default), ``suffix`` (a trailing debug
    reference such as `` loc(#loc3)`` or ``, !dbg !12``; ``""`` when none) and ``debug`` (the
    whole line is debug information: a location table entry, a ``.loc``/``.file`` directive,
    a DWARF section)."""

    code: str
    suffix: str = ""
    debug: bool = False


def mlir_suffix_start(line: str) -> int | None:
    """Where a trailing MLIR location (white space, then ``loc(...)`` with its parentheses
    balanced, outside quotes, then white space to the end) starts in ``line``, or None.
    One backward scan: linear in the line's length (a regular expression for nested
    parentheses backtracks exponentially on Triton's signature lines, which carry one
    ``loc("name"(#loc))`` per argument)."""
    s = line.rstrip()
    if not s.endswith(")"):
        return None
    depth, quoted, i = 0, False, len(s) - 1
    while i >= 0:
        ch = s[i]
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == ")":
            depth += 1
        elif not quoted and ch == "(":
            depth -= 1
            if depth == 0:
                break
        i -= 1
    if i < 3 or s[i - 3:i] != "loc":
        return None
    k = i - 3
    while k > 0 and s[k - 1] in " \t":
        k -= 1
    return k if k < i - 3 else None


def split_debug(stage: str, lines: list[str]) -> list[SplitLine]:
    """Split every line of a stage's text into code and debug parts (see :class:`SplitLine`).

    Rules per stage: ``ttir``/``ttgir``: trailing ``loc(...)``, ``#locN = ...`` lines;
    ``llir``: trailing ``, !dbg !N``, metadata lines ``!N = ...``; ``ptx``/``asm``: ``.loc``,
    ``.file``, ``.cfi_*`` directives and the bodies of ``.section .debug_*`` sections;
    ``sass``: ``//## File ...`` line-info comments. Other stages: no debug parts."""
    out: list[SplitLine] = []
    in_debug_section = False
    depth = 0
    for line in lines:
        if stage in MLIR_STAGES:
            if _MLIR_TABLE.match(line):
                out.append(SplitLine(line, "", True))
                continue
            at = mlir_suffix_start(line)
            out.append(SplitLine(line[:at], line[at:]) if at is not None else SplitLine(line))
        elif stage == "llir":
            if _LLVM_TABLE.match(line):
                out.append(SplitLine(line, "", True))
                continue
            m = _LLVM_SUFFIX.search(line)
            out.append(SplitLine(line[:m.start()], line[m.start():]) if m else SplitLine(line))
        elif stage in ("ptx", "asm"):
            sec = _SECTION.match(line)
            if sec:
                in_debug_section = sec.group(1).startswith("debug")
                depth = 0
            if in_debug_section:
                depth += line.count("{") - line.count("}")
                out.append(SplitLine(line, "", True))
                if stage == "ptx" and depth <= 0 and "}" in line:
                    in_debug_section = False
                continue
            out.append(SplitLine(line, "", bool(_DIRECTIVE.match(line))))
        elif stage == "sass":
            out.append(SplitLine(line, "", bool(_SASS_DEBUG.match(line))))
        else:
            out.append(SplitLine(line))
    return out


def _root(loc):
    return loc.root() if hasattr(loc, "root") else loc


def same_file(a: str | None, b: str | None) -> bool:
    """Whether two file names from Locations name the same file (exact, or same real path)."""
    if not a or not b:
        return False
    if a == b:
        return True
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def source_line_of(loc, source_file: str | None, first: int, last: int) -> int | None:
    """The kernel source line (absolute line number in ``source_file``) an IR line belongs to,
    or None. Code inlined from ``@jit`` helpers belongs to its outermost call site
    (``loc.root()``). A location in another file, or outside ``[first, last]``, gives None."""
    if loc is None:
        return None
    root = _root(loc)
    line = getattr(root, "line", None)
    if not isinstance(line, int) or not first <= line <= last:
        return None
    if source_file is not None and not same_file(getattr(root, "file", None), source_file):
        return None
    return line


def short_place(file, line: int, col: int | None = None) -> str:
    """``In [12], line 5`` for a notebook cell (:func:`workbench.errors.place`), else the
    file's base name with ``:line`` (and ``:col``)."""
    where = place(file, line, col)
    if where.startswith(str(file)):
        return f"{os.path.basename(str(file))}{where[len(str(file)):]}"
    return where


def describe_loc(loc) -> str:
    """``file:line:col``, then `` inlined at file:line:col`` for each call site."""
    if loc is None:
        return ""
    parts = [short_place(loc.file, loc.line, loc.col)]
    caller = getattr(loc, "caller", None)
    while caller is not None:
        parts.append(f"inlined at {short_place(caller.file, caller.line, caller.col)}")
        caller = getattr(caller, "caller", None)
    return " ".join(parts)


def palette(n: int) -> list[str]:
    """``n`` light background colours (``#rrggbb``), hues spaced by the golden angle so
    neighbouring source lines get clearly different colours; readable under dark text."""
    out = []
    for i in range(n):
        h = (i * 0.381966) % 1.0
        r, g, b = colorsys.hls_to_rgb(h, 0.87, 0.75)
        out.append(f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}")
    return out


def colour_map(source_lines) -> dict[int, str]:
    """One colour per distinct source line number, in ascending line order."""
    lines = sorted(set(source_lines))
    return dict(zip(lines, palette(len(lines)), strict=False))
