"""Print IR as Triton 3.6 prints it (custom op syntax, named SSA values, ``loc(#locN)``).

:func:`print_module` returns the text; :func:`print_module_with_map` also returns, for every
printed line, the :class:`~workbench.ir.core.Location` of the op on it (None for lines that are
not ops), which the side-by-side views use to colour IR lines by source line.
"""
from __future__ import annotations

from .assembly import attr_dict_text, print_custom
from .attrs import format_attr_dict
from .core import Block, Location, Operation, Value
from .dialects import OPS
from .types import IntType, MemDescType, TensorDescType, TensorType, Type

#: the alias Triton prints for shared memory, used by every ``!ttg.memdesc`` type
SMEM_ALIAS = ("#smem", "#ttg.shared_memory")


class _Namer:
    """Triton-style SSA names, given as MLIR's ``SSANameState`` (``AsmPrinter.cpp``) gives
    them: a value's name is the user's variable name (its name location), a constant's
    ``c0_i32``/``cst``/``true``, an unnamed entry-block argument ``arg<N>``, else a number.
    A name already in use gets ``_<k>`` from one conflict counter shared by all names
    (``%x``, ``%z_0``, ``%x_1``). :meth:`number` walks a region's own values first, then its
    ops' regions, each starting from the counters and names its parent region left, so
    sibling regions (two loops, two functions) reuse the same names and numbers, and every
    ``tt.func`` starts again at ``%0``. Values outside a numbered op are named on first use."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.conflict = 0
        self.next_anon = 0
        self.next_arg = 0

    def _unique(self, base: str) -> str:
        if base not in self.used:
            self.used.add(base)
            return base
        while True:
            cand = f"{base}_{self.conflict}"
            self.conflict += 1
            if cand not in self.used:
                self.used.add(cand)
                return cand

    def _anonymous(self) -> str:
        """The next number, as MLIR names values without a name (``%0``, ``%1``...)."""
        n = str(self.next_anon)
        self.next_anon += 1
        return n

    def group(self, results) -> str:
        """The name of a result group (the first named result's name, else a number); each
        result is then named ``<group>#<index>``."""
        first = self.names.get(id(results[0]))
        if first is not None and first.endswith("#0"):
            return first[:-2]
        hint = next((r.name for r in results if r.name and r.name.isidentifier()), None)
        if hint is not None:
            base = self._unique(hint)
        else:
            base = self._anonymous()
        for i, r in enumerate(results):
            self.names[id(r)] = f"{base}#{i}"
        return base

    @staticmethod
    def _preferred(v: Value) -> str | None:
        """The name ``v`` asks for, or None for a number."""
        if v.name and v.name.isidentifier():
            return v.name
        op = v.owner if isinstance(v.owner, Operation) else None
        if op is None or op.name != "arith.constant":
            return None
        val = op.attributes["value"]
        if isinstance(v.type, IntType) and not isinstance(val, float):
            if v.type.width == 1:
                return "true" if val else "false"
            return "c" + str(int(val)) + f"_i{v.type.width}"
        return "cst"

    def name(self, v: Value) -> str:
        key = id(v)
        if key in self.names:
            return self.names[key]
        base = self._preferred(v)
        n = self._unique(base) if base is not None else self._anonymous()
        self.names[key] = n
        return n

    def _number_results(self, op: Operation) -> None:
        spec = OPS.get(op.name)
        if len(op.results) > 1 and not (spec and "named_results" in spec.traits):
            self.group(op.results)
        else:
            for r in op.results:
                self.name(r)

    def number(self, op: Operation) -> None:
        """Name every value under ``op`` in MLIR's order (class docstring)."""
        self._number_results(op)
        state = (self.next_anon, self.next_arg, self.conflict, set(self.used))
        for region in op.regions:
            self._number_region(region, state)

    def _number_region(self, region, state) -> None:
        self.next_anon, self.next_arg, self.conflict, used = state
        self.used = set(used)
        for bi, block in enumerate(region.blocks):
            for arg in block.args:
                if id(arg) in self.names:
                    continue
                base = self._preferred(arg)
                if bi == 0:  # entry arguments take MLIR's numbers, named ones too
                    if base is None:
                        base = f"arg{self.next_arg}"
                    self.next_arg += 1
                self.names[id(arg)] = self._unique(base) if base else self._anonymous()
            for inner in block.ops:
                self._number_results(inner)
        inner_state = (self.next_anon, self.next_arg, self.conflict, set(self.used))
        for block in region.blocks:
            for inner in block.ops:
                for r in inner.regions:
                    self._number_region(r, inner_state)


class Printer:
    """Prints a module; see :func:`print_module`."""

    def __init__(self, locations: bool = True):
        self.locations = locations
        self.namer = _Namer()
        self.lines: list[str] = []
        self.line_locs: list[Location | None] = []
        self.loc_ids: dict[Location, int] = {}
        self.aliases: dict[object, str] = {}
        self.uses_smem = False

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
        if isinstance(t, MemDescType):
            self.uses_smem = True
        if isinstance(t, (TensorType, MemDescType, TensorDescType)):
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
    def results(self, op: Operation) -> str:
        """``%a = `` before an op with one result, MLIR's result group ``%a:3 = `` (its results
        then read ``%a#0``, ``%a#1``, ``%a#2``) before an op with several (``%a, %b = `` when its
        spec has the ``named_results`` trait, as Triton prints ``tt.split``), else ``""``."""
        spec = OPS.get(op.name)
        if len(op.results) > 1 and not (spec and "named_results" in spec.traits):
            return f"%{self.namer.group(op.results)}:{len(op.results)} = "
        return (self.vs(op.results) + " = ") if op.results else ""

    def attr_dict_text(self, op: Operation, used=()) -> str:
        """`` {...}`` of ``op``'s attributes (elided ones left out), or ``""``."""
        return attr_dict_text(OPS.get(op.name), op.attributes, set(used))

    def op(self, op: Operation, indent: int) -> None:
        """Print ``op`` (and its regions) by its spec: a custom printer or its format; ops
        without a spec print in MLIR's generic form."""
        spec = OPS.get(op.name)
        if spec is not None and spec.custom is not None:
            spec.custom.print(self, op, indent)
        elif spec is not None and spec.parsed_format:
            self.emit(indent, self.results(op) + print_custom(self, op, spec), op.loc)
        else:
            self.emit(indent, self.generic(op, self.results(op)), op.loc)

    def generic(self, op: Operation, res: str) -> str:
        props = f" <{format_attr_dict(op.attributes)}>" if op.attributes else ""
        ins = ", ".join(self.t(o.type) for o in op.operands)
        outs = ", ".join(self.t(r.type) for r in op.results)
        outs = outs if len(op.results) == 1 else f"({outs})"
        return f'{res}"{op.name}"({self.vs(op.operands)}){props} : ({ins}) -> {outs}'

    def block_header(self, block: Block, indent: int) -> None:
        args = ", ".join(f"{self.v(x)}: {self.t(x.type)}" for x in block.args)
        self.emit(indent, f"^bb0({args}):", None)

    def region_body(self, block: Block, indent: int, implicit_yield: bool = False) -> None:
        """Print the ops of ``block``; with ``implicit_yield``, not a last ``scf.yield`` that
        yields nothing (MLIR's ``scf.for`` and ``scf.if`` printers leave it out)."""
        ops = block.ops
        if implicit_yield and ops and ops[-1].name == "scf.yield" and not ops[-1].operands:
            ops = ops[:-1]
        for inner in ops:
            self.op(inner, indent)


def _loc_text(loc: Location) -> str:
    if loc.file == "unknown":
        return "loc(unknown)"
    return f'loc("{loc.file}":{loc.line}:{loc.col})'


def print_module_with_map(module: Operation, locations: bool = True):
    """Print ``module``; returns ``(text, line_locs)`` where ``line_locs[i]`` is the
    :class:`Location` of the op printed on line ``i`` (0-based) or None."""
    p = Printer(locations)
    p.namer.number(module)
    p.op(module, 0)
    body = p.lines
    locs = p.line_locs
    header = []
    for enc, alias in p.aliases.items():
        text = enc.to_text(p.alias) if hasattr(enc, "to_text") else str(enc)
        header.append(f"{alias} = {text}")
    if p.uses_smem:
        header.append(" = ".join(SMEM_ALIAS))
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
