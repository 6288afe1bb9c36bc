"""Types and attribute values for :mod:`workbench.ir.parser`: ``tensor<...>``, ``!tt.ptr<...>``,
``!ttg.memdesc<...>`` (also without its prefix, as ``type($x)`` of a memory descriptor prints
it), layouts by alias or inline (read with :func:`workbench.layouts.parse`), and MLIR
attribute values and dictionaries."""
from __future__ import annotations

import re

from .attrs import UNIT, LoopAnnotation
from .parser_lex import Cursor, float_from_text
from .types import (
    AsyncTokenType,
    FloatType,
    IntType,
    MemDescType,
    PointerType,
    TensorDescType,
    TensorType,
)

_SCALAR = re.compile(r"(i\d+|bf16|f16|f32|f64|f8E4M3FNUZ|f8E4M3FN|f8E5M2FNUZ|f8E5M2)\b")


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
        if self.eat("!tt.tensordesc<"):
            return self._tensordesc()
        if self.eat("!ttg.async.token"):
            return AsyncTokenType()
        if self.s.startswith("<", pos) and not self._memdesc_body(pos + 1):
            # short(type($x)): a pointer or a tensor descriptor without its prefix
            self.i = pos + 1
            if self.s.startswith("tensor<", self.i):
                return self._tensordesc()
            pointee = self.type()
            space = self.integer() if self.eat(",") else 1
            self.expect(">", "to close <...>")
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
        m = _SCALAR.match(self.s, pos)
        if not m:
            raise self.error(f"expected a type, found {self.found()}")
        self.i = m.end()
        t = m.group(1)
        return IntType(int(t[1:])) if t[0] == "i" else FloatType(t)

    def _memdesc_body(self, i: int) -> bool:
        """Whether the text at ``i`` (after a bare ``<``) is a memdesc's shape."""
        return bool(re.compile(r"\s*(\d+x|x)").match(self.s, i))

    def _tensordesc(self) -> TensorDescType:
        """``tensor<...>>`` after ``!tt.tensordesc<`` (or a bare ``<``); an integer element
        may carry Triton's signedness prefix (``si32``, ``ui32``)."""
        self.ws()
        self.expect("tensor<", "in a tensor descriptor type")
        shape = self.dims()
        sign = ""
        m = re.compile(r"([su])(i\d+)\b").match(self.s, self.i)
        if m:
            sign = m.group(1)
            self.i += 1
        elem = self.type()
        enc = self.encoding() if self.eat(",") else None
        self.expect(">", "to close tensor<...>")
        self.expect(">", "to close !tt.tensordesc<...>")
        return TensorDescType(TensorType(shape, elem, enc), sign)

    def dims(self) -> tuple:
        shape: list[int] = []
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
        if self.eat("dense<"):
            return self.dense_ints()
        if self.eat("#llvm.loop_annotation"):
            return LoopAnnotation(self.balanced()[1:-1])
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

    def dense_ints(self) -> list:
        """The rest of ``dense<4> : tensor<2xi32>`` or ``dense<[1, 4]> : tensor<2xi32>`` (after
        ``dense<``) as a list of ints, a splat repeated to the tensor's length."""
        vals = []
        if self.eat("["):
            while not self.at("]"):
                vals.append(self.integer())
                if not self.eat(","):
                    break
            self.expect("]")
        else:
            vals.append(self.integer())
        self.expect(">", "to close dense<...>")
        self.expect(":")
        t = self.type()
        n = t.shape[0] if isinstance(t, TensorType) and t.shape else len(vals)
        return vals * n if len(vals) == 1 else vals

    def attr_dict(self) -> dict:
        self.expect("{")
        out: dict = {}
        while not self.at("}"):
            key = self.string() if self.at('"') else self.ident("an attribute name")
            if self.eat("="):
                out[key] = self.attr_value()
            else:
                out[key] = UNIT  # a unit attribute
            if not self.eat(","):
                break
        self.expect("}", "to close the attribute dictionary")
        return out
