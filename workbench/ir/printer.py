"""Print IR as Triton 3.6 prints it (custom op syntax, named SSA values, ``loc(#locN)``).

:func:`print_module` returns the text; :func:`print_module_with_map` also returns, for every
printed line, the :class:`~workbench.ir.core.Location` of the op on it (None for lines that are
not ops), which the side-by-side views use to colour IR lines by source line.
"""
from __future__ import annotations

import math
import struct

from .core import Block, Location, Operation, Value
from .types import FloatType, FunctionType, IntType, MemDescType, TensorType, Type

_AXIS = {0: "x", 1: "y", 2: "z"}

#: Triton's ``InputPrecision`` enum, in order (``ttng.warp_group_dot`` prints its number).
INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")


def format_float(value: float, t: Type) -> str:
    """MLIR's float literal: ``1.000000e+00``, or the hex bit pattern for inf/nan."""
    name = t.scalar.name if isinstance(t.scalar, FloatType) else "f32"
    if math.isfinite(value):
        return f"{value:.6e}"
    if name == "f64":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if name == "f16":
        import numpy as np
        return "0x%04X" % int(np.array(value, np.float16).view(np.uint16))
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if name == "bf16":
        return "0x%04X" % (bits >> 16)
    return "0x%08X" % bits


def format_attr(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v} : i32"
    if isinstance(v, float):
        return f"{format_float(v, FloatType('f32'))} : f32"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        if all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            return "array<i32" + (": " + ", ".join(str(x) for x in v) if v else "") + ">"
        return "[" + ", ".join(format_attr(x) for x in v) + "]"
    return str(v)


def _attr_key(k: str) -> str:
    return k if all(c.isalnum() or c in "_." for c in k) and not k[0].isdigit() else f'"{k}"'


def format_attr_dict(attrs: dict) -> str:
    return "{" + ", ".join(f"{_attr_key(k)} = {format_attr(v)}" for k, v in attrs.items()) + "}"


class _Namer:
    """Triton-style SSA names: the user's variable name, uniquified with ``_0``, ``_1``..."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.counts: dict[str, int] = {}
        self.next_anon = 0

    def _unique(self, base: str) -> str:
        if base not in self.used:
            self.used.add(base)
            return base
        while True:
            n = self.counts.get(base, 0)
            self.counts[base] = n + 1
            cand = f"{base}_{n}"
            if cand not in self.used:
                self.used.add(cand)
                return cand

    def name(self, v: Value) -> str:
        key = id(v)
        if key in self.names:
            return self.names[key]
        if v.name and v.name.isidentifier():
            n = self._unique(v.name)
        else:
            op = v.owner if isinstance(v.owner, Operation) else None
            if op is not None and op.name == "arith.constant" and not isinstance(v.type, TensorType):
                val = op.attributes["value"]
                if isinstance(v.type, IntType) and not isinstance(val, float):
                    if v.type.width == 1:
                        n = self._unique("true" if val else "false")
                    else:
                        s = str(int(val)).replace("-", "m")
                        n = self._unique(f"c{s}_i{v.type.width}")
                else:
                    n = self._unique("cst")
            elif op is not None and op.name == "arith.constant":
                n = self._unique("cst")
            else:
                while str(self.next_anon) in self.used:
                    self.next_anon += 1
                n = str(self.next_anon)
                self.used.add(n)
                self.next_anon += 1
        self.names[key] = n
        return n


class Printer:
    """Prints a module; see :func:`print_module`."""

    def __init__(self, locations: bool = True):
        self.locations = locations
        self.namer = _Namer()
        self.lines: list[str] = []
        self.line_locs: list[Location | None] = []
        self.loc_ids: dict[Location, int] = {}
        self.aliases: dict[object, str] = {}

    # helpers ---------------------------------------------------------------------------------
    def alias(self, enc) -> str:
        if enc in self.aliases:
            return self.aliases[enc]
        base = getattr(enc, "alias_name", None)
        if base is None:  # printed inline (slice, dot_op): nested parents still use aliases
            to_text = getattr(enc, "to_text", None)
            return to_text(self.alias) if to_text else str(enc)
        n = sum(1 for a in self.aliases.values() if a.rstrip("0123456789") == "#" + base)
        name = "#" + base + (str(n) if n else "")
        self.aliases[enc] = name
        return name

    def t(self, t: Type) -> str:
        if isinstance(t, (TensorType, MemDescType)):
            return t.to_text(self.alias)
        return str(t)

    def v(self, v: Value) -> str:
        return "%" + self.namer.name(v)

    def vs(self, vals) -> str:
        return ", ".join(self.v(x) for x in vals)

    def loc_ref(self, loc: Location) -> str:
        if loc is None or loc.file == "unknown":
            key = Location("unknown", 0, 0)
        else:
            key = loc
        if key not in self.loc_ids:
            self.loc_ids[key] = len(self.loc_ids) + 1
        return f"#loc{self.loc_ids[key]}"

    def emit(self, indent: int, text: str, loc: Location | None) -> None:
        if self.locations and loc is not None:
            text += f" loc({self.loc_ref(loc)})"
        self.lines.append("  " * indent + text)
        self.line_locs.append(loc if loc is not None and loc.file != "unknown" else None)

    # ops -------------------------------------------------------------------------------------
    def op(self, op: Operation, indent: int) -> None:
        name = op.name
        a = op.attributes
        res = (self.vs(op.results) + " = ") if op.results else ""
        if name == "tt.func":
            self.func(op, indent)
            return
        if name in ("scf.for", "scf.if", "scf.while"):
            getattr(self, "_" + name.split(".")[1])(op, indent, res)
            return
        if name in ("tt.reduce", "tt.scan"):
            self.generic_region_op(op, indent, res)
            return
        text = self.custom(op, res, a)
        self.emit(indent, text, op.loc)

    def custom(self, op: Operation, res: str, a: dict) -> str:
        name = op.name
        ops = op.operands
        rt = op.results[0].type if op.results else None
        if name == "arith.constant":
            val = a["value"]
            if isinstance(rt, TensorType):
                el = rt.element
                lit = format_float(float(val), el) if isinstance(el, FloatType) else (
                    ("true" if val else "false") if el == IntType(1) else str(int(val)))
                return f"{res}arith.constant dense<{lit}> : {self.t(rt)}"
            if isinstance(rt, FloatType):
                return f"{res}arith.constant {format_float(float(val), rt)} : {rt}"
            if rt == IntType(1):
                return f"{res}arith.constant {'true' if val else 'false'}"
            return f"{res}arith.constant {int(val)} : {rt}"
        if name in ("tt.get_program_id", "tt.get_num_programs"):
            return f"{res}{name} {_AXIS[a['axis']]} : {self.t(rt)}"
        if name == "tt.make_range":
            return f"{res}tt.make_range {{end = {a['end']} : i32, start = {a['start']} : i32}} : {self.t(rt)}"
        if name in ("arith.cmpi", "arith.cmpf"):
            return f"{res}{name} {a['predicate']}, {self.vs(ops)} : {self.t(ops[0].type)}"
        if name == "arith.select":
            return f"{res}arith.select {self.vs(ops)} : {self.t(ops[0].type)}, {self.t(rt)}"
        if name.startswith("arith.") and name[6:] in _CAST_NAMES:
            return f"{res}{name} {self.v(ops[0])} : {self.t(ops[0].type)} to {self.t(rt)}"
        if name in ("tt.splat", "tt.broadcast", "ttg.convert_layout", "tt.bitcast",
                    "tt.int_to_ptr", "tt.ptr_to_int", "tt.reshape", "tt.split", "tt.local_load",
                    "ttg.local_load", "tt.histogram"):
            extra = ""
            if name == "tt.reshape" and a.get("allow_reorder"):
                extra = " allow_reorder"
            outs = ", ".join(self.t(r.type) for r in op.results)
            return f"{res}{name} {self.vs(ops)}{extra} : {self.t(ops[0].type)} -> {outs}"
        if name == "tt.expand_dims":
            return f"{res}tt.expand_dims {self.v(ops[0])} {{axis = {a['axis']} : i32}} : {self.t(ops[0].type)} -> {self.t(rt)}"
        if name == "tt.trans":
            order = ", ".join(str(x) for x in a["order"])
            return f"{res}tt.trans {self.v(ops[0])} {{order = array<i32: {order}>}} : {self.t(ops[0].type)} -> {self.t(rt)}"
        if name == "tt.fp_to_fp":
            rnd = f", rounding = {a['rounding']}" if a.get("rounding") else ""
            return f"{res}tt.fp_to_fp {self.v(ops[0])}{rnd} : {self.t(ops[0].type)} -> {self.t(rt)}"
        if name == "tt.addptr":
            return f"{res}tt.addptr {self.vs(ops)} : {self.t(ops[0].type)}, {self.t(ops[1].type)}"
        if name in ("tt.load", "tt.store"):
            extra = _mem_attrs(a)
            return f"{res}{name} {self.vs(ops)}{extra} : {self.t(ops[0].type)}"
        if name == "tt.dot":
            prec = a.get("inputPrecision", "tf32")
            tail = f", inputPrecision = {prec}" if prec != "tf32" else ""
            return (f"{res}tt.dot {self.vs(ops)}{tail} : {self.t(ops[0].type)} * "
                    f"{self.t(ops[1].type)} -> {self.t(rt)}")
        if name == "ttng.warp_group_dot":
            # Triton prints the InputPrecision enum's number (tf32 = 0, tf32x3, ieee, ...)
            prec = INPUT_PRECISIONS.index(a.get("inputPrecision", "tf32") or "tf32")
            asy = "true" if a.get("isAsync") else "false"
            return (f"{res}ttng.warp_group_dot {self.vs(ops)} {{inputPrecision = {prec} : i32, "
                    f"isAsync = {asy}}} : {self.t(ops[0].type)} * {self.t(ops[1].type)} -> "
                    f"{self.t(rt)}")
        if name == "ttng.warp_group_dot_wait" and ops:
            return (f"{res}ttng.warp_group_dot_wait {self.vs(ops)} {{pendings = "
                    f"{int(a.get('pendings', 0))} : i32}} : "
                    f"{', '.join(self.t(o.type) for o in ops)}")
        if name in ("tt.join", "tt.cat"):
            return f"{res}{name} {self.vs(ops)} : {self.t(ops[0].type)} -> {self.t(rt)}"
        if name == "tt.atomic_rmw":
            return (f"{res}tt.atomic_rmw {a['atomic_rmw_op']}, {a.get('sem', 'acq_rel')}, "
                    f"{a.get('scope', 'gpu')}, {self.vs(ops)} : ({', '.join(self.t(o.type) for o in ops)}) -> {self.t(rt)}")
        if name == "tt.atomic_cas":
            return (f"{res}tt.atomic_cas {a.get('sem', 'acq_rel')}, {a.get('scope', 'gpu')}, "
                    f"{self.vs(ops)} : ({', '.join(self.t(o.type) for o in ops)}) -> {self.t(rt)}")
        if name == "tt.print":
            prefix = format_attr(a.get("prefix", ""))
            hexs = "true" if a.get("hex") else "false"
            sig = ", ".join(str(int(x)) for x in a.get("isSigned", ()))
            tys = ", ".join(self.t(o.type) for o in ops)
            body = f" {self.vs(ops)}" if ops else ""
            return f"tt.print {prefix} {{hex = {hexs}, isSigned = array<i32: {sig}>}}:{body}" + (f" : {tys}" if ops else "")
        if name == "tt.assert":
            return f"tt.assert {self.v(ops[0])}, {format_attr(a.get('message', ''))} : {self.t(ops[0].type)}"
        if name == "tt.extern_elementwise":
            tys = ", ".join(self.t(o.type) for o in ops)
            return (f"{res}tt.extern_elementwise {self.vs(ops)} {{libname = \"\", libpath = \"\", "
                    f"pure = true, symbol = \"{a['symbol']}\"}} : ({tys}) -> {self.t(rt)}")
        if name in ("tt.return", "scf.yield", "tt.reduce.return", "tt.scan.return"):
            if not ops:
                return name
            return f"{name} {self.vs(ops)} : {', '.join(self.t(o.type) for o in ops)}"
        if name == "scf.condition":
            rest = ops[1:]
            tail = f" {self.vs(rest)} : {', '.join(self.t(o.type) for o in rest)}" if rest else ""
            return f"scf.condition({self.v(ops[0])}){tail}"
        if name == "gpu.barrier":
            return "gpu.barrier"
        if name == "ttg.local_alloc":
            off = a.get("allocation.offset")
            attr = f" {{allocation.offset = {off} : i32}}" if off is not None else ""
            if ops:
                return f"{res}ttg.local_alloc {self.v(ops[0])}{attr} : ({self.t(ops[0].type)}) -> {self.t(rt)}"
            return f"{res}ttg.local_alloc{attr} : () -> {self.t(rt)}"
        if name == "ttg.local_store":
            return f"ttg.local_store {self.vs(ops)} : {self.t(ops[0].type)} -> {self.t(ops[1].type)}"
        if name == "ttg.local_dealloc":
            return f"ttg.local_dealloc {self.v(ops[0])} : {self.t(ops[0].type)}"
        if op.results and all(o.type == rt for o in ops) and len(op.results) == 1 and not a:
            # same-type elementwise ops: arith.addf %a, %b : tensor<...>
            return f"{res}{name} {self.vs(ops)} : {self.t(rt)}"
        return self.generic(op, res)

    def generic(self, op: Operation, res: str) -> str:
        props = f" <{format_attr_dict(op.attributes)}>" if op.attributes else ""
        ins = ", ".join(self.t(o.type) for o in op.operands)
        outs = ", ".join(self.t(r.type) for r in op.results)
        outs = outs if len(op.results) == 1 else f"({outs})"
        return f'{res}"{op.name}"({self.vs(op.operands)}){props} : ({ins}) -> {outs}'

    def block_header(self, block: Block, indent: int) -> None:
        args = ", ".join(f"{self.v(x)}: {self.t(x.type)}" for x in block.args)
        self.emit(indent, f"^bb0({args}):", None)

    def generic_region_op(self, op: Operation, indent: int, res: str) -> None:
        props = f" <{format_attr_dict(op.attributes)}>" if op.attributes else ""
        self.emit(indent, f'{res}"{op.name}"({self.vs(op.operands)}){props} ({{', None)
        block = op.regions[0].block
        self.block_header(block, indent)
        for inner in block.ops:
            self.op(inner, indent + 1)
        ins = ", ".join(self.t(o.type) for o in op.operands)
        outs = ", ".join(self.t(r.type) for r in op.results)
        outs = outs if len(op.results) == 1 else f"({outs})"
        self.emit(indent, f"}}) : ({ins}) -> {outs}", op.loc)

    def region_body(self, block: Block, indent: int) -> None:
        for inner in block.ops:
            self.op(inner, indent)

    def _for(self, op: Operation, indent: int, res: str) -> None:
        lb, ub, st, *inits = op.operands
        block = op.regions[0].block
        iv, *iters = block.args
        head = f"{res}scf.for {self.v(iv)} = {self.v(lb)} to {self.v(ub)} step {self.v(st)}"
        if inits:
            pairs = ", ".join(f"{self.v(b)} = {self.v(i)}" for b, i in zip(iters, inits))
            head += f" iter_args({pairs}) -> ({', '.join(self.t(r.type) for r in op.results)})"
        head += f" : {self.t(lb.type)} {{"
        self.emit(indent, head, None)
        self.region_body(block, indent + 1)
        self.emit(indent, "}" + (" {tt.num_stages = %d : i32}" % op.attributes["tt.num_stages"]
                                 if "tt.num_stages" in op.attributes else ""), op.loc)

    def _if(self, op: Operation, indent: int, res: str) -> None:
        types = f" -> ({', '.join(self.t(r.type) for r in op.results)})" if op.results else ""
        self.emit(indent, f"{res}scf.if {self.v(op.operands[0])}{types} {{", None)
        self.region_body(op.regions[0].block, indent + 1)
        els = op.regions[1].blocks
        if els and els[0].ops:
            self.emit(indent, "} else {", None)
            self.region_body(els[0], indent + 1)
        self.emit(indent, "}", op.loc)

    def _while(self, op: Operation, indent: int, res: str) -> None:
        before, after = op.regions[0].block, op.regions[1].block
        pairs = ", ".join(f"{self.v(b)} = {self.v(i)}" for b, i in zip(before.args, op.operands))
        ins = ", ".join(self.t(o.type) for o in op.operands)
        outs = ", ".join(self.t(r.type) for r in op.results)
        self.emit(indent, f"{res}scf.while ({pairs}) : ({ins}) -> ({outs}) {{", None)
        self.region_body(before, indent + 1)
        args = ", ".join(f"{self.v(x)}: {self.t(x.type)}" for x in after.args)
        self.emit(indent, "} do {", None)
        self.emit(indent, f"^bb0({args}):", None)
        self.region_body(after, indent + 1)
        self.emit(indent, "}", op.loc)

    def func(self, op: Operation, indent: int) -> None:
        a = op.attributes
        block = op.regions[0].block
        params = []
        arg_attrs = a.get("arg_attrs") or [{} for _ in block.args]
        for arg, attrs in zip(block.args, arg_attrs):
            s = f"{self.v(arg)}: {self.t(arg.type)}"
            if attrs:
                s += " " + format_attr_dict(attrs)
            params.append(s)
        vis = a.get("visibility", "public")
        ftype = a.get("function_type")
        rets = ""
        if isinstance(ftype, FunctionType) and ftype.results:
            rets = " -> " + ", ".join(self.t(t) for t in ftype.results)
        noinline = "true" if a.get("noinline") else "false"
        self.emit(indent, f"tt.func {vis} @{a['sym_name']}({', '.join(params)}){rets} "
                          f"attributes {{noinline = {noinline}}} {{", None)
        self.region_body(block, indent + 1)
        self.emit(indent, "}", op.loc)

    def module(self, m: Operation) -> None:
        attrs = m.attributes
        head = "module" + (f" attributes {format_attr_dict(attrs)}" if attrs else "") + " {"
        self.emit(0, head, None)
        for op in m.regions[0].block.ops:
            self.op(op, 1)
        self.emit(0, "}", None)


_CAST_NAMES = {"extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "extf",
               "truncf", "bitcast", "index_cast"}


def _mem_attrs(a: dict) -> str:
    parts = []
    if a.get("cache") and a["cache"] not in ("none", ""):
        parts.append(f"cacheModifier = {a['cache'].lstrip('.')}")
    if a.get("evict") and a["evict"] not in ("evict_normal", "normal", ""):
        parts.append(f"evictionPolicy = {a['evict']}")
    if a.get("isVolatile"):
        parts.append("isVolatile = true")
    return (" {" + ", ".join(parts) + "}") if parts else ""


def _loc_text(loc: Location) -> str:
    if loc.file == "unknown":
        return "loc(unknown)"
    return f'loc("{loc.file}":{loc.line}:{loc.col})'


def print_module_with_map(module: Operation, locations: bool = True):
    """Print ``module``; returns ``(text, line_locs)`` where ``line_locs[i]`` is the
    :class:`Location` of the op printed on line ``i`` (0-based) or None."""
    p = Printer(locations)
    p.module(module)
    body = p.lines
    locs = p.line_locs
    header = []
    for enc, alias in p.aliases.items():
        text = enc.to_text(p.alias) if hasattr(enc, "to_text") else str(enc)
        header.append(f"{alias} = {text}")
    trailer = []
    if locations:
        items = list(p.loc_ids.items())
        i = 0
        while i < len(items):
            loc, n = items[i]
            if loc.caller is not None:
                # an op inlined from a @jit helper: Triton's loc(callsite(#callee at #caller))
                callee = p.loc_ref(Location(loc.file, loc.line, loc.col, loc.name))
                caller = p.loc_ref(loc.caller)
                base = f"loc(callsite({callee} at {caller}))"
                items = list(p.loc_ids.items())
            else:
                base = _loc_text(Location(loc.file, loc.line, loc.col)) \
                    if loc.file != "unknown" else "loc(unknown)"
                if loc.name:
                    base = f'loc("{loc.name}"({base[4:-1]}))'
            trailer.append(f"#loc{n} = {base}")
            i += 1
    text_lines = header + body + trailer
    line_locs = [None] * len(header) + locs + [None] * len(trailer)
    return "\n".join(text_lines) + "\n", line_locs


def print_module(module: Operation, locations: bool = True) -> str:
    """The text of ``module`` as Triton 3.6 prints it (with ``loc`` references when
    ``locations``)."""
    return print_module_with_map(module, locations)[0]


def print_op(op: Operation) -> str:
    """One op (and its regions) without locations, for error messages and tests."""
    p = Printer(False)
    p.op(op, 0)
    return "\n".join(p.lines)
