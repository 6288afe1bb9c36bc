"""Per-line source locations of compiled stage texts, read back from their debug info.

- :func:`llir_line_locs`: LLVM IR text. An instruction line ending in ``!dbg !N`` maps through
  ``!N = !DILocation(line: L, column: C, scope: !S, inlinedAt: !M)`` to the file of the scope
  (``DISubprogram``/``DILexicalBlock`` -> ``file: !F`` -> ``!DIFile(filename:, directory:)``);
  ``inlinedAt`` chains become :attr:`Location.caller`. A ``define ... !dbg !S`` line maps to
  the subprogram's line.
- :func:`directive_line_locs`: assembly with DWARF line directives (host asm and PTX):
  ``.file N "dir" "name"`` / ``.file N "path"``, and ``.loc N line col [...]`` which applies to
  the following instruction lines until the next ``.loc``. PTX's ``inlined_at F L C`` suffix
  becomes the caller. Line 0 (compiler-generated code) maps to None.

Both return a list with one entry per line of the text (``text.splitlines()``): a
:class:`workbench.ir.core.Location` or None.
"""
from __future__ import annotations

import os
import re

from ..ir.core import Location

_META_DEF = re.compile(r"^\s*!(\d+)\s*=\s*(?:distinct\s+)?!(\w+)\((.*)\)\s*$")
_FIELD = re.compile(r"(\w+):\s*(\"(?:[^\"\\]|\\.)*\"|![0-9]+|[-\w|]+)")
_DBG_USE = re.compile(r"!dbg\s+!(\d+)")


def _fields(body: str) -> dict:
    out = {}
    for k, v in _FIELD.findall(body):
        out[k] = v[1:-1] if v.startswith('"') else v
    return out


def _ref(v):
    """The metadata id ``v`` names (``"!12"`` -> ``"12"``), or None."""
    return v[1:] if isinstance(v, str) and v.startswith("!") else None


class _DebugMetadata:
    """The ``!N = !DIKind(...)`` nodes of an LLVM IR module, resolved to files and
    Locations (LLVM Language Reference, "Metadata": DIFile, DISubprogram, DILocation)."""

    def __init__(self, lines: list[str]):
        self.meta: dict[str, tuple[str, dict]] = {}
        for ln in lines:
            m = _META_DEF.match(ln)
            if m:
                self.meta[m.group(1)] = (m.group(2), _fields(m.group(3)))
        self.cache: dict = {}

    def file_of(self, node_id, depth=0):
        """The source path of node ``node_id`` (following ``file`` and ``scope``), or None."""
        node = self.meta.get(node_id)
        if node is None or depth > 20:
            return None
        kind, f = node
        if kind == "DIFile":
            name, d = f.get("filename", ""), f.get("directory", "")
            return os.path.join(d, name) if d and not os.path.isabs(name) else name
        if "file" in f:
            return self.file_of(_ref(f["file"]), depth + 1)
        if "scope" in f:
            return self.file_of(_ref(f["scope"]), depth + 1)
        return None

    def loc_of(self, node_id, depth=0):
        """The Location of a DILocation (with its inlining chain) or DISubprogram, or None."""
        if node_id in self.cache:
            return self.cache[node_id]
        node = self.meta.get(node_id)
        result = None
        if node is not None and depth < 50:
            kind, f = node
            if kind == "DILocation":
                result = self._location(f, depth)
            elif kind == "DISubprogram":
                line = int(f.get("line", "0"))
                path = self.file_of(node_id)
                if line > 0 and path:
                    result = Location(path, line, 1)
        self.cache[node_id] = result
        return result

    def _location(self, f: dict, depth: int):
        line = int(f.get("line", "0"))
        col = int(f.get("column", "0"))
        path = self.file_of(_ref(f.get("scope")))
        if line > 0 and path:
            caller = self.loc_of(_ref(f["inlinedAt"]), depth + 1) if "inlinedAt" in f else None
            return Location(path, line, col, None, caller)
        return None


def llir_line_locs(text: str) -> list:
    """One Location (or None) per line of LLVM IR ``text``; see the module docstring."""
    lines = text.splitlines()
    meta = _DebugMetadata(lines)
    out: list[Location | None] = []
    for ln in lines:
        if _META_DEF.match(ln):
            out.append(None)
            continue
        m = _DBG_USE.search(ln)
        out.append(meta.loc_of(m.group(1)) if m else None)
    return out


_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"((?:[^"\\]|\\.)*)")?')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$")
_INLINED = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")


def _is_instruction(line: str) -> bool:
    """Whether an assembly line is an instruction (not blank, a comment, a directive or a
    label). PTX predicated instructions (``@%p1 bra ...``) count as instructions."""
    s = line.strip()
    if not s or s.startswith(("//", "#", ";", ".", "{", "}", "(", ")")):
        return False
    return not s.endswith(":")


def directive_line_locs(text: str) -> list:
    """One Location (or None) per line of assembly ``text`` (x86 host asm or PTX) from its
    ``.file``/``.loc`` directives; see the module docstring."""
    files: dict = {}
    current = None
    out: list[Location | None] = []
    for ln in text.splitlines():
        m = _FILE.match(ln)
        if m:
            a, b2 = m.group(2), m.group(3)
            files[m.group(1)] = os.path.join(a, b2) if b2 and not os.path.isabs(b2) else (b2 or a)
            out.append(None)
            continue
        m = _LOC.match(ln)
        if m:
            fid, line, col = m.group(1), int(m.group(2)), int(m.group(3))
            path = files.get(fid)
            if line <= 0 or path is None:
                current = None
            else:
                caller = None
                mi = _INLINED.search(m.group(4))
                if mi and files.get(mi.group(1)) and int(mi.group(2)) > 0:
                    caller = Location(files[mi.group(1)], int(mi.group(2)), int(mi.group(3)))
                current = Location(path, line, col, None, caller)
            out.append(None)
            continue
        out.append(current if _is_instruction(ln) else None)
    return out
