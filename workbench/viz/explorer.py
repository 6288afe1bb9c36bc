"""The layout explorer, an anywidget: the controls and the layout picture live in the browser
(``js/explorer.js``, shipped in the package: no build step), so the picture follows a slider
at once.

For blocked layouts the browser computes the owner map itself from sizePerThread,
threadsPerWarp, warpsPerCTA, order and the shape, with the construction of
:func:`workbench.layouts.convert.blocked_to_linear`; for mma, dot_op and layouts given as
Triton text Python sends the owner map (:func:`workbench.layouts.ownership`). The facts, the
error text of an invalid combination and the shared-memory bank view
(:func:`workbench.viz.bank_view.banks_picture`) come from Python
(:meth:`ExplorerState.evaluate`, :mod:`workbench.viz.explorer_state`) after each change.
"""
from __future__ import annotations

import dataclasses
import html
import pathlib
from typing import Any, Optional

import anywidget
import traitlets

from workbench.layouts import LayoutError, ownership

from .explorer_state import (
    DTYPES,
    ExplorerResult,
    ExplorerState,
    ExplorerView,
    render,
    render_message,
)
from .fallback import with_fallback

_JS = pathlib.Path(__file__).parent / "static" / "explorer.js"
_TUPLES = ("shape", "size_per_thread", "threads_per_warp", "warps_per_cta", "order",
           "mma_warps", "shared_order")


def state_to_params(st: ExplorerState) -> dict:
    """The JSON the widget syncs for a state (tuples as lists, no selection as -1)."""
    d = dataclasses.asdict(st)
    for k in _TUPLES:
        d[k] = list(d[k])
    d["warp"] = -1 if st.warp is None else st.warp
    d["thread"] = -1 if st.thread is None else st.thread
    d.pop("per_thread", None)
    return d


def params_to_state(p: dict) -> ExplorerState:
    """The :class:`ExplorerState` of synced params (inverse of :func:`state_to_params`)."""
    fields = {f.name for f in dataclasses.fields(ExplorerState)}
    kw: dict[str, Any] = {k: (tuple(int(x) for x in v) if k in _TUPLES else v)
                          for k, v in p.items() if k in fields}
    for k in ("warp", "thread"):
        if k in kw:
            kw[k] = None if kw[k] is None or int(kw[k]) < 0 else int(kw[k])
    return ExplorerState(**kw)


class LayoutExplorer(anywidget.AnyWidget):
    """The explorer widget. ``params``: every parameter (see :class:`ExplorerState`; set it
    from Python to drive the widget); ``owner``: the owner map Python computed for
    non-blocked kinds (``warp``, ``lane``, ``reg``, ``copies`` lists, row-major, with the
    ``params`` it belongs to, or ``error``); ``message``: facts or the error as HTML;
    ``bank_html``: the bank view; ``state`` and ``result``: the last evaluated
    :class:`ExplorerState` / :class:`~workbench.viz.explorer.ExplorerResult`."""

    _esm = _JS
    params = traitlets.Dict().tag(sync=True)
    owner = traitlets.Dict().tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    bank_html = traitlets.Unicode("").tag(sync=True)
    dtypes = traitlets.List(list(DTYPES)).tag(sync=True)

    def __init__(self, state: ExplorerState, **kwargs):
        self.state = state
        self.result: Optional[ExplorerResult] = None
        super().__init__(params=state_to_params(state), **kwargs)
        self.observe(self._changed, names="params")
        self.refresh()

    def _changed(self, _change=None) -> None:
        self.refresh()

    def _repr_mimebundle_(self, **kwargs):
        out = super()._repr_mimebundle_(**kwargs)
        return with_fallback(out, self.static_html(), "", "layout explorer")

    def static_html(self) -> str:
        """What the explorer shows where the widget cannot load: the facts (or the error) of
        its current layout as HTML, without the controls and pictures (they would put half a
        megabyte of SVG into every saved notebook)."""
        return f'<div class="mathjax_ignore tex2jax_ignore">{self.message}</div>'

    def refresh(self) -> None:
        """Evaluate ``params`` and update ``message``, ``bank_html`` and ``owner``; never
        raises (an error becomes the message)."""
        from .bank_view import banks_picture
        try:
            st = self.state = params_to_state(self.params)
            res = self.result = st.evaluate()
            owner: dict = {"params": dict(self.params)}
            if res.layout is not None and st.kind != "blocked":
                own = ownership(res.layout, st.shape)
                owner.update(warp=own.warp.reshape(-1).tolist(),
                             lane=own.lane.reshape(-1).tolist(),
                             reg=own.register.reshape(-1).tolist(),
                             copies=own.copies.reshape(-1).tolist(),
                             num_warps=int(own.num_warps))
            elif res.error:
                owner["error"] = res.error
            bank = ""
            if res.report is not None:
                from workbench.layouts import PaddedRowMajor
                compare = PaddedRowMajor(0) if res.plain_report is not None else None
                bank = banks_picture(res.shared, res.layout, st.shape, st.dtype,
                                     compare=compare, request=st.request,
                                     vector_bytes=st.vector_bytes).html
            self.owner, self.bank_html = owner, bank
            self.message = render_message(res)
        except (LayoutError, ValueError, TypeError) as e:
            self.message = (f'<div data-wb-layout-error="1" style="color:#b00020">'
                            f"{html.escape(type(e).__name__)}: {html.escape(str(e))}</div>")


def layout_explorer(layout=None, shape=(32, 32), dtype: str = "fp32") -> LayoutExplorer:
    """An interactive explorer: every parameter of the layout, the tile and its dtype as
    controls with their full names; the layout picture follows the controls at once (computed
    in the browser for blocked layouts); the facts and the bank view follow from Python.

    Args: ``layout`` (Encoding, Triton text, or None for a coalesced fp32 blocked layout),
        ``shape``, ``dtype``.
    Returns: a :class:`LayoutExplorer` (its ``params`` trait drives it from Python,
        ``result`` is the last evaluation). Invalid combinations show the LayoutError text in
        red, never raise.
    Raises: LayoutError for unparsable ``layout`` text (before any widget exists).
    """
    return LayoutExplorer(ExplorerState.from_layout(layout, shape, dtype))


__all__ = ["ExplorerState", "ExplorerResult", "ExplorerView", "LayoutExplorer", "render",
           "render_message", "layout_explorer", "state_to_params", "params_to_state"]
