"""MLIR's ``scf`` dialect: structured loops and branches with their custom syntax (MLIR's
``SCFOps.td``: ``scf.for``, ``scf.if`` and ``scf.while`` print with hand-written printers),
and their terminators ``scf.yield`` and ``scf.condition``."""
from __future__ import annotations

from ..attrs import format_attr_dict
from ..core import Operation
from ..types import IntType
from .spec import CustomSyntax, fail, op


# verification -------------------------------------------------------------------------------
def _yield_types(o, region_index: int, what: str) -> None:
    blocks = o.regions[region_index].blocks
    if not blocks or not blocks[0].ops:
        return
    term = blocks[0].ops[-1]
    got = [v.type for v in term.operands]
    want = [r.type for r in o.results]
    if term.name == "scf.yield" and got != want:
        fail(term, f"{what} yields {[str(t) for t in got]} but the results are "
                   f"{[str(t) for t in want]}")


def _check_for(o, ctx) -> None:
    lb, ub, st, *inits = o.operands
    if not (lb.type == ub.type == st.type) or not isinstance(lb.type, IntType):
        fail(o, f"bounds and step must share one integer type: {lb.type}, {ub.type}, {st.type}")
    block = o.regions[0].blocks[0] if o.regions[0].blocks else None
    if block is None or len(block.args) != 1 + len(inits):
        fail(o, f"body needs {1 + len(inits)} arguments (iv and iter_args)")
    if block.args[0].type != lb.type:
        fail(o, f"induction variable must be {lb.type}")
    want = [v.type for v in inits]
    if [a.type for a in block.args[1:]] != want or [r.type for r in o.results] != want:
        fail(o, "iter_args, their initial values and the results must have equal types")
    _yield_types(o, 0, "the loop body")


def _check_if(o, ctx) -> None:
    c = o.operands[0].type
    if c != IntType(1):
        fail(o, f"condition must be i1, got {c}")
    if not o.regions[0].blocks:
        fail(o, "needs a then region")
    if o.results and not (o.regions[1].blocks and o.regions[1].blocks[0].ops):
        fail(o, "an scf.if with results needs an else region")
    _yield_types(o, 0, "the then branch")
    _yield_types(o, 1, "the else branch")


# scf.for ------------------------------------------------------------------------------------
def _print_for(p, o, indent) -> None:
    lb, ub, st, *inits = o.operands
    block = o.regions[0].block
    iv, *iters = block.args
    head = f"{p.results(o)}scf.for {p.v(iv)} = {p.v(lb)} to {p.v(ub)} step {p.v(st)}"
    if inits:
        pairs = ", ".join(f"{p.v(b)} = {p.v(i)}" for b, i in zip(iters, inits, strict=True))
        head += f" iter_args({pairs}) -> ({', '.join(p.t(r.type) for r in o.results)})"
    # two spaces, as MLIR's ForOp::print writes them (a space, then " : type ")
    p.emit(indent, head + f"  : {p.t(lb.type)} {{", None)
    p.region_body(block, indent + 1, implicit_yield=True)
    # sorted by name, as MLIR's dictionary attributes are
    attrs = f" {format_attr_dict(dict(sorted(o.attributes.items())))}" if o.attributes else ""
    p.emit(indent, "}" + attrs, o.loc)


def _parse_iter_args(r) -> tuple[list, list, list]:
    iters, inits, types = [], [], []
    if r.eat_word("iter_args"):
        r.expect("(")
        while not r.at(")"):
            iters.append(r.sigil_name("%", "an iteration argument"))
            r.expect("=")
            inits.append(r.use())
            if not r.eat(","):
                break
        r.expect(")")
        r.expect("->")
        types = r.paren_types()
        if len(types) != len(inits):
            raise r.error(f"scf.for has {len(inits)} iter_args but {len(types)} result types")
    return iters, inits, types


def _parse_for(r, name) -> Operation:
    iv, iv_pos = r.sigil_name("%", "the induction variable")
    r.expect("=")
    lb = r.use()
    r.expect_word("to", "in scf.for")
    ub = r.use()
    r.expect_word("step", "in scf.for")
    step = r.use()
    iters, inits, types = _parse_iter_args(r)
    r.expect(":")
    ivt = r.type()
    o = Operation("scf.for", [lb, ub, step] + inits, types, regions=1)
    block = o.regions[0].add_block()
    r.define(iv, block.add_arg(ivt), iv_pos)
    for (arg, pos), t in zip(iters, types, strict=True):
        r.define(arg, block.add_arg(t), pos)
    r.region(block)
    _ensure_yield(r, o, block)
    if r.at_same_line("{"):
        o.attributes.update(r.attr_dict())
    return o


def _ensure_yield(r, owner: Operation, block) -> None:
    """Append the ``scf.yield`` of no values that the printed form leaves implicit (MLIR's
    ``ensureTerminator``) when ``block`` does not end in one; it takes ``owner``'s location
    once the parser reads it."""
    if not block.ops or block.ops[-1].name != "scf.yield":
        y = block.append(Operation("scf.yield", [], []))
        r.implicit_yields.setdefault(id(owner), []).append(y)


# scf.if -------------------------------------------------------------------------------------
def _print_if(p, o, indent) -> None:
    types = f" -> ({', '.join(p.t(r.type) for r in o.results)})" if o.results else ""
    p.emit(indent, f"{p.results(o)}scf.if {p.v(o.operands[0])}{types} {{", None)
    p.region_body(o.regions[0].block, indent + 1, implicit_yield=True)
    els = o.regions[1].blocks
    if els and any(op.name != "scf.yield" or op.operands for op in els[0].ops):
        p.emit(indent, "} else {", None)
        p.region_body(els[0], indent + 1, implicit_yield=True)
    p.emit(indent, "}", o.loc)


def _parse_if(r, name) -> Operation:
    cond = r.use()
    types = r.paren_types() if r.eat("->") else []
    o = Operation("scf.if", [cond], types, regions=2)
    r.region(o.regions[0].add_block())
    if not types:
        _ensure_yield(r, o, o.regions[0].block)
    if r.at_same_line("else"):
        r.eat_word("else")
        r.region(o.regions[1].add_block())
        if not types:
            _ensure_yield(r, o, o.regions[1].block)
    return o


# scf.while ----------------------------------------------------------------------------------
def _print_while(p, o, indent) -> None:
    before, after = o.regions[0].block, o.regions[1].block
    res = p.results(o)
    pairs = ", ".join(f"{p.v(b)} = {p.v(i)}"
                      for b, i in zip(before.args, o.operands, strict=True))
    ins = ", ".join(p.t(x.type) for x in o.operands)
    outs = ", ".join(p.t(x.type) for x in o.results)
    p.emit(indent, f"{res}scf.while ({pairs}) : ({ins}) -> ({outs}) {{", None)
    p.region_body(before, indent + 1)
    p.emit(indent, "} do {", None)
    p.block_header(after, indent)
    p.region_body(after, indent + 1)
    # MLIR's WhileOp::print: ``attributes {...}`` after the regions (llvm.loop_annotation)
    attrs = (f" attributes {format_attr_dict(dict(sorted(o.attributes.items())))}"
             if o.attributes else "")
    p.emit(indent, "}" + attrs, o.loc)


def _parse_while(r, name) -> Operation:
    r.expect("(")
    pairs = []
    while not r.at(")"):
        arg = r.sigil_name("%", "a loop-carried value")
        r.expect("=")
        pairs.append((arg, r.use()))
        if not r.eat(","):
            break
    r.expect(")")
    r.expect(":")
    ins = r.paren_types()
    r.expect("->")
    outs = r.paren_types()
    o = Operation("scf.while", [v for _, v in pairs], outs, regions=2)
    before = o.regions[0].add_block()
    for ((arg_name, pos), _), t in zip(pairs, ins, strict=True):
        r.define(arg_name, before.add_arg(t), pos)
    r.region(before)
    r.expect_word("do", "in scf.while")
    r.expect("{")
    after = o.regions[1].add_block()
    with r.scoped(after):
        r.sigil_name("^", "the block label ^bb0")
        r.block_args(after)
        r.expect(":")
        r.block_body(after)
    r.expect("}")
    if r.at_same_line("attributes"):
        r.eat_word("attributes")
        o.attributes.update(r.attr_dict())
    return o


SPECS = [
    op("scf.for", ["lower", "upper", "step", "*inits"], results=("*results",), regions=1,
       terminators=("scf.yield",), custom=CustomSyntax(_print_for, _parse_for),
       verify=_check_for, doc="counted loop; block args (iv, iter_args)"),
    op("scf.if", ["condition"], results=("*results",), regions=2,
       terminators=("scf.yield", "scf.yield?"), custom=CustomSyntax(_print_if, _parse_if),
       verify=_check_if, doc="then/else regions (else may be empty without results)"),
    op("scf.while", ["*inits"], results=("*results",), regions=2,
       terminators=("scf.condition", "scf.yield"),
       custom=CustomSyntax(_print_while, _parse_while),
       doc="before region ends in scf.condition, after in scf.yield"),
    op("scf.condition", ["condition", "*args"], results=(), traits=("pure", "terminator"),
       format="`(` $condition `)` attr-dict ($args^ `:` type($args))?",
       doc="while-loop continue test"),
    op("scf.yield", ["*values"], results=(), traits=("pure", "terminator"),
       format="attr-dict ($values^ `:` type($values))?", doc="region result"),
]
