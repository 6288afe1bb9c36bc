"""An interactive layout explorer: every parameter of an encoding, the tile and its dtype as
controls; the layout picture and the shared-memory bank view update live.

The logic is pure and testable without a browser: :class:`ExplorerState` holds every parameter
and :meth:`ExplorerState.evaluate` turns it into an :class:`ExplorerResult` (the encoding, the
shared layout, the bank report and text facts, or the :class:`LayoutError` message of an invalid
combination; it never raises). :func:`render` draws a result; :func:`layout_explorer` wires
ipywidgets controls to both. Layout facts: Triton ``TritonGPUAttrDefs.td``; banks: CUDA C++
Programming Guide, Shared Memory.
"""
from __future__ import annotations

import dataclasses
import html
import io
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
POW2 = (1, 2, 4, 8, 16, 32)
SHAPE_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


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


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return buf.getvalue()


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
    """Evaluate ``state`` and draw its pictures (layout_figure, banks_figure); errors become the
    message, never exceptions."""
    from .bank_view import banks_figure
    from .layout_view import layout_figure
    res = state.evaluate()
    view = ExplorerView(res)
    if res.layout is not None:
        try:
            view.layout_fig = layout_figure(res.layout, state.shape, warp=state.warp,
                                            thread=state.thread, per_thread=state.per_thread)
        except (LayoutError, ValueError) as e:
            view.draw_error = str(e)
    if res.report is not None:
        compare = PaddedRowMajor(0) if res.plain_report is not None else None
        view.bank_fig = banks_figure(res.shared, res.layout, state.shape, state.dtype,
                                     compare=compare, request=state.request,
                                     vector_bytes=state.vector_bytes)
    lines = []
    for msg in (res.error, view.draw_error, res.bank_error):
        if msg:
            lines.append(f'<div data-wb-layout-error="1" style="color:#b00020">'
                         f"{html.escape(msg)}</div>")
    lines += [f"<div><code>{html.escape(f)}</code></div>" if f.startswith("layout:") else
              f"<div>{html.escape(f)}</div>" for f in res.facts]
    view.message_html = "".join(lines)
    return view


# ------------------------------------------------------------------------------- the widget
def _pow2_slider(w, desc, value):
    return w.SelectionSlider(options=POW2 if value in POW2 else sorted(set(POW2) | {value}),
                             value=value, description=desc, continuous_update=False)


class _Controls:
    """The ipywidgets controls of one state; ``read()`` -> a new ExplorerState."""

    def __init__(self, w, st: ExplorerState):
        self.base = st
        r = st.rank
        self.kind = w.Dropdown(options=KINDS, value=st.kind, description="kind")
        self.dtype = w.Dropdown(options=sorted(set(DTYPES) | {st.dtype}), value=st.dtype,
                                description="dtype")
        self.shape = [w.Dropdown(options=sorted(set(SHAPE_CHOICES) | {st.shape[d]}),
                                 value=st.shape[d], description=f"shape[{d}]") for d in range(r)]

        def dims(name, vals):
            return [_pow2_slider(w, f"{name}[{d}]", vals[d] if d < len(vals) else 1)
                    for d in range(r)]
        self.spt = dims("sizePerThread", st.size_per_thread)
        self.tpw = dims("threadsPerWarp", st.threads_per_warp)
        self.wpc = dims("warpsPerCTA", st.warps_per_cta)
        orders = [(0,)] if r == 1 else [(1, 0), (0, 1)]
        self.order = w.Dropdown(options=[(str(list(o)), o) for o in orders],
                                value=tuple(st.order) if tuple(st.order) in orders else orders[0],
                                description="order")
        self.mma_version = w.Dropdown(options=[2, 3], value=st.mma_version, description="version")
        self.mma_warps = [_pow2_slider(w, f"warpsPerCTA[{d}]", st.mma_warps[d]) for d in range(2)]
        self.mma_n = w.SelectionSlider(options=[8, 16, 32, 64, 128, 256], value=st.mma_instr_n,
                                       description="v3 N", continuous_update=False)
        self.op_idx = w.Dropdown(options=[("A (0)", 0), ("B (1)", 1)], value=st.op_idx,
                                 description="opIdx")
        self.k_width = _pow2_slider(w, "kWidth", st.k_width)
        self.fixed = w.Text(value=st.fixed_text, description="layout",
                            layout=w.Layout(width="95%"))
        self.shared_kind = w.Dropdown(options=SHARED_KINDS, value=st.shared_kind,
                                      description="shared")
        self.vec = _pow2_slider(w, "vec", st.vec)
        self.per_phase = _pow2_slider(w, "perPhase", st.per_phase)
        self.max_phase = _pow2_slider(w, "maxPhase", st.max_phase)
        self.shared_order = w.Dropdown(options=[("[1, 0]", (1, 0)), ("[0, 1]", (0, 1))],
                                       value=tuple(st.shared_order), description="order")
        self.pad = w.BoundedIntText(value=st.pad, min=0, max=64, description="pad elems")
        self.vector_bytes = w.Dropdown(options=[("element", None), ("4 B", 4), ("8 B", 8),
                                                ("16 B", 16)], value=st.vector_bytes,
                                       description="B per lane")
        self.compare = w.Checkbox(value=st.compare_plain, description="compare with row-major")
        self.request = w.BoundedIntText(value=st.request, min=0, max=4096, description="request")
        self.warp = w.BoundedIntText(value=-1 if st.warp is None else st.warp, min=-1, max=255,
                                     description="warp (-1 all)")
        self.thread = w.BoundedIntText(value=-1 if st.thread is None else st.thread, min=-1,
                                       max=8191, description="thread (-1)")
        self.per_thread = w.Checkbox(value=st.per_thread, description="per-thread view")

    def all(self):
        """Every control (for observing changes)."""
        return [c for k, v in vars(self).items() if k != "base"
                for c in (v if isinstance(v, list) else [v])]

    def read(self) -> ExplorerState:
        """The state the controls show."""
        def opt(c):
            return None if c.value < 0 else int(c.value)
        return dataclasses.replace(
            self.base, kind=self.kind.value, dtype=self.dtype.value,
            shape=tuple(c.value for c in self.shape),
            size_per_thread=tuple(c.value for c in self.spt),
            threads_per_warp=tuple(c.value for c in self.tpw),
            warps_per_cta=tuple(c.value for c in self.wpc), order=tuple(self.order.value),
            mma_version=self.mma_version.value, mma_warps=tuple(c.value for c in self.mma_warps),
            mma_instr_n=self.mma_n.value, op_idx=self.op_idx.value, k_width=self.k_width.value,
            fixed_text=self.fixed.value, shared_kind=self.shared_kind.value, vec=self.vec.value,
            per_phase=self.per_phase.value, max_phase=self.max_phase.value,
            shared_order=tuple(self.shared_order.value), pad=int(self.pad.value),
            vector_bytes=self.vector_bytes.value, compare_plain=self.compare.value,
            request=int(self.request.value), warp=opt(self.warp), thread=opt(self.thread),
            per_thread=self.per_thread.value)


def layout_explorer(layout=None, shape=(32, 32), dtype: str = "fp32"):
    """An ipywidgets explorer of a layout over a tile of ``shape`` and ``dtype``.

    Args:
        layout: an Encoding, Triton layout text, or None (a blocked layout: sizePerThread 4
            along the contiguous dim, the coalesced fp32 choice).
        shape: tile shape, rank 1 or 2 (bank view for rank 2). dtype: Triton short name.
    Returns: an ``ipywidgets.VBox``; its ``.explorer`` attribute has ``controls``, ``state``,
        ``view`` (the latest :class:`ExplorerView`) and ``refresh()``. Every control change
        re-renders; invalid combinations show the LayoutError text in red, never raise.
    Raises: LayoutError for unparsable ``layout`` text (before any widget exists).
    """
    import ipywidgets as w
    exp = _Explorer(w, ExplorerState.from_layout(layout, shape, dtype))
    exp.box.explorer = exp
    return exp.box


class _Explorer:
    def __init__(self, w, state: ExplorerState):
        self.w = w
        self.controls = c = _Controls(w, state)
        self.state = state
        self.view: Optional[ExplorerView] = None
        self.message = w.HTML()
        self.layout_image = w.Image(format="png")
        self.bank_image = w.Image(format="png")
        self.blocked_box = w.VBox([w.HBox(c.spt), w.HBox(c.tpw), w.HBox(c.wpc), c.order])
        self.mma_box = w.VBox([w.HBox([c.mma_version, c.mma_n]), w.HBox(c.mma_warps),
                               w.HBox([c.op_idx, c.k_width])])
        self.fixed_box = w.VBox([c.fixed])
        self.shared_box = w.VBox([w.HBox([c.shared_kind, c.vector_bytes, c.compare]),
                                  w.HBox([c.vec, c.per_phase, c.max_phase]),
                                  w.HBox([c.shared_order, c.pad, c.request])])
        top = w.HBox([c.kind, c.dtype] + c.shape)
        view = w.HBox([c.warp, c.thread, c.per_thread])
        self.box = w.VBox([top, self.blocked_box, self.mma_box, self.fixed_box, self.shared_box,
                           view, self.message, self.layout_image, self.bank_image])
        for ctl in c.all():
            ctl.observe(self._changed, names="value")
        self.refresh()

    def _changed(self, _change=None):
        self.refresh()

    def refresh(self) -> Optional[ExplorerView]:
        """Read the controls, re-render, update the pictures and the message. Returns the new
        view, or the last good one (None before any) when rendering raised."""
        c = self.controls
        try:
            self.state = c.read()
            kind = self.state.kind
            self.blocked_box.layout.display = "" if kind == "blocked" else "none"
            self.mma_box.layout.display = "" if kind in ("mma", "dot_op") else "none"
            self.fixed_box.layout.display = "" if kind == "fixed" else "none"
            self.view = view = render(self.state)
            self.message.value = view.message_html
            self.layout_image.value = _png(view.layout_fig) if view.layout_fig else b""
            self.bank_image.value = _png(view.bank_fig) if view.bank_fig else b""
            self.layout_image.layout.display = "" if view.layout_fig else "none"
            self.bank_image.layout.display = "" if view.bank_fig else "none"
        except Exception as e:  # noqa: BLE001 - a widget callback must never raise
            self.message.value = (f'<div data-wb-layout-error="1" style="color:#b00020">'
                                  f"{html.escape(type(e).__name__)}: {html.escape(str(e))}</div>")
        return self.view


__all__ = ["ExplorerState", "ExplorerResult", "ExplorerView", "render", "layout_explorer"]
