"""Line-table debug info (``!dbg`` DILocations) so PTX carries ``.loc`` and SASS line comments.

The compile unit uses ``emissionKind: DebugDirectivesOnly``: LLVM's NVPTX printer then emits
``.file``/``.loc`` directives but no DWARF sections and no ``, debug`` flag on ``.target``
(with ``LineTablesOnly`` ptxas would assemble in debug mode, unoptimised). ``ptxas -lineinfo``
and ``nvdisasm -g`` carry the lines on to SASS.
"""
from __future__ import annotations

import os

from llvmlite import ir


class DebugInfo:
    """Builds DIFile / DISubprogram / DILocation metadata for one kernel in ``module``.

    ``func_loc``: the Location of the ``tt.func`` (file and first line).
    """

    def __init__(self, module: ir.Module, function: ir.Function, name: str, func_loc):
        self.module = module
        self.files: dict = {}
        self.locs: dict = {}
        file = self.file(func_loc.file if func_loc is not None else "unknown")
        self.cu = module.add_debug_info("DICompileUnit", {
            "language": ir.DIToken("DW_LANG_C"), "file": file, "producer": "tile-workbench",
            "isOptimized": True, "runtimeVersion": 0,
            "emissionKind": ir.DIToken("DebugDirectivesOnly")}, is_distinct=True)
        line = func_loc.line if func_loc is not None else 0
        self.sp = module.add_debug_info("DISubprogram", {
            "name": name, "linkageName": name, "scope": file, "file": file, "line": line,
            "type": module.add_debug_info("DISubroutineType", {"types": module.add_metadata([])}),
            "scopeLine": line, "unit": self.cu,
            "spFlags": ir.DIToken("DISPFlagDefinition | DISPFlagOptimized")}, is_distinct=True)
        function.set_metadata("dbg", self.sp)
        module.add_named_metadata("llvm.dbg.cu", self.cu)
        module.add_named_metadata("llvm.module.flags", module.add_metadata(
            [ir.IntType(32)(2), "Debug Info Version", ir.IntType(32)(3)]))
        module.add_named_metadata("llvm.module.flags", module.add_metadata(
            [ir.IntType(32)(2), "Dwarf Version", ir.IntType(32)(4)]))

    def file(self, path: str):
        """The DIFile of ``path`` (one per path)."""
        if path not in self.files:
            self.files[path] = self.module.add_debug_info("DIFile", {
                "filename": os.path.basename(path) if path != "unknown" else path,
                "directory": os.path.dirname(path) or "."})
        return self.files[path]

    def location(self, loc):
        """DILocation of an IR Location (the outermost call site for inlined helper code, so
        every line maps to a line of the kernel's own source); None for unknown locations."""
        if loc is None or getattr(loc, "file", "unknown") == "unknown" or loc.line <= 0:
            return None
        loc = loc.root()
        key = (loc.file, loc.line, loc.col)
        if key not in self.locs:
            self.locs[key] = self.module.add_debug_info("DILocation", {
                "line": loc.line, "column": max(loc.col, 0), "scope": self.sp})
        return self.locs[key]
