"""Character-level reading of IR text for :mod:`workbench.ir.parser`: positions with line and
column, MLIR tokens (names with sigils, numbers, strings, balanced layout attributes)."""
from __future__ import annotations

import re
import struct

from .types import FloatType


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
                hexes = self.s[j:j + 2]
                if len(hexes) == 2 and all(c in "0123456789abcdefABCDEF" for c in hexes):
                    out.append(chr(int(hexes, 16)))  # MLIR's \XX escape
                    j += 2
                    continue
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
        if sigil == "@" and self.s.startswith('"', pos + 1):  # @"a.b(1,)": a quoted symbol
            self.i = pos + 1
            return self.string(), pos
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
