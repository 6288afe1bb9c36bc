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

import re

from .core import UNKNOWN, Block, Location, Operation, Value
from .parser_lex import Cursor, IRParseError, float_from_text
from .parser_ops import OpParser
from .types import FloatType, IntType, MemDescType, PointerType, TensorType


class TypeParser(Cursor):
    """Types and attributes on top of :class:`Cursor`."""

    def __init__(self, text: str):
        super().__init__(text)
        self.aliases: dict = {}

    def encoding(self):
        self.ws()
        pos = self.i
        if self.eat_word("None"):
            return None
        if self.s.startswith(("#ttg.", "#triton_gpu."), pos):
            text = self.balanced()
            return self.layout(text, pos)
        name, _ = self.sigil_name("#", "a layout")
        if "#" + name not in self.aliases:
            raise self.error(f"unknown layout alias '#{name}' (define it at the top: "
                             f"#{name} = #ttg.blocked<{{...}}>)", pos)
        return self.aliases["#" + name]

    def layout(self, text: str, pos: int):
        from ..layouts import parse as parse_layout
        try:
            return parse_layout(text, aliases=self.aliases)
        except ValueError as e:
            raise self.error(f"bad layout: {e}", pos) from None

    def type(self):
        self.ws()
        pos = self.i
        if self.eat("tensor<"):
            shape = self.dims()
            elem = self.type()
            enc = self.encoding() if self.eat(",") else None
            self.expect(">", "to close tensor<...>")
            return TensorType(shape, elem, enc)
        if self.eat("!tt.ptr<"):
            pointee = self.type()
            space = self.integer() if self.eat(",") else 1
            self.expect(">", "to close !tt.ptr<...>")
            return PointerType(pointee, space)
        if self.eat("!ttg.memdesc<") or self.eat("<"):  # type($x) prints a memdesc without prefix
            shape = self.dims()
            elem = self.type()
            self.expect(",")
            enc = self.encoding()
            self.expect(",")
            self.expect("#smem", "(memory space)")
            mutable = self.eat(",") and (self.eat_word("mutable") or True)
            self.expect(">", "to close !ttg.memdesc<...>")
            return MemDescType(shape, elem, enc, bool(mutable))
        m = re.compile(r"(i\d+|bf16|f16|f32|f64)\b").match(self.s, pos)
        if not m:
            raise self.error(f"expected a type, found {self.found()}")
        self.i = m.end()
        t = m.group(1)
        return IntType(int(t[1:])) if t[0] == "i" else FloatType(t)

    def dims(self) -> tuple:
        shape = []
        self.ws()
        if self.s.startswith("x", self.i):  # a 0-d tensor prints as tensor<xf32>
            self.i += 1
            return ()
        while True:
            m = re.compile(r"(\d+)x").match(self.s, self.i)
            if not m:
                return tuple(shape)
            shape.append(int(m.group(1)))
            self.i = m.end()

    def type_list(self) -> list:
        out = [self.type()]
        while self.eat(","):
            out.append(self.type())
        return out

    def paren_types(self) -> list:
        self.expect("(")
        if self.eat(")"):
            return []
        out = self.type_list()
        self.expect(")")
        return out

    def attr_value(self):
        self.ws()
        if self.eat_word("true"):
            return True
        if self.eat_word("false"):
            return False
        if self.at('"'):
            return self.string()
        if self.eat("array<"):
            self.ident("an element type")
            vals = []
            if self.eat(":"):
                while not self.at(">"):
                    vals.append(self.integer())
                    if not self.eat(","):
                        break
            self.expect(">", "to close array<...>")
            return tuple(vals)
        if self.eat("["):
            vals = []
            while not self.at("]"):
                vals.append(self.attr_value())
                if not self.eat(","):
                    break
            self.expect("]")
            return vals
        text = self.number_text()
        t = self.type() if self.eat(":") else IntType(64)
        if isinstance(t, FloatType):
            return float_from_text(text, t)
        if not re.fullmatch(r"-?\d+", text):
            raise self.error(f"integer attribute expected, found {text!r}")
        return int(text)

    def attr_dict(self) -> dict:
        self.expect("{")
        out: dict = {}
        while not self.at("}"):
            key = self.string() if self.at('"') else self.ident("an attribute name")
            if self.eat("="):
                out[key] = self.attr_value()
            else:
                out[key] = True  # a unit attribute
            if not self.eat(","):
                break
        self.expect("}", "to close the attribute dictionary")
        return out


class ModuleParser(TypeParser, OpParser):
    """Reads a whole module: alias and location definitions, ``module {...}``."""

    def __init__(self, text: str):
        super().__init__(text)
        self.values: dict[str, Value] = {}
        self.loc_defs: dict[str, tuple] = {}
        self.loc_uses: list[tuple] = []  # (op, loc-expression)
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

    def loc_expr(self):
        """``loc(...)`` as a small tree resolved after the location table is read."""
        self.expect("loc(")
        e = self.loc_inner()
        self.expect(")", "to close loc(...)")
        return e

    def loc_inner(self):
        self.ws()
        pos = self.i
        if self.eat_word("unknown"):
            return ("unknown",)
        if self.at("#"):
            name, _ = self.sigil_name("#", "a location reference")
            return ("ref", "#" + name, pos)
        if self.eat_word("callsite"):
            self.expect("(")
            callee = self.loc_inner()
            if not self.eat_word("at"):
                raise self.error(f"expected 'at' in callsite(...), found {self.found()}")
            caller = self.loc_inner()
            self.expect(")")
            return ("callsite", callee, caller)
        s = self.string()
        if self.eat("("):
            inner = self.loc_inner()
            self.expect(")")
            return ("named", s, inner)
        self.expect(":", "in file:line:col")
        line = self.integer()
        self.expect(":", "in file:line:col")
        return ("file", s, line, self.integer())

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


__all__ = ["parse_module", "IRParseError", "float_from_text", "Block"]
