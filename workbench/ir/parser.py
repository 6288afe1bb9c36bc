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
import struct

from .core import UNKNOWN, Block, Location, Operation, Value
from .parser_ops import OpParser
from .types import FloatType, IntType, MemDescType, PointerType, TensorType


class IRParseError(ValueError):
    """A syntax or reference error in IR text; ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, line: int, column: int):
        self.line, self.column = line, column
        super().__init__(f"line {line}, column {column}: {message}")


_IDENT = re.compile(r"[A-Za-z_][\w.$-]*")
_NUMBER = re.compile(r"-?(?:0x[0-9A-Fa-f]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|inf|nan)")


class Cursor:
    """Character-level reading of IR text with MLIR's tokens; tracks line and column."""

    def __init__(self, text: str):
        self.s = text
        self.i = 0
        self.line_starts = [0] + [k + 1 for k, c in enumerate(text) if c == "\n"]

    # position and errors --------------------------------------------------------------------
    def where(self, pos: int | None = None) -> tuple[int, int]:
        pos = self.i if pos is None else pos
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, pos - self.line_starts[lo] + 1

    def error(self, message: str, pos: int | None = None) -> IRParseError:
        line, col = self.where(pos)
        return IRParseError(message, line, col)

    def found(self) -> str:
        rest = self.s[self.i:self.i + 20].split("\n")[0]
        return repr(rest) if rest else "end of line" if self.i < len(self.s) else "end of text"

    # whitespace and punctuation -------------------------------------------------------------
    def ws(self) -> None:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t\r\n":
                self.i += 1
            elif s.startswith("//", self.i):
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            else:
                break

    def at(self, lit: str) -> bool:
        self.ws()
        return self.s.startswith(lit, self.i)

    def eat(self, lit: str) -> bool:
        if self.at(lit):
            self.i += len(lit)
            return True
        return False

    def expect(self, lit: str, what: str = "") -> None:
        if not self.eat(lit):
            ctx = f" {what}" if what else ""
            raise self.error(f"expected '{lit}'{ctx}, found {self.found()}")

    def at_word(self, word: str) -> bool:
        self.ws()
        m = _IDENT.match(self.s, self.i)
        return m is not None and m.group(0) == word

    def eat_word(self, word: str) -> bool:
        if self.at_word(word):
            self.i += len(word)
            return True
        return False

    # tokens ---------------------------------------------------------------------------------
    def ident(self, what: str = "a name") -> str:
        self.ws()
        m = _IDENT.match(self.s, self.i)
        if not m:
            raise self.error(f"expected {what}, found {self.found()}")
        self.i = m.end()
        return m.group(0)

    def integer(self) -> int:
        self.ws()
        m = re.compile(r"-?\d+").match(self.s, self.i)
        if not m:
            raise self.error(f"expected an integer, found {self.found()}")
        self.i = m.end()
        return int(m.group(0))

    def number_text(self) -> str:
        self.ws()
        m = _NUMBER.match(self.s, self.i)
        if not m:
            raise self.error(f"expected a number, found {self.found()}")
        self.i = m.end()
        return m.group(0)

    def string(self) -> str:
        self.ws()
        if not self.s.startswith('"', self.i):
            raise self.error(f"expected a string, found {self.found()}")
        out, j = [], self.i + 1
        while j < len(self.s) and self.s[j] != '"':
            if self.s[j] == "\\" and j + 1 < len(self.s):
                j += 1
            if self.s[j] == "\n":
                raise self.error("unterminated string", self.i)
            out.append(self.s[j])
            j += 1
        if j >= len(self.s):
            raise self.error("unterminated string", self.i)
        self.i = j + 1
        return "".join(out)

    def sigil_name(self, sigil: str, what: str) -> tuple[str, int]:
        """``%name``/``@name``/``^bb0``/``#alias``: returns (name without sigil, position)."""
        self.ws()
        pos = self.i
        if not self.s.startswith(sigil, pos):
            raise self.error(f"expected {what}, found {self.found()}")
        m = re.compile(r"[\w.$-]+").match(self.s, pos + 1)
        if not m:
            raise self.error(f"expected {what}, found {self.found()}")
        self.i = m.end()
        return m.group(0), pos

    def balanced(self) -> str:
        """From here to the ``>`` that closes the first ``<`` (a layout attribute's text)."""
        start = self.i
        j = self.s.find("<", start)
        if j < 0:
            raise self.error("expected '<' in a layout attribute")
        depth = 0
        while j < len(self.s):
            c = self.s[j]
            if c == "<":
                depth += 1
            elif c == ">":
                depth -= 1
                if depth == 0:
                    self.i = j + 1
                    return self.s[start:self.i]
            elif c == "\n":
                break
            j += 1
        raise self.error("unterminated layout attribute (missing '>')", start)


def float_from_text(text: str, elem) -> float:
    """A float literal as printed by :func:`workbench.ir.printer.format_float` (decimal, or
    the hex bit pattern of the element type for inf/nan)."""
    if not text.lstrip("-").startswith("0x"):
        return float(text)
    bits = int(text, 16)
    name = elem.name if isinstance(elem, FloatType) else "f32"
    if name == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if name == "f16":
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    if name == "bf16":
        bits <<= 16
    return struct.unpack("<f", struct.pack("<I", bits))[0]


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
        if self.eat("!ttg.memdesc<"):
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


__all__ = ["parse_module", "IRParseError", "Block"]
