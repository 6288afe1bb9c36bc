"""Region ops for :mod:`workbench.ir.parser`: ``tt.func``, ``scf.for``, ``scf.if``,
``scf.while`` in the printer's custom syntax (a mixin of the op parser)."""
from __future__ import annotations

from .core import Operation
from .types import FunctionType


class RegionOpParser:
    """Readers of the ops whose custom syntax holds regions."""

    # region ops ----------------------------------------------------------------------------
    def _func(self) -> Operation:
        vis = self.ident("public or private")
        sym, _ = self.sigil_name("@", "a function name (@name)")
        saved, self.values = self.values, {}
        self.expect("(")
        args = []
        while not self.at(")"):
            name, pos = self.sigil_name("%", "a parameter")
            self.expect(":")
            t = self.type()
            attrs = self.attr_dict() if self.at_same_line("{") else {}
            if self.at_same_line("loc("):
                self.loc_expr()
            args.append((name, pos, t, attrs))
            if not self.eat(","):
                break
        self.expect(")")
        results = self.type_list() if self.eat("->") else []
        fattrs = self.attr_dict() if self.eat_word("attributes") else {}
        attrs = {"sym_name": sym, "function_type": FunctionType(tuple(a[2] for a in args),
                                                              tuple(results)),
                 "arg_attrs": [a[3] for a in args],
                 "arg_names": [None if a[0].isdigit() else a[0] for a in args],
                 "visibility": vis, "noinline": bool(fattrs.pop("noinline", False))}
        attrs.update(fattrs)
        op = Operation("tt.func", [], [], attrs, regions=1)
        block = op.regions[0].add_block()
        for name, pos, t, _ in args:
            self.define(name, block.add_arg(t), pos)
        self.region(block)
        self.values = saved
        return op

    def _for(self) -> Operation:
        iv, iv_pos = self.sigil_name("%", "the induction variable")
        self.expect("=")
        lb = self.use()
        if not self.eat_word("to"):
            raise self.error(f"expected 'to' in scf.for, found {self.found()}")
        ub = self.use()
        if not self.eat_word("step"):
            raise self.error(f"expected 'step' in scf.for, found {self.found()}")
        step = self.use()
        iters, inits, types = [], [], []
        if self.eat_word("iter_args"):
            self.expect("(")
            while not self.at(")"):
                iters.append(self.sigil_name("%", "an iteration argument"))
                self.expect("=")
                inits.append(self.use())
                if not self.eat(","):
                    break
            self.expect(")")
            self.expect("->")
            types = self.paren_types()
            if len(types) != len(inits):
                raise self.error(f"scf.for has {len(inits)} iter_args but {len(types)} result types")
        self.expect(":")
        ivt = self.type()
        op = Operation("scf.for", [lb, ub, step] + inits, types, regions=1)
        block = op.regions[0].add_block()
        self.define(iv, block.add_arg(ivt), iv_pos)
        for (name, pos), t in zip(iters, types):
            self.define(name, block.add_arg(t), pos)
        self.region(block)
        if self.at_same_line("{"):
            op.attributes.update(self.attr_dict())
        return op

    def _if(self) -> Operation:
        cond = self.use()
        types = self.paren_types() if self.eat("->") else []
        op = Operation("scf.if", [cond], types, regions=2)
        self.region(op.regions[0].add_block())
        if self.at_same_line("else"):
            self.eat_word("else")
            self.region(op.regions[1].add_block())
        return op

    def _while(self) -> Operation:
        self.expect("(")
        pairs = []
        while not self.at(")"):
            pairs.append(self.sigil_name("%", "a loop-carried value"))
            self.expect("=")
            pairs[-1] = (pairs[-1], self.use())
            if not self.eat(","):
                break
        self.expect(")")
        self.expect(":")
        ins = self.paren_types()
        self.expect("->")
        outs = self.paren_types()
        op = Operation("scf.while", [v for _, v in pairs], outs, regions=2)
        before = op.regions[0].add_block()
        for ((name, pos), _), t in zip(pairs, ins):
            self.define(name, before.add_arg(t), pos)
        self.region(before)
        if not self.eat_word("do"):
            raise self.error(f"expected 'do' in scf.while, found {self.found()}")
        self.expect("{")
        after = op.regions[1].add_block()
        self.sigil_name("^", "the block label ^bb0")
        self.block_args(after)
        self.expect(":")
        self.block_body(after)
        self.expect("}")
        return op
