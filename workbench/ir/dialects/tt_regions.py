"""``tt`` ops with regions: ``tt.func`` (custom syntax, as Triton's ``FuncOp`` with
``hasCustomAssemblyFormat``) and ``tt.reduce``/``tt.scan``, which Triton 3.6 prints in MLIR's
generic form (their ODS definitions have no assembly format)."""
from __future__ import annotations

from ..attrs import format_attr_dict, symbol_ref
from ..core import Operation
from ..types import FunctionType
from . import tt_checks as chk
from .spec import REQUIRED, Attr, CustomSyntax, fail, op


# tt.func ------------------------------------------------------------------------------------
def _check_func(func, ctx) -> None:
    ftype = func.attributes.get("function_type")
    if not func.regions[0].blocks:
        fail(func, "has no body")
    args = func.regions[0].blocks[0].args
    inputs = getattr(ftype, "inputs", None)
    if inputs is not None and [a.type for a in args] != list(inputs):
        fail(func, f"entry block arguments {[str(a.type) for a in args]} do not match "
                   f"function_type {ftype}")
    results = list(getattr(ftype, "results", ()))
    for o in func.walk():
        if o.name == "tt.return" and [v.type for v in o.operands] != results:
            fail(o, f"returns {[str(v.type) for v in o.operands]}, the function declares "
                    f"{[str(t) for t in results]}")


def _print_func(p, o, indent) -> None:
    a = o.attributes
    block = o.regions[0].block
    params = []
    arg_attrs = a.get("arg_attrs") or [{} for _ in block.args]
    for arg, attrs in zip(block.args, arg_attrs, strict=False):
        s = f"{p.v(arg)}: {p.t(arg.type)}"
        if attrs:
            s += " " + format_attr_dict(attrs)
        params.append(s)
    vis = a.get("visibility", "public")
    ftype = a.get("function_type")
    rets = ""
    if isinstance(ftype, FunctionType) and ftype.results:
        rets = ", ".join(p.t(t) for t in ftype.results)
        rets = f" -> ({rets})" if len(ftype.results) > 1 else f" -> {rets}"
    noinline = "true" if a.get("noinline") else "false"
    p.emit(indent, f"tt.func {vis} {symbol_ref(a['sym_name'])}({', '.join(params)}){rets} "
                   f"attributes {{noinline = {noinline}}} {{", None)
    p.region_body(block, indent + 1)
    p.emit(indent, "}", o.loc)


def _func_params(r) -> list:
    args = []
    r.expect("(")
    while not r.at(")"):
        name, pos = r.sigil_name("%", "a parameter")
        r.expect(":")
        t = r.type()
        attrs = r.attr_dict() if r.at_same_line("{") else {}
        if r.at_same_line("loc("):
            r.loc_expr()  # Triton prints argument locations; we keep none
        args.append((name, pos, t, attrs))
        if not r.eat(","):
            break
    r.expect(")")
    return args


def _parse_func(r, name) -> Operation:
    vis = r.ident("public or private")
    sym, _ = r.sigil_name("@", "a function name (@name)")
    saved, r.values = r.values, {}
    args = _func_params(r)
    results = (r.paren_types() if r.at("(") else r.type_list()) if r.eat("->") else []
    fattrs = r.attr_dict() if r.eat_word("attributes") else {}
    attrs = {"sym_name": sym,
             "function_type": FunctionType(tuple(a[2] for a in args), tuple(results)),
             "arg_attrs": [a[3] for a in args],
             "arg_names": [None if a[0].isdigit() else a[0] for a in args],
             "visibility": vis, "noinline": bool(fattrs.pop("noinline", False))}
    attrs.update(fattrs)
    func = Operation("tt.func", [], [], attrs, regions=1)
    block = func.regions[0].add_block()
    for arg_name, pos, t, _ in args:
        r.define(arg_name, block.add_arg(t), pos)
    r.region(block)
    r.values = saved
    return func


# tt.reduce / tt.scan: MLIR's generic form with one region -----------------------------------
def _print_generic_region(p, o, indent) -> None:
    props = f" <{format_attr_dict(o.attributes)}>" if o.attributes else ""
    p.emit(indent, f'{p.results(o)}"{o.name}"({p.vs(o.operands)}){props} ({{', None)
    block = o.regions[0].block
    p.block_header(block, indent)
    p.region_body(block, indent + 1)
    ins = ", ".join(p.t(x.type) for x in o.operands)
    outs = ", ".join(p.t(x.type) for x in o.results)
    outs = outs if len(o.results) == 1 else f"({outs})"
    p.emit(indent, f"}}) : ({ins}) -> {outs}", o.loc)


def _parse_generic_region(r, name) -> Operation:
    raise r.error(f"{name} is printed in MLIR's generic form: \"{name}\"(...)")


_GENERIC = CustomSyntax(_print_generic_region, _parse_generic_region)

SPECS = [
    op("tt.func", results=(), regions=1, terminators=("tt.return",),
       attributes=[Attr("sym_name", "str", REQUIRED), Attr("function_type", "any", None),
                   Attr("arg_attrs", "any", None), Attr("arg_names", "any", None),
                   Attr("visibility", "str", "public"), Attr("noinline", "bool", False)],
       custom=CustomSyntax(_print_func, _parse_func), verify=_check_func,
       doc="a kernel; its entry block's arguments are its parameters"),
    op("tt.reduce", ["*srcs"], results=("*results",), regions=1,
       terminators=("tt.reduce.return",), attributes=[Attr("axis", "i32", REQUIRED)],
       traits=("pure",), custom=_GENERIC, verify=chk.reduce,
       doc="reduce srcs along axis with the combine region (block args: 2 per src)"),
    op("tt.scan", ["*srcs"], results=("*results",), regions=1, terminators=("tt.scan.return",),
       attributes=[Attr("axis", "i32", REQUIRED), Attr("reverse", "bool", False, elide=())],
       traits=("pure",), custom=_GENERIC, doc="inclusive scan along axis"),
    op("tt.map_elementwise", ["*srcs"], results=("*results",), regions=1,
       terminators=("tt.map_elementwise.return",), attributes=[Attr("pack", "i32", 1)],
       custom=_GENERIC,
       doc="apply the scalar region to each element (pack consecutive elements per call)"),
    op("tt.map_elementwise.return", ["*result"], results=(), traits=("pure", "terminator"),
       format="$result attr-dict `:` type($result)",
       doc="yield of a tt.map_elementwise region"),
]
