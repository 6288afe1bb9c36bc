"""Lesson 5's comparison of shared layouts: the buffer a ``ttg.convert_layout`` goes through,
laid out three ways, with each access's wavefronts and bank-conflict degree.

* ``plain``: the tile as it is, no swizzle and no padding (CUDA's ``__shared__ float
  t[64][64]`` read down its columns), ``#ttg.swizzled_shared<{vec = 1, perPhase = 1,
  maxPhase = 1, order}>``;
* ``padded``: one 4-byte word of padding after every line of the buffer (CUDA's
  ``t[64][65]``); the padding breaks 16-byte alignment, so each lane moves 4 bytes;
* ``swizzled``: the conversion's planned buffer (Triton 3.6's ``optimalSwizzling``, which the
  CUDA backend emits), rebuilt from its record by :func:`conversion_buffer`.

Every figure comes from :func:`workbench.layouts.bank_conflicts` (the analysis code generation
records); the access layouts are the ones the compiler recorded for the conversion.
:func:`triton_ttgir` compiles the same kernel with real Triton 3.6 (for cuda:90, no GPU
needed); :func:`shared_layouts_in` and :func:`shared_reads_in` read its shared buffers and
apply the same bank analysis to its reads of them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..layouts import LinearLayout, SwizzledSharedLayout, bank_conflicts
from ..layouts.banks import PaddedRowMajor, dtype_bytes
from ..layouts.parse import parse


@dataclass(frozen=True)
class PaddedLines(PaddedRowMajor):
    """A 2-D buffer stored line after line along ``order[0]`` (the fastest dimension), with
    ``pad_elements`` unused elements after each line: element (i, j) of an ``order = (0, 1)``
    buffer is at ``j * (rows + pad) + i``."""

    order: tuple = (1, 0)

    def offsets(self, shape) -> np.ndarray:
        """Element offset of every element: an int64 array of ``shape`` (2-D)."""
        shape = tuple(int(s) for s in shape)
        if self.order[0] == 1:
            return PaddedRowMajor.offsets(self, shape)
        return PaddedRowMajor.offsets(self, shape[::-1]).T

    def __str__(self) -> str:
        return (f"lines along dim {self.order[0]}, {self.pad_elements} element(s) of padding "
                f"after each")


@dataclass
class LayoutRow:
    """One layout of the buffer: ``name`` (``plain``, ``padded``, ``swizzled``), ``layout``
    (its text), and per access (the conversion's store, then its load) ``(op, bytes per lane,
    wavefronts, conflict degree)`` in ``accesses``; ``wavefronts``: their sum."""

    name: str
    layout: str
    accesses: list

    @property
    def wavefronts(self) -> int:
        """Wavefronts of all the accesses together: every warp of one program, the whole tile."""
        return sum(a[2] for a in self.accesses)

    @property
    def worst(self) -> float:
        """The worst conflict degree of the accesses (1 = none)."""
        return max((a[3] for a in self.accesses), default=1.0)


def conversion_buffer(text: str, shape):
    """The shared buffer of a record (``record["layout"]`` of
    :func:`workbench.viz.shared_report.shared_accesses`) for a tile of ``shape`` (2-D, powers
    of two): an encoding's text is parsed; a conversion buffer, printed as a LinearLayout (one
    ``offset=N -> (a, b)`` line per offset bit: the element that bit selects), is rebuilt as
    that LinearLayout (``offset`` -> ``dim0``, ``dim1``), which
    :func:`workbench.layouts.bank_conflicts` and :func:`workbench.viz.banks_picture` take.
    Raises LayoutError (from the parser) for text that is neither."""
    rows = re.findall(r"offset=\d+ -> \(([^)]*)\)", text)
    if not rows:
        return parse(text)
    bases = [[int(x) for x in r.split(",")] for r in rows]
    return LinearLayout({"offset": bases}, {f"dim{i}": int(n) for i, n in enumerate(shape)})


def compare_layouts(records: list, shape, dtype) -> list:
    """``[plain, padded, swizzled]`` :class:`LayoutRow` for one conversion's shared accesses.

    ``records``: the compiler's records of one ``ttg.convert_layout`` (its ``st.shared`` and
    ``ld.shared``, from :func:`workbench.viz.shared_report.shared_accesses`: ``op``,
    ``layout``, ``access_layout``, ``vector_bytes``); ``shape``: the tile (2-D, powers of
    two); ``dtype``: its element type (``"fp32"``...). Raises LayoutError for layouts that do
    not fit the tile."""
    swizzled = conversion_buffer(records[0]["layout"], shape)
    # a conversion buffer has no order: the plain/padded rows take the load's (destination's)
    order = getattr(swizzled, "order", None) or \
        getattr(parse(records[-1]["access_layout"]), "order", None) or (1, 0)
    order = tuple(order)
    eb = dtype_bytes(dtype)
    choices = [("plain", SwizzledSharedLayout(1, 1, 1, order), None),
               ("padded", PaddedLines(max(4 // eb, 1), order), eb),
               ("swizzled", swizzled, None)]
    rows = []
    for name, layout, width in choices:
        accesses = []
        for r in records:
            vb = width or int(r["vector_bytes"])
            rep = bank_conflicts(layout, parse(r["access_layout"]), shape, dtype, vb)
            op = "st.shared" if "st.shared" in r["op"] else "ld.shared"
            accesses.append((op, vb, int(sum(rep.wavefronts)), float(rep.conflict_degree)))
        rows.append(LayoutRow(name, str(layout), accesses))
    return rows


def table(rows: list) -> str:
    """The rows as a text table: one line per layout and access."""
    out = [f"{'layout':9s} {'access':10s} {'B/lane':>6s} {'wavefronts':>10s}  conflict"]
    for row in rows:
        for op, vb, wf, deg in row.accesses:
            conflict = "none" if deg == 1 else f"{deg:g}-way"
            out.append(f"{row.name:9s} {op:10s} {vb:6d} {wf:10d}  {conflict}")
        out.append(f"{'':9s} {'in all':10s} {'':6s} {row.wavefronts:10d}")
    return "\n".join(out)


def triton_ttgir(kernel, *signature, **constexprs) -> str:
    """Real Triton 3.6's ttgir of ``kernel`` compiled for cuda:90 with no GPU
    (``signature``: one Triton signature string per non-constexpr parameter, ``"*fp32:16"``,
    ``"i32:16"``; ``constexprs``: their values). Raises ToolMissingError when Triton is not
    installed (its message says how to install it)."""
    from ..runtime.compare import compare
    return compare(kernel, *signature, target="cuda:90", **constexprs).theirs["ttgir"]


_ALIAS = re.compile(r"^(#\w+) = (.*)$", re.M)
_LOCAL_LOAD = re.compile(r"ttg\.local_load .*: !ttg\.memdesc<((?:\d+x)+)(\w+), (#\w+), #smem"
                         r"(?:, mutable)?> -> tensor<(?:\d+x)+\w+, (.+)> loc\(")


def shared_layouts_in(ttgir: str) -> list:
    """The ``#shared`` layout definitions of a ttgir module, sorted; empty when it has none (a
    ``ttg.convert_layout``'s buffer is chosen later, in the lowering to LLVM)."""
    return sorted({text for name, text in _ALIAS.findall(ttgir) if name.startswith("#shared")})


def shared_reads_in(ttgir: str) -> list:
    """Every ``ttg.local_load`` of a ttgir module (ours or Triton's) with its bank figures:
    dicts of ``shape`` (tuple), ``dtype`` (``"f32"``...), ``layout`` (the buffer's shared
    layout), ``access_layout`` (the registers it loads into), ``vector_bytes`` (the widest
    contiguous vector of a lane, as Triton's lowering vectorises), ``wavefronts`` (all warps,
    the whole tile) and ``conflict_degree`` (1 = none), from
    :func:`workbench.layouts.bank_conflicts`. Loads whose layouts the analysis cannot read are
    left out."""
    aliases = dict(_ALIAS.findall(ttgir))

    def expand(text: str) -> str:
        return re.sub(r"#\w+\b", lambda m: aliases.get(m.group(0), m.group(0)), text)
    out = []
    for m in _LOCAL_LOAD.finditer(ttgir):
        shape = tuple(int(d) for d in m.group(1).rstrip("x").split("x"))
        layout, access = expand(m.group(3)), expand(m.group(4))
        try:
            rep = bank_conflicts(parse(layout), parse(access), shape, m.group(2), "auto")
        except Exception:  # noqa: BLE001 - a layout this analysis does not model: left out
            continue
        out.append({"shape": shape, "dtype": m.group(2), "layout": layout,
                    "access_layout": access, "vector_bytes": rep.vector_bytes,
                    "wavefronts": int(sum(rep.wavefronts)),
                    "conflict_degree": float(rep.conflict_degree)})
    return out
