"""DWARF debug info for generated LLVM IR: one DILocation per source Location.

Builds a DICompileUnit (line tables only), one DIFile per source file, a DISubprogram for the
kernel and one per (file, name) of inlined ``@jit`` helpers, and DILocations with ``inlinedAt``
chains for ops whose Location has a ``caller``. The ``"Debug Info Version"`` (3) and
``"Dwarf Version"`` (4) module flags make LLVM keep the info through optimisation and emit
``.loc`` directives in assembly (LLVM Language Reference, "Source Level Debugging").
"""
from __future__ import annotations

import os

from llvmlite import ir

from ...ir.core import Location

_I32 = ir.IntType(32)


class DebugInfo:
    """Debug metadata of one llvmlite module. ``loc(location)`` -> DILocation (cached) or None
    for unknown locations."""

    def __init__(self, module: ir.Module, main_file: str):
        self.m = module
        self.files: dict = {}
        self.subprograms: dict = {}
        self.locs: dict = {}
        self.cu = module.add_debug_info("DICompileUnit", {
            "language": ir.DIToken("DW_LANG_Python"), "file": self.file(main_file),
            "producer": "tile-workbench", "runtimeVersion": 0, "isOptimized": True,
            "emissionKind": ir.DIToken("LineTablesOnly")}, is_distinct=True)
        module.add_named_metadata("llvm.dbg.cu", self.cu)
        for key, val in (("Debug Info Version", 3), ("Dwarf Version", 4)):
            module.add_named_metadata("llvm.module.flags",
                                      [ir.Constant(_I32, 2), key, ir.Constant(_I32, val)])
        self.subroutine_type = module.add_debug_info(
            "DISubroutineType", {"types": module.add_metadata([])})
        self.kernel_sp = None

    def file(self, path: str):
        f = self.files.get(path)
        if f is None:
            d, n = os.path.split(path)
            f = self.m.add_debug_info("DIFile", {"filename": n or path, "directory": d})
            self.files[path] = f
        return f

    def subprogram(self, name: str, path: str, line: int, fn: ir.Function | None = None):
        """A DISubprogram for ``name`` in ``path``; attached to ``fn`` when given."""
        key = (name, path)
        sp = self.subprograms.get(key)
        if sp is None:
            sp = self.m.add_debug_info("DISubprogram", {
                "name": name, "file": self.file(path), "line": max(line, 0),
                "type": self.subroutine_type, "scopeLine": max(line, 0), "unit": self.cu,
                "spFlags": ir.DIToken("DISPFlagDefinition | DISPFlagOptimized")},
                is_distinct=True)
            self.subprograms[key] = sp
        if fn is not None:
            fn.set_metadata("dbg", sp)
        return sp

    def loc(self, loc: Location | None, scope):
        """The DILocation of ``loc`` in the function whose subprogram is ``scope``; inlined
        helper ops get a helper subprogram and an ``inlinedAt`` chain. None if unknown."""
        if loc is None or loc.file == "unknown" or loc.line <= 0:
            return None
        key = (loc.file, loc.line, loc.col, loc.caller, id(scope))
        hit = self.locs.get(key)
        if hit is not None:
            return hit
        ops = {"line": loc.line, "column": max(loc.col, 0)}
        if loc.caller is not None and loc.caller.line > 0:
            ops["scope"] = self.subprogram("inlined@" + os.path.basename(loc.file), loc.file,
                                           loc.line)
            ops["inlinedAt"] = self.loc(Location(loc.caller.file, loc.caller.line,
                                                 loc.caller.col, None, loc.caller.caller), scope)
        else:
            ops["scope"] = scope
        d = self.m.add_debug_info("DILocation", ops)
        self.locs[key] = d
        return d
