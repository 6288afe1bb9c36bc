"""The layout explorer's state and logic (the widget is :mod:`workbench.viz.explorer`).

Pure and testable without a browser: :class:`ExplorerState` holds every parameter
and :meth:`ExplorerState.evaluate` turns it into an :class:`ExplorerResult` (the encoding, the
shared layout, the bank report and text facts, or the :class:`LayoutError` message of an invalid
combination; it never raises). :func:`render` draws a result.
Layout facts: Triton ``TritonGPUAttrDefs.td``; banks: CUDA C++ Programming Guide, Shared
Memory.
"""
from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass, field
from typing import Optional

from workbench.layouts import (
    BlockedLayout,
    DotOperandLayout,
    Encoding,
    LayoutError,
    MmaLayout,
    PaddedRowMajor,
    SwizzledSharedLayout,
    bank_conflicts,
    dtype_bytes,
    num_registers,
    parse,
)

KINDS = ("blocked", "mma", "dot_op", "fixed")
SHARED_KINDS = ("swizzled", "padded", "none")
DTYPES = ("fp32", "fp16", "bf16", "fp8e4nv", "i8", "i32", "fp64")


@dataclass
class ExplorerState:
    """Every parameter the explorer shows. Tuples have one entry per tensor dim (rank 1 or 2).

    ``kind``: "blocked" (``size_per_thread``, ``threads_per_warp``, ``warps_per_cta``,
    ``order``), "mma" (``mma_version`` 2 or 3, ``mma_warps``, ``mma_instr_n`` = N of the v3
    instrShape [16, N, 16]), "dot_op" (operand ``op_idx`` with ``k_width`` of that mma parent)
    or "fixed" (``fixed_text``: any layout given as Triton text, e.g. a slice or linear layout).
    ``shape``, ``dtype`` (Triton short name). Shared memory (rank-2 tiles): ``shared_kind``
    "swizzled" (``vec``, ``per_phase``, ``max_phase``, ``shared_order``), "padded" (``pad``
    elements per row) or "none"; ``vector_bytes`` per lane (None: one element);
    ``compare_plain`` draws plain row-major beside it; ``request`` picks the warp request drawn.
    Picture options: ``warp``, ``thread`` (None: all), ``per_thread``.
    """

    kind: str = "blocked"
    shape: tuple = (32, 32)
    dtype: str = "fp32"
    size_per_thread: tuple = (1, 4)
    threads_per_warp: tuple = (4, 8)
    warps_per_cta: tuple = (4, 1)
    order: tuple = (1, 0)
    mma_version: int = 2
    mma_warps: tuple = (2, 2)
    mma_instr_n: int = 8
    op_idx: int = 0
    k_width: int = 2
    fixed_text: str = ""
    shared_kind: str = "swizzled"
    vec: int = 1
    per_phase: int = 1
    max_phase: int = 1
    shared_order: tuple = (1, 0)
    pad: int = 0
    vector_bytes: Optional[int] = None
    compare_plain: bool = True
    request: int = 0
    warp: Optional[int] = None
    thread: Optional[int] = None
    per_thread: bool = False

    @property
    def rank(self) -> int:
        """Rank of the tile."""
        return len(self.shape)

    @classmethod
    def from_layout(cls, layout=None, shape=(32, 32), dtype: str = "fp32") -> "ExplorerState":
        """A state showing ``layout`` (an Encoding, Triton text or None for a coalesced fp32
        blocked layout) over ``shape``. Raises LayoutError for unparsable text."""
        shape = tuple(int(s) for s in shape)
        st = cls(shape=shape, dtype=dtype)
        if isinstance(layout, str):
            layout = parse(layout)
        if layout is None:
            if len(shape) == 1:
                st.size_per_thread, st.threads_per_warp = (4,), (32,)
                st.warps_per_cta, st.order = (4,), (0,)
            return st
        if isinstance(layout, BlockedLayout):
            return dataclasses.replace(st, size_per_thread=layout.size_per_thread,
                                       threads_per_warp=layout.threads_per_warp,
                                       warps_per_cta=layout.warps_per_cta, order=layout.order)
        if isinstance(layout, MmaLayout):
            return dataclasses.replace(st, kind="mma", mma_version=layout.version_major,
                                       mma_warps=layout.warps_per_cta,
                                       mma_instr_n=layout.instr_shape[1])
        if isinstance(layout, DotOperandLayout) and isinstance(layout.parent, MmaLayout):
            p = layout.parent
            return dataclasses.replace(st, kind="dot_op", mma_version=p.version_major,
                                       mma_warps=p.warps_per_cta, mma_instr_n=p.instr_shape[1],
                                       op_idx=layout.op_idx, k_width=layout.k_width)
        return dataclasses.replace(st, kind="fixed", fixed_text=str(layout))

    def mma(self) -> MmaLayout:
        """The nvidia_mma layout of the mma/dot_op parameters."""
        instr = (16, 8) if self.mma_version == 2 else (16, self.mma_instr_n, 16)
        return MmaLayout(self.mma_version, self.mma_warps, instr)

    def layout(self) -> Encoding:
        """The distributed encoding. Raises LayoutError naming the bad parameter."""
        if self.kind == "blocked":
            return BlockedLayout(self.size_per_thread, self.threads_per_warp, self.warps_per_cta,
                                 self.order)
        if self.kind == "mma":
            return self.mma()
        if self.kind == "dot_op":
            return DotOperandLayout(self.op_idx, self.mma(), self.k_width)
        if self.kind == "fixed":
            enc = parse(self.fixed_text)
            if not enc.distributed:
                raise LayoutError(f"{enc} is a shared-memory layout: the picture needs a register "
                                  f"layout; give it as the shared layout instead")
            return enc
        raise LayoutError(f"kind = {self.kind!r} must be one of {', '.join(KINDS)}")

    def shared(self):
        """The shared layout (SwizzledSharedLayout, PaddedRowMajor) or None."""
        if self.shared_kind == "swizzled":
            return SwizzledSharedLayout(self.vec, self.per_phase, self.max_phase, self.shared_order)
        if self.shared_kind == "padded":
            return PaddedRowMajor(self.pad)
        return None

    def evaluate(self) -> "ExplorerResult":
        """Build everything the views need; an invalid combination becomes ``error`` (the
        LayoutError text), never an exception."""
        res = ExplorerResult(state=self)
        try:
            eb = dtype_bytes(self.dtype)
            lay = self.layout()
            if lay.rank != self.rank:
                raise LayoutError(f"the layout has rank {lay.rank} but the tile shape "
                                  f"{list(self.shape)} has rank {self.rank}")
            res.layout = lay
            res.facts = _facts(lay, self.shape, eb)
        except (LayoutError, ValueError) as e:
            res.error = str(e)
            return res
        if self.shared_kind == "none" or self.rank != 2:
            return res
        try:
            res.shared = self.shared()
            res.report = bank_conflicts(res.shared, lay, self.shape, self.dtype, self.vector_bytes)
            if not 0 <= self.request < len(res.report.requests):
                raise LayoutError(f"request = {self.request} is outside 0.."
                                  f"{len(res.report.requests) - 1}")
            if self.compare_plain and res.shared != PaddedRowMajor(0):
                res.plain_report = bank_conflicts(PaddedRowMajor(0), lay, self.shape, self.dtype,
                                                  self.vector_bytes)
            res.facts.append(res.report.summary())
        except (LayoutError, ValueError) as e:
            res.bank_error = str(e)
            res.report = res.plain_report = None
        return res


@dataclass
class ExplorerResult:
    """What one state produces: ``layout`` (or None and ``error``), ``facts`` (sentences),
    ``shared``, ``report`` / ``plain_report`` (:class:`BankReport` of the chosen and of plain
    row-major shared memory, or None and ``bank_error``)."""

    state: ExplorerState
    layout: Optional[Encoding] = None
    error: Optional[str] = None
    facts: list = field(default_factory=list)
    shared: object = None
    report: object = None
    plain_report: object = None
    bank_error: Optional[str] = None


def _facts(lay, shape, eb: int) -> list[str]:
    out = [f"layout: {lay}", f"{num_registers(lay, shape)} register(s) per thread over "
           f"{list(shape)}, {lay.num_warps} warp(s)"]
    if isinstance(lay, BlockedLayout):
        fast = lay.order[0]
        vec = lay.size_per_thread[fast]
        row = vec * lay.threads_per_warp[fast]
        lines = ("coalesced into whole 128-byte lines" if row * eb >= 128
                 else "less than a 128-byte line")
        out.append(f"CTA tile {list(lay.cta_tile)}; each thread holds {vec} contiguous element(s) "
                   f"along dim {fast}: {vec * eb}-byte accesses; a warp covers {row * eb} "
                   f"contiguous bytes per row ({lines})")
        rep = [s for s, t in zip(shape, lay.cta_tile, strict=False) if s < t]
        if rep:
            out.append("the tile is smaller than the CTA tile: elements are replicated")
    return out


@dataclass
class ExplorerView:
    """What :func:`render` drew: ``result``, ``layout_fig`` / ``bank_fig`` (Figures or None),
    ``message_html`` (facts or the error, as HTML)."""

    result: ExplorerResult
    layout_fig: object = None
    bank_fig: object = None
    message_html: str = ""
    draw_error: Optional[str] = None


def render(state: ExplorerState) -> ExplorerView:
    """Evaluate ``state`` and draw its pictures (:func:`~workbench.viz.layout_svg.
    layout_picture`, or :func:`~workbench.viz.layout_view.layout_figure` for the per-thread
    view; :func:`~workbench.viz.bank_view.banks_picture`); errors become the message, never
    exceptions."""
    from .bank_view import banks_picture
    from .layout_svg import layout_picture
    res = state.evaluate()
    view = ExplorerView(res)
    if res.layout is not None:
        try:
            if state.per_thread:
                from .layout_view import layout_figure
                view.layout_fig = layout_figure(res.layout, state.shape, warp=state.warp,
                                                thread=state.thread, per_thread=True)
            else:
                view.layout_fig = layout_picture(res.layout, state.shape, warp=state.warp,
                                                 thread=state.thread)
        except (LayoutError, ValueError) as e:
            view.draw_error = str(e)
    if res.report is not None:
        compare = PaddedRowMajor(0) if res.plain_report is not None else None
        view.bank_fig = banks_picture(res.shared, res.layout, state.shape, state.dtype,
                                      compare=compare, request=state.request,
                                      vector_bytes=state.vector_bytes)
    view.message_html = render_message(res, view.draw_error)
    return view


def render_message(res: ExplorerResult, draw_error: Optional[str] = None) -> str:
    """The facts of a result, or its errors in red (``data-wb-layout-error``), as HTML."""
    lines = []
    for msg in (res.error, draw_error, res.bank_error):
        if msg:
            lines.append(f'<div data-wb-layout-error="1" style="color:#b00020">'
                         f"{html.escape(msg)}</div>")
    lines += [f"<div><code>{html.escape(f)}</code></div>" if f.startswith("layout:") else
              f"<div>{html.escape(f)}</div>" for f in res.facts]
    return "".join(lines)


__all__ = ["ExplorerState", "ExplorerResult", "ExplorerView", "render", "render_message"]
