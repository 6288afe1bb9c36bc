"""Parse the text :func:`workbench.ir.printer.print_module` prints back into IR.

``parse_module(print_module(m))`` rebuilds an equivalent module and
``print_module(parse_module(t)) == t`` for every text our printer produces, with or without
``loc(#locN)`` references and the trailing ``#locN = loc(...)`` table (named locations
``loc("x"(...))`` and call sites ``loc(callsite(#a at #b))`` included). Layout aliases at the
top (``#blocked = #ttg.blocked<{...}>``) and inline layouts are read with
:func:`workbench.layouts.parse`. SSA names become :attr:`Value.name` hints (``%x_1`` -> hint
``x_1``; numeric names like ``%3`` give no hint). A few Triton-only spellings are also
accepted and ignored (argument locations, ``} loc(#loc)`` after the module).

Errors raise :class:`IRParseError` (a ValueError) whose message starts ``line L, column C:``.
"""
from __future__ import annotations

from .core import UNKNOWN, Block, Location, Operation
from .parser_lex import IRParseError, float_from_text
from .parser_ops import OpParser
from .parser_types import TypeParser


class ModuleParser(OpParser):
    """Reads a whole module: alias and location definitions, ``module {...}``."""

    def __init__(self, text: str):
        super().__init__(text)
        self.loc_defs: dict[str, tuple] = {}
        self.resolved: dict[str, Location] = {}

    def top_definitions(self) -> None:
        while self.at("#"):
            pos = self.i
            name, _ = self.sigil_name("#", "a definition")
            self.expect("=", f"after #{name}")
            if self.at("loc("):
                self.loc_defs["#" + name] = (self.loc_expr(), pos)
            elif self.eat("#ttg.shared_memory"):
                continue  # the memory space every !ttg.memdesc names (#smem)
            elif self.at("#ttg.") or self.at("#triton_gpu."):
                self.ws()
                lpos = self.i
                self.aliases["#" + name] = self.layout(self.balanced(), lpos)
            else:
                raise self.error(f"expected a layout or loc(...) after #{name} =, found "
                                 f"{self.found()}")

    def resolve(self, e) -> Location:
        kind = e[0]
        if kind == "unknown":
            return UNKNOWN
        if kind == "file":
            return Location(e[1], e[2], e[3])
        if kind == "named":
            inner = self.resolve(e[2])
            return Location(inner.file, inner.line, inner.col, e[1], inner.caller)
        if kind == "callsite":
            return self.resolve(e[1]).with_caller(self.resolve(e[2]))
        name, pos = e[1], e[2]
        if name in self.resolved:
            return self.resolved[name]
        if name not in self.loc_defs:
            raise self.error(f"undefined location {name}", pos)
        self.resolved[name] = UNKNOWN  # breaks cycles
        loc = self.resolve(self.loc_defs[name][0])
        self.resolved[name] = loc
        return loc

    def parse(self) -> Operation:
        self.top_definitions()
        if not self.eat_word("module"):
            raise self.error(f"expected 'module', found {self.found()}")
        attrs = self.attr_dict() if self.eat_word("attributes") else {}
        module = Operation("builtin.module", [], [], attrs, regions=1)
        block = module.regions[0].add_block()
        self.expect("{", "to open the module body")
        self.block_body(block)
        self.expect("}", "to close the module")
        self.op_loc(module)
        self.top_definitions()
        self.ws()
        if self.i < len(self.s):
            raise self.error(f"unexpected text after the module: {self.found()}")
        for op, e in self.loc_uses:
            op.loc = self.resolve(e)
        return module


def parse_module(text: str) -> Operation:
    """Parse IR text (as :func:`print_module` prints it) into a ``builtin.module`` op.

    Raises IRParseError (a ValueError) with the line and column of the first error: unknown
    syntax, an undefined ``%value``, ``#alias`` or ``#locN``, a malformed layout."""
    if not isinstance(text, str):
        raise TypeError(f"parse_module expects IR text, got {type(text).__name__}")
    return ModuleParser(text).parse()


__all__ = ["parse_module", "IRParseError", "float_from_text", "Block", "TypeParser",
           "ModuleParser"]
