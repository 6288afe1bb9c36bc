"""Op syntax for :mod:`workbench.ir.parser`: one reader per custom format of the printer.

A mixin of :class:`workbench.ir.parser.ModuleParser`: it relies on the cursor, type and
attribute readers there. Each ``_op_*`` reader consumes an op's text up to (not including)
its ``loc(...)`` and returns the new :class:`Operation`; results are named by the caller.
"""
from __future__ import annotations

from .core import Block, Operation, Value
from .parser_regions import RegionOpParser
from .types import IntType, TensorType, like

_AXES = {"x": 0, "y": 1, "z": 2}
_CASTS = {"extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "extf", "truncf",
          "bitcast", "index_cast"}
_ARROW_OPS = {"tt.splat", "tt.broadcast", "ttg.convert_layout", "tt.bitcast", "tt.int_to_ptr",
              "tt.ptr_to_int", "tt.reshape", "tt.split", "tt.local_load", "ttg.local_load",
              "tt.histogram", "tt.join", "tt.cat"}
_RETURNS = {"tt.return", "scf.yield", "tt.reduce.return", "tt.scan.return"}
_MEM_KEYS = {"cacheModifier": "cache", "evictionPolicy": "evict", "isVolatile": "isVolatile"}


class OpParser(RegionOpParser):
    """Reads blocks and ops (mixed into ModuleParser)."""

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
        v = self.values.get(name)
        if v is None:
            raise self.error(f"use of undefined value %{name}", pos)
        return v

    def uses(self) -> list:
        """``%a, %b, ...`` on the current line (possibly none)."""
        out = []
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
        value.name = None if name.isdigit() else name
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
        self.expect("{", "to open a region")
        self.block_body(block)
        self.expect("}", "to close a region")

    # ops -----------------------------------------------------------------------------------
    def operation(self, block: Block) -> Operation:
        self.ws()
        start = self.i
        names = []
        if self.at("%"):
            names.append(self.sigil_name("%", "a result name"))
            while self.eat(","):
                names.append(self.sigil_name("%", "a result name"))
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
        for (n, p), r in zip(names, op.results):
            self.define(n, r, p)
        block.append(op)
        if self.at_same_line("loc("):
            self.loc_uses.append((op, self.loc_expr()))
        return op

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
        for region, b in zip(op.regions, blocks):
            region.blocks.append(b)
            b.parent = region
        return op

    def _custom(self, name: str, pos: int) -> Operation:
        special = {"tt.func": self._func, "scf.for": self._for, "scf.if": self._if,
                   "scf.while": self._while}
        if name in special:
            return special[name]()
        if name == "arith.constant":
            return self._constant()
        if name in ("tt.get_program_id", "tt.get_num_programs"):
            axis_pos = self.i
            axis = self.ident("an axis (x, y or z)")
            if axis not in _AXES:
                raise self.error(f"axis must be x, y or z, got {axis!r}", axis_pos)
            self.expect(":")
            return Operation(name, [], [self.type()], {"axis": _AXES[axis]})
        if name == "tt.make_range":
            a = self.attr_dict()
            self.expect(":")
            return Operation(name, [], [self.type()], {"start": a.get("start"), "end": a.get("end")})
        if name in ("arith.cmpi", "arith.cmpf"):
            pred = self.ident("a predicate")
            self.expect(",")
            ops = self.uses()
            self.expect(":")
            t = self.type()
            return Operation(name, ops, [like(t, IntType(1))], {"predicate": pred})
        if name == "arith.select":
            ops = self.uses()
            self.expect(":")
            self.type()
            self.expect(",")
            return Operation(name, ops, [self.type()])
        if name.startswith("arith.") and name[6:] in _CASTS:
            ops = self.uses()
            self.expect(":")
            self.type()
            if not self.eat_word("to"):
                raise self.error(f"expected 'to' in {name}, found {self.found()}")
            return Operation(name, ops, [self.type()])
        if name in _ARROW_OPS:
            ops = self.uses()
            attrs = {"allow_reorder": True} if self.eat_word("allow_reorder") else {}
            self.expect(":")
            self.type()
            self.expect("->")
            return Operation(name, ops, self.type_list(), attrs)
        if name in ("tt.expand_dims", "tt.trans"):
            ops = self.uses()
            attrs = self.attr_dict()
            self.expect(":")
            self.type()
            self.expect("->")
            return Operation(name, ops, [self.type()], attrs)
        if name == "tt.fp_to_fp":
            ops = self.uses()
            attrs = {}
            if self.eat(","):
                self.eat_word("rounding")
                self.expect("=")
                attrs["rounding"] = self.ident("a rounding mode")
            self.expect(":")
            self.type()
            self.expect("->")
            return Operation(name, ops, [self.type()], attrs)
        if name == "tt.addptr":
            ops = self.uses()
            self.expect(":")
            t = self.type()
            self.expect(",")
            self.type()
            return Operation(name, ops, [t])
        if name in ("tt.load", "tt.store"):
            return self._memory(name)
        if name == "tt.dot":
            ops = self.uses()
            attrs = {}
            if self.eat(","):
                self.eat_word("inputPrecision")
                self.expect("=")
                attrs["inputPrecision"] = self.ident("an input precision")
            self.expect(":")
            self.type()
            self.expect("*")
            self.type()
            self.expect("->")
            return Operation(name, ops, [self.type()], attrs)
        if name in ("tt.atomic_rmw", "tt.atomic_cas"):
            attrs = {}
            if name == "tt.atomic_rmw":
                attrs["atomic_rmw_op"] = self.ident("an atomic op")
                self.expect(",")
            attrs["sem"] = self.ident("a memory semantic")
            self.expect(",")
            attrs["scope"] = self.ident("a memory scope")
            self.expect(",")
            ops = self.uses()
            self.expect(":")
            self.paren_types()
            self.expect("->")
            return Operation(name, ops, [self.type()], attrs)
        if name == "tt.print":
            prefix = self.string()
            a = self.attr_dict()
            self.expect(":")
            ops = self.uses()
            if ops:
                self.expect(":")
                self.type_list()
            return Operation(name, ops, [], {"prefix": prefix, "hex": a.get("hex", False),
                                             "isSigned": tuple(a.get("isSigned", ()))})
        if name == "tt.assert":
            ops = self.uses()
            self.expect(",")
            msg = self.string()
            self.expect(":")
            self.type()
            return Operation(name, ops, [], {"message": msg})
        if name == "tt.extern_elementwise":
            ops = self.uses()
            attrs = self.attr_dict()
            self.expect(":")
            self.paren_types()
            self.expect("->")
            return Operation(name, ops, [self.type()], attrs)
        if name in _RETURNS:
            ops = self.uses()
            if ops:
                self.expect(":")
                self.type_list()
            return Operation(name, ops, [])
        if name == "scf.condition":
            self.expect("(")
            cond = self.use()
            self.expect(")")
            rest = self.uses()
            if rest:
                self.expect(":")
                self.type_list()
            return Operation(name, [cond] + rest, [])
        if name == "gpu.barrier":
            return Operation(name, [], [])
        if name == "ttng.warp_group_dot":
            from .printer import INPUT_PRECISIONS
            ops = self.uses()
            attrs = self.attr_dict()
            if isinstance(attrs.get("inputPrecision"), int):
                attrs["inputPrecision"] = INPUT_PRECISIONS[attrs["inputPrecision"]]
            self.expect(":")
            self.type()
            self.expect("*")
            self.type()
            self.expect("->")
            return Operation(name, ops, [self.type()], attrs)
        if name == "ttng.warp_group_dot_wait":
            ops = self.uses()
            attrs = self.attr_dict()
            self.expect(":")
            types = [self.type()]
            while self.eat(","):
                types.append(self.type())
            return Operation(name, ops, types, attrs)
        if name == "ttg.local_alloc":
            ops = self.uses()
            attrs = self.attr_dict() if self.at_same_line("{") else {}
            self.expect(":")
            self.paren_types()
            self.expect("->")
            return Operation(name, ops, [self.type()], attrs)
        if name in ("ttg.local_store", "ttg.local_dealloc"):
            ops = self.uses()
            self.expect(":")
            self.type()
            if name == "ttg.local_store":
                self.expect("->")
                self.type()
            return Operation(name, ops, [])
        # same-type elementwise ops: arith.addf %a, %b : tensor<...>
        ops = self.uses()
        self.expect(":", f"in {name}")
        t = self.type()
        return Operation(name, ops, [t])

    def _constant(self) -> Operation:
        self.ws()
        lit_pos = self.i
        if self.eat_word("dense"):
            self.expect("<")
            lit = "true" if self.eat_word("true") else "false" if self.eat_word("false") \
                else self.number_text()
            self.expect(">")
            self.expect(":")
            t = self.type()
        elif self.at_word("true") or self.at_word("false"):
            lit = self.ident()
            t = IntType(1)
        else:
            lit = self.number_text()
            self.expect(":")
            t = self.type()
        return Operation("arith.constant", [], [t], {"value": self._literal(lit, t, lit_pos)})

    def _literal(self, lit: str, t, pos: int):
        from .parser import float_from_text
        el = t.scalar
        if lit in ("true", "false"):
            return lit == "true"
        if isinstance(el, IntType):
            try:
                return int(lit, 0) if lit.lstrip("-").startswith("0x") else int(lit)
            except ValueError:
                raise self.error(f"integer literal expected for {el}, got {lit!r}", pos) from None
        return float_from_text(lit, el)

    def _memory(self, name: str) -> Operation:
        ops = self.uses()
        attrs = {}
        if self.at_same_line("{"):
            self.expect("{")
            while not self.at("}"):
                key = self.ident("a memory attribute")
                self.expect("=")
                val = self.ident("a value")
                attrs[_MEM_KEYS.get(key, key)] = True if val == "true" else val
                if not self.eat(","):
                    break
            self.expect("}")
        self.expect(":")
        t = self.type()
        if name == "tt.store":
            return Operation(name, ops, [], attrs)
        pointee = t.scalar.pointee if hasattr(t.scalar, "pointee") else t.scalar
        return Operation(name, ops, [like(t, pointee)], attrs)

__all__ = ["OpParser", "TensorType"]
