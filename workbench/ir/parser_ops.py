"""Blocks and ops for :mod:`workbench.ir.parser`: SSA names, block arguments, regions, the
generic form ``"name"(...)``, and every other op read by its spec (a custom parse function or
the walk of its assembly format in :mod:`workbench.ir.assembly`).

The base of :class:`workbench.ir.parser.ModuleParser`, on top of the type and attribute
readers of :class:`~workbench.ir.parser_types.TypeParser`. An op's reader consumes its text up
to (not including) its ``loc(...)`` and returns the new :class:`Operation`; results are named
by the caller.
"""
from __future__ import annotations

import contextlib

from .assembly import parse_custom
from .core import Block, Operation, Value
from .dialects import OPS
from .parser_lex import float_from_text
from .parser_types import TypeParser
from .types import IntType, TensorType


class OpParser(TypeParser):
    """Reads blocks, ops and their ``loc(...)`` (the base of ModuleParser)."""

    def __init__(self, text: str):
        super().__init__(text)
        self.values: dict[str, Value] = {}
        self.loc_uses: list[tuple] = []  # (op, loc-expression)
        #: terminators the text leaves implicit, by the op that owns them (they take its loc)
        self.implicit_yields: dict = {}

    # helpers -----------------------------------------------------------------------------
    def at_same_line(self, lit: str) -> bool:
        j = self.i
        while j < len(self.s) and self.s[j] in " \t":
            j += 1
        if self.s.startswith(lit, j):
            self.i = j
            return True
        return False

    def use(self) -> Value:
        name, pos = self.sigil_name("%", "an SSA value (%name)")
        if self.s.startswith("#", self.i):  # %name#2: one result of a group %name:3
            self.i += 1
            name = f"{name}#{self.integer()}"
        v = self.values.get(name)
        if v is None:
            raise self.error(f"use of undefined value %{name}", pos)
        return v

    def uses(self) -> list:
        """``%a, %b, ...`` on the current line (possibly none)."""
        out: list[Value] = []
        if not self.at_same_line("%"):
            return out
        out.append(self.use())
        while True:
            save = self.i
            if self.eat(",") and self.at_same_line("%"):
                out.append(self.use())
            else:
                self.i = save
                return out

    def define(self, name: str, value: Value, pos: int) -> None:
        if name in self.values:
            raise self.error(f"redefinition of %{name}", pos)
        base = name.split("#", 1)[0]
        value.name = None if base.isdigit() else base
        self.values[name] = value

    def block_args(self, block: Block) -> None:
        """``(%a: T, %b: T)`` of a block header; defines the arguments."""
        self.expect("(")
        while not self.at(")"):
            name, pos = self.sigil_name("%", "a block argument")
            self.expect(":")
            self.define(name, block.add_arg(self.type()), pos)
            if self.at_same_line("loc("):
                self.loc_expr()  # Triton prints argument locations; we keep none
            if not self.eat(","):
                break
        self.expect(")")

    def block_body(self, block: Block) -> None:
        while True:
            self.ws()
            if self.i >= len(self.s) or self.s[self.i] == "}":
                return
            self.operation(block)

    def region(self, block: Block) -> None:
        """``{ ops }`` into ``block``, its names scoped (:meth:`scoped`)."""
        with self.scoped(block):
            self.expect("{", "to open a region")
            self.block_body(block)
            self.expect("}", "to close a region")

    @contextlib.contextmanager
    def scoped(self, block: Block):
        """Names are scoped as MLIR scopes them: those defined while parsing a region and the
        arguments of its ``block`` (defined by the op's header) go out of scope at its ``}``,
        so a sibling region (the next loop, the next function) may use them again, as MLIR's
        printer does."""
        before = set(self.values)
        yield
        args = {id(a) for a in block.args}
        for name in [n for n, v in self.values.items() if n not in before or id(v) in args]:
            del self.values[name]

    # locations -----------------------------------------------------------------------------
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

    # ops -----------------------------------------------------------------------------------
    def operation(self, block: Block) -> Operation:
        self.ws()
        start = self.i
        names: list[tuple[str, int]] = []
        if self.at("%"):
            names += self.result_names()
            while self.eat(","):
                names += self.result_names()
            self.expect("=", "after the result names")
        self.ws()
        pos = self.i
        if self.at('"'):
            op = self._generic(self.string())
        else:
            name = self.ident("an op name")
            op = self._custom(name, pos)
        if len(names) != len(op.results):
            raise self.error(f"{op.name} has {len(op.results)} results but {len(names)} names "
                             f"are given", start)
        for (n, p), r in zip(names, op.results, strict=True):
            self.define(n, r, p)
        block.append(op)
        if self.at_same_line("loc("):
            expr = self.loc_expr()
            self.loc_uses.append((op, expr))
            for y in self.implicit_yields.pop(id(op), ()):
                self.loc_uses.append((y, expr))
        return op

    def result_names(self) -> list[tuple[str, int]]:
        """``%x`` or MLIR's result group ``%x:3`` (used as ``%x#0`` ... ``%x#2``)."""
        name, pos = self.sigil_name("%", "a result name")
        if not self.s.startswith(":", self.i):
            return [(name, pos)]
        self.i += 1
        return [(f"{name}#{k}", pos) for k in range(self.integer())]

    def op_loc(self, op: Operation) -> None:
        if self.at_same_line("loc("):
            self.loc_uses.append((op, self.loc_expr()))

    def _generic(self, name: str) -> Operation:
        self.expect("(")
        ops = self.uses()
        self.expect(")")
        attrs = {}
        if self.eat("<{"):
            self.i -= 1
            attrs = self.attr_dict()
            self.expect(">")
        blocks = []
        if self.eat("("):
            while True:
                self.expect("{")
                b = Block()
                with self.scoped(b):
                    if self.at("^"):
                        self.sigil_name("^", "a block label")
                        self.block_args(b)
                        self.expect(":")
                    self.block_body(b)
                self.expect("}")
                blocks.append(b)
                if not self.eat(","):
                    break
            self.expect(")")
        self.expect(":")
        ins = self.paren_types()
        if len(ins) != len(ops):
            raise self.error(f"{name} lists {len(ins)} operand types for {len(ops)} operands")
        self.expect("->")
        outs = self.paren_types() if self.at("(") else [self.type()]
        op = Operation(name, ops, outs, attrs, regions=len(blocks))
        for region, b in zip(op.regions, blocks, strict=True):
            region.blocks.append(b)
            b.parent = region
        return op

    def _custom(self, name: str, pos: int) -> Operation:
        spec = OPS.get(name)
        if spec is None:
            raise self.error(f"unknown op '{name}' (not in workbench.ir.dialects.OPS; an op "
                             f"without a spec can be written in the generic form "
                             f"\"{name}\"(...))", pos)
        if spec.custom is not None:
            return spec.custom.parse(self, name)
        return parse_custom(self, name, spec)

    # helpers for custom syntax ---------------------------------------------------------------
    def make(self, name: str, operands, result_types, attributes=None, regions: int = 0):
        """A new Operation (for custom parse functions)."""
        return Operation(name, list(operands), list(result_types), attributes, regions)

    def optional_attr_dict(self) -> dict:
        """``{...}`` if it follows on this line, else ``{}``."""
        return self.attr_dict() if self.at_same_line("{") else {}

    def expect_word(self, word: str, what: str = "") -> None:
        if not self.eat_word(word):
            ctx = f" {what}" if what else ""
            raise self.error(f"expected '{word}'{ctx}, found {self.found()}")

    def literal(self, lit: str, t, pos: int):
        """The value of an ``arith.constant`` literal ``lit`` of type ``t``."""
        el = t.scalar
        if lit in ("true", "false"):
            return lit == "true"
        if isinstance(el, IntType):
            try:
                return int(lit, 0) if lit.lstrip("-").startswith("0x") else int(lit)
            except ValueError:
                raise self.error(f"integer literal expected for {el}, got {lit!r}",
                                 pos) from None
        return float_from_text(lit, el)


__all__ = ["OpParser", "TensorType"]
