"""The layouts of a compiled kernel's values, read from its TTGIR text.

:func:`value_layouts` lists every SSA value of a ``ttgir`` module whose type carries a layout
(``tensor<...x..., #enc>`` register values and ``!ttg.memdesc<..., #shared, ...>`` shared-memory
buffers) with its type, its parsed encoding and the source location of the op that defines it.
:func:`draw_value` draws one of them: a register value with
:func:`workbench.viz.layout_view.layout_figure`, a shared buffer with
:func:`workbench.viz.bank_view.banks_figure` for the register layout that reads or writes it.

The text is read with regular expressions over Triton's printed form (ours and Triton 3.6's:
alias lines ``#blocked = #ttg.blocked<...>``, ``#locN = loc("file":line:col)``, results
``%x`` / ``%x:9``, generic ops with regions closing in ``}) : (...) -> T``), so a ttgir dump
copied from real Triton works as well as ours. These functions back ``CompiledKernel.layouts()``.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from workbench.ir.core import Location
from workbench.layouts import Encoding, LayoutError, parse, parse_aliases

_RESULT = re.compile(r"^\s*(%[\w$.-]+)(?::(\d+))?\s*=\s*(.*)$")
_LOC_DEF = re.compile(r"^\s*(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_VALUE = re.compile(r"%[\w$.-]+")
_ITER_ARGS = re.compile(r"iter_args\((.*?)\)\s*->")
#: MLIR element type -> Triton short dtype name (for the bank analysis).
_DTYPES = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "i1": "i1", "i8": "i8",
           "i16": "i16", "i32": "i32", "i64": "i64", "f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5"}


class ValueLayout(NamedTuple):
    """One value of a ttgir module with a layout.

    Fields: ``name`` (``"%x"``; results of a multi-result op are ``"%x#0"``...), ``type`` (the
    value's type text, e.g. ``"tensor<1024xf32, #blocked>"``), ``encoding`` (the parsed
    :class:`~workbench.layouts.Encoding`), ``loc`` (the source
    :class:`~workbench.ir.core.Location` of the defining op, or None when the text has none).
    """

    name: str
    type: str
    encoding: Encoding
    loc: Optional[Location]

    @property
    def shape(self) -> tuple[int, ...]:
        """The tensor (or buffer) shape from the type text."""
        return _split_type(self.type)[1]

    @property
    def element(self) -> str:
        """The element type text (``f32``, ``!tt.ptr<f16>``...)."""
        return _split_type(self.type)[2]


@dataclass
class _Op:
    name: str                 # op name
    results: list[str]        # value names
    operands: list[str]
    line: int                 # 0-based line index in the text
    types: list[str] = field(default_factory=list)
    loc_text: Optional[str] = None  # inner text of its loc(...): on its line or region's end


# ---------------------------------------------------------------------------------- text helpers
def _top_level_split(text: str, sep: str) -> list[str]:
    """Split at ``sep`` outside <>, (), [], {} and quotes."""
    parts, depth, quote, start, i = [], 0, False, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            quote = not quote
        elif not quote:
            if ch in "<([{":
                depth += 1
            elif ch in ">)]}" and not (ch == ">" and text[i - 1:i] == "-"):
                depth -= 1
            elif depth == 0 and text.startswith(sep, i):
                parts.append(text[start:i])
                i += len(sep)
                start = i
                continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _strip_loc(body: str) -> tuple[str, Optional[str]]:
    """Remove a trailing ``loc(...)``; returns (body, the loc's inner text or None)."""
    i = body.rfind(" loc(")
    if i < 0 or not body.rstrip().endswith(")"):
        return body, None
    inner = body[i + 5:].rstrip()[:-1]
    if inner.count("(") != inner.count(")"):
        return body, None
    return body[:i].rstrip(), inner


def _split_type(t: str) -> tuple[str, tuple[int, ...], str, Optional[str]]:
    """``tensor<4x8xf32, #blocked>`` -> ("tensor", (4, 8), "f32", "#blocked")."""
    m = re.match(r"^(tensor|!ttg\.memdesc)<(.*)>$", t.strip())
    if not m:
        return "", (), t, None
    parts = _top_level_split(m.group(2), ",")
    dims = []
    rest = parts[0]
    while True:
        d = re.match(r"^(\d+)x", rest)
        if not d:
            break
        dims.append(int(d.group(1)))
        rest = rest[d.end():]
    enc = parts[1] if len(parts) > 1 and parts[1].startswith("#") else None
    return m.group(1), tuple(dims), rest, enc


def _result_types(op: str, type_part: str) -> list[str]:
    """The result types of an op from the text after its top-level ``:``."""
    arrow = _top_level_split(type_part, "->")
    if len(arrow) > 1:
        out = arrow[-1].rstrip("{").strip()
        if out.startswith("(") and out.endswith(")"):
            return _top_level_split(out[1:-1], ",")
        return [out]
    cast = _top_level_split(type_part, " to ")  # casts: "T1 to T2"
    if len(cast) > 1:
        return [cast[-1]]
    types = _top_level_split(type_part, ",")
    if op == "arith.select":
        return [types[-1]]
    first = types[0]
    if op in ("arith.cmpi", "arith.cmpf"):
        kind, shape, _, enc = _split_type(first)
        if kind == "tensor":
            dims = "".join(f"{d}x" for d in shape)
            return [f"tensor<{dims}i1" + (f", {enc}>" if enc else ">")]
    if op == "tt.load":
        m = re.match(r"^tensor<((?:\d+x)*)!tt\.ptr<(.*?)>(.*)>$", first)
        if m:
            return [f"tensor<{m.group(1)}{m.group(2)}{m.group(3)}>"]
    return [first]


def _resolve_locs(lines: list[str]):
    """A function ``resolve(loc inner text) -> Location | None`` over the ``#locN`` lines."""
    raw = {}
    for line in lines:
        m = _LOC_DEF.match(line)
        if m:
            raw[m.group(1)] = m.group(2)
    cache: dict[str, Optional[Location]] = {}

    def resolve(inner: str, depth: int = 0) -> Optional[Location]:
        inner = inner.strip()
        if depth > 20:
            return None
        m = re.match(r'^"([^"]*)":(\d+):(\d+)$', inner)
        if m:
            return Location(m.group(1), int(m.group(2)), int(m.group(3)))
        m = re.match(r"^(#loc\d*)$", inner)
        if m:
            key = m.group(1)
            if key not in cache:
                cache[key] = resolve(raw[key], depth + 1) if key in raw else None
            return cache[key]
        m = re.match(r'^"([^"]*)"\((.*)\)$', inner)  # a named location: "x"(#loc9)
        if m:
            base = resolve(m.group(2), depth + 1)
            return Location(base.file, base.line, base.col, m.group(1)) if base else None
        m = re.match(r"^callsite\((.*) at (.*)\)$", inner)
        if m:  # the user's line is the call site
            return resolve(m.group(2), depth + 1) or resolve(m.group(1), depth + 1)
        return None

    return resolve


def _scan(text: str) -> list[_Op]:
    """Every op line with results, its result names, operands and result types."""
    ops: list[_Op] = []
    pending: list[_Op] = []
    for i, line in enumerate(text.splitlines()):
        body, loc_text = _strip_loc(line)
        close = re.match(r"^\s*\}\)\s*:\s*(.*)$", body)
        if close and pending:
            op = pending.pop()
            op.types = _result_types(op.name, close.group(1))
            op.loc_text = loc_text
            continue
        m = _RESULT.match(body)
        if not m:
            continue
        name, count, rest = m.group(1), m.group(2), m.group(3)
        op_name = rest.split("(")[0].split()[0].strip('"') if rest.strip() else ""
        results = [f"{name}#{k}" for k in range(int(count))] if count else [name]
        pieces = _top_level_split(rest, " : ")
        op = _Op(op_name, results, _VALUE.findall(pieces[0]), i, loc_text=loc_text)
        ops.append(op)
        if rest.rstrip().endswith("({"):
            pending.append(op)
        elif rest.rstrip().endswith("{"):  # scf.for / scf.if / scf.while: "-> (T...) [: i32] {"
            arrow = _top_level_split(rest.rstrip()[:-1], "->")
            if len(arrow) > 1:
                op.types = _result_types(op_name, "-> " + _top_level_split(arrow[-1], " : ")[0])
        elif len(pieces) > 1:
            op.types = _result_types(op_name, " : ".join(pieces[1:]))
        if rest.rstrip().endswith("{") and op.types:
            it = _ITER_ARGS.search(rest)
            if it and len(op.types) == len(op.results):  # loop-carried block args: same types
                args = [a.split("=")[0].strip() for a in _top_level_split(it.group(1), ",")]
                if len(args) == len(op.types):
                    ops.append(_Op("iter_arg", args, [], i, list(op.types)))
    return ops


# ---------------------------------------------------------------------------------- public API
def value_layouts(ttgir_text: str, line_locs=None) -> list[ValueLayout]:
    """Every value of a ttgir module whose type has a layout, in textual order.

    Args:
        ttgir_text: a ttgir module as printed by the workbench (``compiled.asm["ttgir"]``) or by
            Triton (``MLIR_ENABLE_DUMP`` / ``kernel.asm["ttgir"]``).
        line_locs: optional list with one :class:`Location` or None per line of the text
            (``compiled.line_maps["ttgir"]``); used in preference to the ``loc(...)`` text.
    Returns: a list of :class:`ValueLayout` ``(name, type, encoding, loc)``; tensors without
        an encoding and scalars are left out; loop-carried ``iter_args`` are listed with their
        loop's types.
    Raises: LayoutError when an alias or inline layout in the text cannot be parsed.
    """
    aliases = parse_aliases(ttgir_text)
    lines = ttgir_text.splitlines()
    resolve = _resolve_locs(lines)
    out: list[ValueLayout] = []
    for op in _scan(ttgir_text):
        loc = None
        if line_locs is not None and op.line < len(line_locs):
            loc = line_locs[op.line]
        if loc is None and op.loc_text:
            loc = resolve(op.loc_text)
        for name, t in zip(op.results, op.types, strict=False):
            kind, _, _, enc_text = _split_type(t)
            if not kind or enc_text is None:
                continue
            out.append(ValueLayout(name, t, parse(enc_text, aliases), loc))
    return out


def _text_of(compiled) -> tuple[str, Optional[list]]:
    if isinstance(compiled, str):
        return compiled, None
    asm = getattr(compiled, "asm", None)
    if not asm or "ttgir" not in asm:
        target = getattr(compiled, "target", "?")
        raise LayoutError(f"this kernel has no ttgir stage (target {target}): layouts exist "
                          f"only for GPU targets; compile with target='cuda:80' or 'cuda:90'")
    maps = getattr(compiled, "line_maps", None) or {}
    return asm["ttgir"], maps.get("ttgir")


def find_value(compiled, name: str) -> ValueLayout:
    """The :class:`ValueLayout` of a value of a compiled kernel or ttgir text.

    ``"x"`` and ``"%x"`` name the SSA value ``%x``. When ``%x`` has no layout (a scalar, e.g.
    ``offs = pid * BLOCK + tl.arange(...)`` prints a scalar ``%offs`` then tiles ``%offs_0``,
    ``%offs_1``...), the last value of that family with a layout is taken: the tile the
    kernel's variable ends up holding. Raises LayoutError naming the values that exist when
    there is no such value."""
    text, locs = _text_of(compiled)
    values = value_layouts(text, locs)
    key = name if name.startswith("%") else "%" + name
    for v in values:
        if v.name == key:
            return v
    family = re.compile(re.escape(key) + r"(_\d+)?")
    matches = [v for v in values if family.fullmatch(v.name)]
    if matches:
        return matches[-1]
    names = ", ".join(v.name for v in values[:40]) + (" ..." if len(values) > 40 else "")
    raise LayoutError(f"no value {key} with a layout in this ttgir; values with layouts: {names}")


def shared_accesses(ttgir_text: str, name: str) -> list[tuple[str, ValueLayout]]:
    """The register values that read or write shared buffer ``name`` (or a view of it made by
    ``ttg.memdesc_index`` / ``ttg.memdesc_subview``), in textual order, as ``(op name, value)``:
    reads are ``ttg.local_load`` results; writes the sources of ``ttg.local_alloc``,
    ``ttg.local_store`` and ``ttg.async_copy_global_to_local`` (a pointer tensor, whose layout
    is the one each thread copies with)."""
    ops = _scan(ttgir_text)
    by_name = {v.name: v for v in value_layouts(ttgir_text)}
    views = {name}
    for op in ops:
        if op.name.startswith("ttg.memdesc") and op.operands and op.operands[0] in views:
            views.update(op.results)
    out = []
    for op in ops:
        if op.name == "ttg.local_load" and op.operands and op.operands[0] in views:
            found = by_name.get(op.results[0])
        elif op.name == "ttg.local_alloc" and op.results[0] in views and op.operands:
            found = by_name.get(op.operands[0])
        elif (op.name in ("ttg.local_store", "ttg.async_copy_global_to_local")
              and len(op.operands) > 1 and op.operands[1] in views):
            found = by_name.get(op.operands[0])
        else:
            continue
        if found is not None and found.encoding.distributed:
            out.append((op.name, found))
    return out


def draw_value(compiled, name: str, warp: int | None = None, thread: int | None = None,
               per_thread: bool = False, access: int = 0, vector_bytes="auto"):
    """Draw the layout of value ``name`` of a compiled kernel (or of a ttgir text).

    A register value (``tensor<..., #enc>``) is drawn by ``layout_picture(enc, shape, warp,
    thread)`` (SVG; ``layout_figure`` for ``per_thread``); a shared buffer
    (``!ttg.memdesc``) by ``banks_picture`` for the
    register layout of its ``access``-th read or write (see :func:`shared_accesses`), with the
    element type as dtype and ``vector_bytes`` as :func:`workbench.layouts.bank_conflicts`
    (default ``"auto"``: the widest contiguous vector, as the generated code moves it).
    Returns: a :class:`~workbench.viz.layout_svg.LayoutView` or
        :class:`~workbench.viz.bank_view.BanksView` (a matplotlib Figure for ``per_thread``);
        ``.workbench_value`` is the :class:`ValueLayout`; for a shared buffer
        ``.workbench_access`` is the ``(op name, value)`` drawn.
    Raises: LayoutError for an unknown name, a kernel without ttgir, or a shared buffer that no
        register value reads or writes; IndexError for ``access`` out of range.
    """
    v = find_value(compiled, name)
    fig: Any
    if v.encoding.distributed and per_thread:
        from .layout_view import layout_figure
        fig = layout_figure(v.encoding, v.shape, warp=warp, thread=thread, per_thread=True)
    elif v.encoding.distributed:
        from .layout_svg import layout_picture
        fig = layout_picture(v.encoding, v.shape, warp=warp, thread=thread)
    else:
        from .bank_view import banks_picture
        text, _ = _text_of(compiled)
        found = shared_accesses(text, v.name)
        if not found:
            raise LayoutError(f"no register value reads or writes shared buffer {v.name}: "
                              f"there is no access to draw the banks of")
        if not 0 <= access < len(found):
            raise IndexError(f"access = {access} is outside 0..{len(found) - 1} (the reads and "
                             f"writes of {v.name})")
        op_name, acc = found[access]
        dtype = _DTYPES.get(v.element, v.element)
        fig = banks_picture(v.encoding, acc.encoding, acc.shape, dtype, vector_bytes=vector_bytes)
        fig.workbench_access = (op_name, acc)
    fig.workbench_value = v
    return fig


class LayoutTable(list):
    """A list of :class:`ValueLayout` that shows as an HTML table in Jupyter and draws its
    values: ``table.draw("x")``. Returned by ``CompiledKernel.layouts()``."""

    def __init__(self, values, source=None):
        super().__init__(values)
        self.source = source

    def draw(self, name: str, **kwargs):
        """:func:`draw_value` for value ``name`` of this table's kernel."""
        return draw_value(self.source if self.source is not None else "", name, **kwargs)

    def _repr_html_(self) -> str:
        from .ir_lines import short_place
        rows = []
        for v in self:
            loc = short_place(v.loc.file, v.loc.line) if v.loc else ""
            rows.append(f"<tr><td><code>{html.escape(v.name)}</code></td>"
                        f"<td><code>{html.escape(v.type)}</code></td>"
                        f"<td><code>{html.escape(str(v.encoding))}</code></td>"
                        f"<td>{html.escape(loc)}</td></tr>")
        from .ir_html import NO_MATHS
        return (f'<table class="{NO_MATHS}" data-wb-view="layouts"><tr><th>value</th>'
                '<th>type</th><th>layout</th>'
                "<th>source</th></tr>" + "".join(rows) + "</table>")


def layouts(compiled) -> LayoutTable:
    """``compiled.layouts()``: the :class:`LayoutTable` of a compiled kernel (or ttgir text)."""
    text, locs = _text_of(compiled)
    return LayoutTable(value_layouts(text, locs), compiled)


__all__ = ["ValueLayout", "value_layouts", "find_value", "draw_value", "shared_accesses",
           "LayoutTable", "layouts"]
