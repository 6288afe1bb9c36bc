"""Facts read from printed ttgir and PTX text, the same way for our output and Triton's: the
layout definitions, the layout each memory/dot/reduction/shape op carries, the number of
``ttg.convert_layout`` ops, the shared bytes, the barriers and the global-memory vector widths.

Everything here works on text (Triton 3.6's printed MLIR and PTX), so the two compilers are
compared on what a learner reads. Layout aliases (``#blocked1``) are replaced by their
definitions, since the two compilers number their aliases differently.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

#: ops whose layout is compared, by the name printed in ttgir (custom or generic form)
TRACKED_OPS = ("tt.load", "tt.store", "tt.dot", "ttng.warp_group_dot", "tt.reduce", "tt.scan",
               "tt.trans", "tt.join", "tt.split", "tt.reshape", "tt.broadcast",
               "tt.expand_dims", "tt.gather", "tt.atomic_rmw", "tt.atomic_cas",
               "tt.histogram", "tt.cat")

_ALIAS_DEF = re.compile(r"^(#[A-Za-z_][\w.$-]*)\s*=\s*(#.*)$")
_ALIAS_USE = re.compile(r"#[A-Za-z_][\w.$-]*")
_OP_NAME = re.compile(r"^\s*(?:%[\w#:, %-]+=\s*)?\"?([a-z_]+\.[a-z_.]+)\"?[ (<]")
_SHARED = re.compile(r"ttg\.shared\s*=\s*(\d+)\s*:\s*i32")
_PTX_MEM = re.compile(r"\b(ld|st)\.global((?:\.[\w:]+)*)")
_PTX_BAR = re.compile(r"\b(?:bar\.sync|barrier\.sync(?:\.aligned)?)\b")


@dataclass
class IRFacts:
    """What one compiler decided for one kernel.

    ``layouts``: the layout definitions (alias bodies, aliases expanded), sorted;
    ``op_layouts``: per tracked op name, the encodings on its operand/result types in program
    order (one tuple per op); ``converts``: number of ``ttg.convert_layout``; ``shared``:
    bytes from the module's ``ttg.shared`` attribute (None when absent); ``ttgir_barriers``:
    ``gpu.barrier`` ops in ttgir; ``ptx_barriers``: ``bar.sync``/``barrier.sync`` in PTX;
    ``vectors``: Counter of ``"ld.global.v4.b32"``-style keys (cache hints dropped)."""

    layouts: list = field(default_factory=list)
    op_layouts: dict = field(default_factory=dict)
    converts: int = 0
    shared: int | None = None
    ttgir_barriers: int = 0
    ptx_barriers: int = 0
    vectors: Counter = field(default_factory=Counter)


def alias_table(ttgir: str) -> dict:
    """``{"#blocked1": "#ttg.blocked<{...}>", ...}`` from the alias lines at the top of a
    ttgir module, each body with the aliases it uses expanded."""
    raw = {}
    for line in ttgir.splitlines():
        m = _ALIAS_DEF.match(line.strip())
        if m and not m.group(2).startswith("#loc") and not m.group(1).startswith("#loc"):
            raw[m.group(1)] = m.group(2).strip()
    out: dict = {}

    def expand(name: str, depth: int = 0) -> str:
        if name in out:
            return out[name]
        body = raw[name]
        if depth < 8:
            body = _ALIAS_USE.sub(lambda u: expand(u.group(0), depth + 1)
                                  if u.group(0) in raw else u.group(0), body)
        out[name] = body
        return body

    for name in raw:
        expand(name)
    return out


def expand_aliases(text: str, table: dict) -> str:
    """``text`` with every alias of ``table`` replaced by its definition."""
    return _ALIAS_USE.sub(lambda u: table.get(u.group(0), u.group(0)), text)


def tensor_encodings(text: str) -> list:
    """The encodings of the ``tensor<...>`` types in ``text``, in order (the part after the
    last top-level comma inside the angle brackets); tensors without one give ``""``."""
    encs = []
    start = text.find("tensor<")
    while start >= 0:
        i, depth = start + len("tensor<"), 1
        top_commas = []
        while i < len(text) and depth:
            c = text[i]
            if c in "<{[(":
                depth += 1
            elif c in ">}])":
                depth -= 1
            elif c == "," and depth == 1:
                top_commas.append(i)
            i += 1
        body_end = i - 1
        encs.append(text[top_commas[-1] + 1:body_end].strip() if top_commas else "")
        start = text.find("tensor<", i)
    return encs


def _op_type_text(lines: list, i: int) -> str:
    """The text that holds op ``i``'s types: its own line, or for a generic op with a region
    (``"tt.reduce"(...) ({``) the ``}) : (...) -> ...`` line that closes it."""
    line = lines[i]
    if not line.rstrip().endswith("({"):
        return line
    indent = len(line) - len(line.lstrip())
    for j in range(i + 1, len(lines)):
        other = lines[j]
        if other.lstrip().startswith("})") and len(other) - len(other.lstrip()) == indent:
            return other
    return line


def op_layouts(ttgir: str, table: dict | None = None) -> dict:
    """``{op name: [tuple of encodings, ...]}`` for the ops of :data:`TRACKED_OPS`, in program
    order, aliases expanded. Ops inside a reduce/scan combiner region carry scalars and
    are skipped."""
    table = alias_table(ttgir) if table is None else table
    lines = ttgir.splitlines()
    out: dict = {}
    for i, line in enumerate(lines):
        m = _OP_NAME.match(line)
        if not m or m.group(1) not in TRACKED_OPS:
            continue
        encs = tuple(expand_aliases(e, table) for e in tensor_encodings(_op_type_text(lines, i)))
        if not encs:
            continue  # a scalar op (a load of one element)
        out.setdefault(m.group(1), []).append(encs)
    return out


def ptx_vectors(ptx: str) -> Counter:
    """Counter of global loads/stores by ``ld|st.global[.vN].<type>``, other qualifiers
    (cache and eviction hints, ``.nc``) dropped. Source: PTX ISA 9.7.9.8 (ld) / 9.7.9.10 (st)."""
    counts: Counter = Counter()
    for m in _PTX_MEM.finditer(ptx):
        parts = [p for p in m.group(2).split(".") if p]
        vec = next((p for p in parts if re.fullmatch(r"v\d", p)), "v1")
        typ = next((p for p in reversed(parts) if re.fullmatch(r"[bfsu]\d+", p)), "?")
        counts[f"{m.group(1)}.global.{vec}.{typ}"] += 1
    return counts


def facts_of(ttgir: str, ptx: str = "") -> IRFacts:
    """All of :class:`IRFacts` from one compiler's ttgir and (optionally) PTX text."""
    table = alias_table(ttgir)
    m = _SHARED.search(ttgir)
    return IRFacts(
        layouts=sorted(set(table.values()) - {v for v in table.values() if v.startswith("#loc")}),
        op_layouts=op_layouts(ttgir, table),
        converts=len(re.findall(r"\bttg\.convert_layout\b", ttgir)),
        shared=int(m.group(1)) if m else None,
        ttgir_barriers=len(re.findall(r"\bgpu\.barrier\b", ttgir)),
        ptx_barriers=len(_PTX_BAR.findall(ptx)),
        vectors=ptx_vectors(ptx),
    )
