"""The autotune explorer: after ``@workbench.autotune`` has tuned a kernel, every configuration's
time per tuning key as a table and a bar plot, the winner marked, and each configuration's
compiled kernel (its stages and compile report) one call away: ``view.report(i)``.

It reads what :class:`workbench.runtime.autotuner.Autotuner` keeps: ``results`` (tuning key ->
``[(Config, median ms)]``, every key tuned so far), ``configs_timings`` (Config -> [median,
p20, p80] ms of the last tuning), ``cache`` (key -> the chosen Config); and the ``@jit``
kernel's compile cache (``base_fn.cache``) for the kernels each configuration compiled.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only
    from workbench.runtime.autotuner import Config


@dataclass
class TrialRow:
    """One configuration tried for one key: ``key``, ``index`` (position in the key's list),
    ``config`` (the Config), ``ms`` (median; inf when it failed to compile, nan when it was
    used untimed), ``p20``/``p80`` (ms, when known), ``best`` (the winner of its key)."""

    key: tuple
    index: int
    config: Config
    ms: float
    p20: float = math.nan
    p80: float = math.nan
    best: bool = False

    @property
    def label(self) -> str:
        return config_label(self.config)


def config_label(config) -> str:
    """``BLOCK=256, warps=4, stages=3`` for a Config."""
    kw = ", ".join(f"{k}={v}" for k, v in getattr(config, "kwargs", {}).items())
    warps, stages = getattr(config, "num_warps", "?"), getattr(config, "num_stages", "?")
    extra = f"warps={warps}, stages={stages}"
    return f"{kw}, {extra}" if kw else extra


class AutotuneView:
    """The explorer of one autotuned kernel (see :func:`autotune_view`). ``rows``: every
    :class:`TrialRow`; ``keys``: the tuning keys in order; ``.table(key)``, ``.figure(key)``,
    ``.report(i, key)``; HTML in Jupyter."""

    def __init__(self, tuner):
        self.tuner = tuner
        self.rows: list[TrialRow] = []
        timings = getattr(tuner, "configs_timings", {}) or {}
        results = dict(getattr(tuner, "results", {}) or {})
        if not results and getattr(tuner, "autotune_results", None):
            results = {(): tuner.autotune_results}
        cache = getattr(tuner, "cache", {}) or {}
        for key, trials in results.items():
            chosen = cache.get(key)
            for i, (cfg, ms) in enumerate(trials):
                t = timings.get(cfg) if key == list(results)[-1] else None
                p20, p80 = (t[1], t[2]) if t and len(t) >= 3 else (math.nan, math.nan)
                self.rows.append(TrialRow(key, i, cfg, float(ms), float(p20), float(p80),
                                          cfg is chosen))
        self.keys = list(results)

    @property
    def name(self) -> str:
        base = getattr(self.tuner, "base_fn", None)
        return getattr(getattr(base, "fn", None), "__name__", "kernel")

    def _key(self, key):
        if key is None:
            if not self.keys:
                raise ValueError(f"'{self.name}' has not been tuned yet: launch it first")
            return self.keys[-1]
        if key not in self.keys:
            raise KeyError(f"no tuning for key {key!r}; tuned keys: {self.keys}")
        return key

    def table(self, key=None) -> list[TrialRow]:
        """The rows of ``key`` (default: the last key tuned), in config order."""
        k = self._key(key)
        return [r for r in self.rows if r.key == k]

    def winner(self, key=None) -> TrialRow | None:
        """The chosen configuration's row for ``key``."""
        return next((r for r in self.table(key) if r.best), None)

    def compiled(self, i: int, key=None):
        """The CompiledKernel configuration ``i`` of ``key`` compiled during tuning (from the
        ``@jit`` kernel's cache: same constexprs and options; the latest one when several).
        Raises LookupError when it was never compiled (pruned, or it failed)."""
        row = self.table(key)[i]
        cfg = row.config
        base = getattr(self.tuner, "base_fn", None)
        found = None
        for compiled in list(getattr(base, "cache", {}).values()):
            consts = {a.name: a.value for a in compiled.spec.args if a.kind == "constexpr"}
            opts = compiled.options
            if all(consts.get(k) == v for k, v in cfg.kwargs.items()) and \
                    opts.num_warps == cfg.num_warps and opts.num_stages == cfg.num_stages:
                found = compiled
        if found is None:
            raise LookupError(f"configuration {i} ({row.label}) has no compiled kernel "
                              "(it was pruned or failed to compile)")
        return found

    def report(self, i: int, key=None):
        """Configuration ``i``'s compiled kernel: shows its stages and compile report in
        Jupyter (``compiled.metadata`` has the figures). See :meth:`compiled`."""
        return self.compiled(i, key)

    def report_pairs(self, i: int, key=None) -> list:
        """``(label, value)`` pairs of configuration ``i``'s compile report
        (:func:`workbench.viz.ir_view.compile_report`)."""
        from .ir_view import compile_report
        return compile_report(self.compiled(i, key))

    def figure(self, key=None):
        """A bar plot (matplotlib Figure) of every configuration's median time for ``key`` on a
        logarithmic time axis (so one slow configuration does not flatten the rest), with
        p20-p80 error bars, the winner in green and failed configs marked.
        ``fig.workbench_data``: ``{"labels", "ms", "best", "failed", "key"}``."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        rows = self.table(key)
        fig = Figure(figsize=(max(5, 0.9 * len(rows) + 2), 4))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        finite = [r.ms for r in rows if math.isfinite(r.ms)]
        cap = max(finite) * 1.15 if finite else 1.0
        heights = [r.ms if math.isfinite(r.ms) else cap for r in rows]
        colours = ["#2ca02c" if r.best else ("#d62728" if math.isinf(r.ms) else "#1f77b4")
                   for r in rows]
        ax.bar(range(len(rows)), heights, color=colours)
        for i, r in enumerate(rows):
            if math.isfinite(r.p20) and math.isfinite(r.p80):
                ax.errorbar([i], [r.ms], yerr=[[r.ms - r.p20], [r.p80 - r.ms]], color="black",
                            capsize=3)
            note = "best" if r.best else ("failed" if math.isinf(r.ms) else "")
            if note:
                ax.annotate(note, (i, heights[i]), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([r.label for r in rows], rotation=30, ha="right", fontsize=7)
        ax.set_yscale("log")        # one slow configuration must not flatten the others
        ax.set_ylabel("median time (ms, log scale)")
        ax.set_title(f"{self.name}: autotuning, key {self._key(key)}", fontsize=9)
        fig.tight_layout()
        fig.workbench_data = {"labels": [r.label for r in rows], "ms": [r.ms for r in rows],
                              "best": [r.index for r in rows if r.best],
                              "failed": [r.index for r in rows if math.isinf(r.ms)],
                              "key": self._key(key)}
        return fig

    def to_text(self) -> str:
        lines = [f"autotuning of {self.name}"]
        for k in self.keys:
            lines.append(f"key {k}:")
            for r in self.table(k):
                mark = " <- best" if r.best else ""
                lines.append(f"  [{r.index}] {r.label:40s} {_ms(r.ms):>10s}{mark}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from .ir_html import NO_MATHS
        parts = [f"<div class='wb-autotune {NO_MATHS}'><b>autotuning of "
                 f"{html.escape(self.name)}</b>"]
        for k in self.keys:
            parts.append(f"<div>key {html.escape(repr(k))}</div><table><tr><th>#</th>"
                         "<th>config</th><th>median ms</th><th>p20</th><th>p80</th><th></th></tr>")
            for r in self.table(k):
                style = " style='background:#e6ffed;font-weight:bold'" if r.best else ""
                parts.append(f"<tr{style}><td>{r.index}</td><td>{html.escape(r.label)}</td>"
                             f"<td>{_ms(r.ms)}</td><td>{_ms(r.p20)}</td><td>{_ms(r.p80)}</td>"
                             f"<td>{'best' if r.best else ''}</td></tr>")
            parts.append("</table>")
        parts.append("<div><i>view.report(i) shows configuration i's compiled stages and "
                     "compile report</i></div></div>")
        return "".join(parts)

    def __repr__(self) -> str:
        return self.to_text()


def _ms(v: float) -> str:
    if math.isinf(v):
        return "failed"
    if math.isnan(v):
        return "-"
    return f"{v:.4g}"


def autotune_view(tuner) -> AutotuneView:
    """The explorer of ``tuner`` (an ``@autotune`` kernel that has been launched)."""
    return AutotuneView(tuner)
