"""The live stage view: an anywidget whose front end (``static/stage_widget.js`` and ``.css``,
shipped inside the package and read at import: no npm, no build step) draws the data of
:func:`workbench.viz.stage_data.compiled_stage_data` in JupyterLab, Notebook 7 and VS Code.

Its mimebundle also carries the static HTML view (:func:`workbench.viz.ir_view.render_compiled`,
hover linking by CSS and an inline script) as ``text/html``, so nbviewer, GitHub and anything
without a widget manager still show the stages, under a line saying that the live widget did
not load (:mod:`workbench.viz.fallback`); ``text/plain`` is the kernel's repr.
"""
from __future__ import annotations

from importlib import resources

import anywidget
import traitlets

from .fallback import with_fallback
from .lexers import style_css
from .stage_data import compiled_stage_data, stage_data

__all__ = ["StageView", "stage_view", "stage_diff", "default_visible"]

# preference order of the panes shown at first when no stages are asked for (every text stage
# is still sent and can be ticked on)
_FIRST_SHOWN = ("ttgir", "ptx", "sass", "llir", "asm", "ttir")


def _static(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


_ESM = _static("stage_widget.js")
_CSS = _static("stage_widget.css") + "\n" + style_css(".wb-sw .wb-code")


def default_visible(names: list[str]) -> list[str]:
    """The stages shown at first: up to three of ``names`` by :data:`_FIRST_SHOWN`, kept in
    ``names``' (compile) order; all of them when there are three or fewer."""
    if len(names) <= 3:
        return list(names)
    picked = [n for n in _FIRST_SHOWN if n in names][:3]
    return [n for n in names if n in picked]


class StageView(anywidget.AnyWidget):
    """The stage view widget: ``data`` (see :func:`compiled_stage_data`) drawn by the bundled
    ES module; ``static_html`` (the fallback rendering) and ``plain`` go into the mimebundle
    beside the widget view."""

    _esm = _ESM
    _css = _CSS
    data = traitlets.Dict().tag(sync=True)

    def __init__(self, data: dict, static_html: str = "", plain: str = "", compiled=None,
                 **kwargs):
        super().__init__(data=data, **kwargs)
        self._static_html = static_html
        self._plain = plain
        self._compiled = compiled
        self.on_msg(self._on_front_end_msg)

    def _on_front_end_msg(self, _widget, content, _buffers) -> None:
        """``{"make_stage": name, "visible": [...]}`` from the front end (a ``lazy`` stage
        ticked on, and the panes ticked then): make that stage (e.g. run nvdisasm) and send the
        data again with those panes and the new one visible."""
        name = content.get("make_stage") if isinstance(content, dict) else None
        if self._compiled is None or name not in (self.data.get("lazy") or []):
            return
        shown = content.get("visible")
        if not (isinstance(shown, list) and all(isinstance(x, str) for x in shown)):
            shown = self.data.get("visible") or []
        visible = [s for s in shown if s != name] + [name]
        data = compiled_stage_data(self._compiled, visible)
        data["visible"] = [s for s in visible if s in [p["stage"] for p in data["panes"]]]
        self.data = data

    def _repr_mimebundle_(self, **kwargs):
        out = super()._repr_mimebundle_(**kwargs)
        return with_fallback(out, self._static_html, self._plain, "stage view")


def stage_view(compiled, stages=None):
    """The live stage view of a compiled kernel (``workbench.compile(...)`` or what a launch
    returns). ``stages``: the panes shown at first (a list or a comma-separated string; default
    up to three of ttgir, ptx, sass, llir, asm, ttir); every text stage can be ticked on in the
    view. A stage not made yet (the CUDA SASS) is made only when asked for here or ticked on
    in the view (the front end asks the kernel for it)."""
    from .ir_view import render_compiled
    if isinstance(stages, str):
        stages = [s.strip() for s in stages.split(",") if s.strip()]
    data = compiled_stage_data(compiled, stages)
    if not stages:
        data["visible"] = default_visible([p["stage"] for p in data["panes"]])
    return StageView(data, render_compiled(compiled, stages), repr(compiled), compiled)


def _label(compiled) -> str:
    md = getattr(compiled, "metadata", None)
    return (f"{getattr(md, 'target', '?')}, num_warps={getattr(md, 'num_warps', '?')}, "
            f"num_stages={getattr(md, 'num_stages', '?')}")


def stage_diff(a, b, stages=("ptx",), names=("A", "B")):
    """Two compilations of one kernel side by side, aligned by source line: for each stage of
    ``stages`` a pane of ``a`` then one of ``b`` (named ``"<stage> A"``, ``"<stage> B"``),
    beside the kernel's source whose cost columns count each pane's lines per source line, so
    the difference per line reads across. Two configurations (``num_warps``, constexprs) or two
    targets of the same kernel (``cuda:80`` and ``cuda:90``; a stage missing from one is left
    out with a note). Hover, pinning and synchronised scrolling work across both as in
    :func:`stage_view`. Raises ValueError when ``a`` and ``b`` are not the same kernel source,
    or when no stage asked for is a text stage of both.
    """
    from .ir_view import render_stages
    src_a, src_b = getattr(a, "src", None), getattr(b, "src", None)
    if getattr(src_a, "text", None) != getattr(src_b, "text", None):
        raise ValueError("stage_diff compares two compilations of one kernel: the sources "
                         "differ (compile the same @jit function twice)")
    if isinstance(stages, str):
        stages = [s.strip() for s in stages.split(",") if s.strip()]
    panes, notes = [], [f"{names[0]}: {_label(a)}", f"{names[1]}: {_label(b)}"]
    for st in stages:
        texts = [(c.asm.get(st), (getattr(c, "line_maps", None) or {}).get(st) or [])
                 for c in (a, b)]
        if not all(isinstance(t, str) for t, _ in texts):
            notes.append(f"{st}: not a text stage of both compilations; left out")
            continue
        for (text, lmap), n in zip(texts, names, strict=True):
            panes.append((f"{st} {n}", text, lmap, st))
    if not panes:
        common = [s for s in a.asm if isinstance(a.asm.get(s), str) and
                  isinstance(b.asm.get(s), str) and s != "source"]
        raise ValueError(f"stage_diff: none of {', '.join(stages)} is a text stage of both "
                         f"compilations; both have: {', '.join(common) or 'none'} (the CPU "
                         "target has no ptx: compile with target='cuda:90')")
    first = getattr(src_a, "first_line", 1) or 1
    name = getattr(src_a, "name", None) or "kernel"
    title = f"{name}: {names[0]} beside {names[1]}"
    data = stage_data(panes, src_a.text, getattr(src_a, "file", None), first, title=title,
                      notes=notes)
    data["visible"] = [p[0] for p in panes]
    static = render_stages([p[:3] for p in panes], src_a.text, getattr(src_a, "file", None),
                           first, title=title, notes=notes)
    return StageView(data, static, title)
