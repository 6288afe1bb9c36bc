"""Timing launches and sweeping them over sizes or configurations (Triton's ``perf_report``
idea, ``triton/testing.py``), against baselines such as numpy.

- :class:`Launch`: one kernel launch held for later (``launch(kernel, grid, *args, **kw)``);
  calling it launches; :meth:`Launch.work` counts its FLOPs and bytes
  (:func:`workbench.testing.work.count_work`).
- :func:`measure`: time a launch with :func:`workbench.testing.do_bench` and return a
  :class:`~workbench.testing.work.Run` (a roofline point).
- :func:`sweep`: for every x (a size, or a dict of meta-parameters), ``bench(x)`` gives a
  Launch (or a plain callable plus ``flops=``/``bytes=`` functions of x); each baseline
  ``baselines[name](x)`` gives a callable solving the same problem. Everything is timed and
  turned into ``metric`` (GB/s, GFLOP/s, TFLOP/s or ms) with the kernel's counted work, so the
  baselines are compared on the same work. Returns a :class:`SweepResult` (a table; ``.plot()``
  draws it with :mod:`workbench.viz.sweep_view`).
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

from ..runtime.devices import is_cuda_array
from .work import Run, Work, count_work

METRICS = {"GB/s": ("bytes", 1e9), "GFLOP/s": ("flops", 1e9), "TFLOP/s": ("flops", 1e12),
           "ms": (None, None)}


def _device_of(values) -> str:
    return "cuda" if any(is_cuda_array(v) for v in values) else "cpu"


class Launch:
    """``kernel[grid](*args, **kwargs)`` held for later. ``name``: a label (default: the
    kernel's name). Calling the object launches once and returns the CompiledKernel."""

    def __init__(self, kernel, grid, *args, name: str | None = None, **kwargs):
        self.kernel, self.grid, self.args, self.kwargs = kernel, grid, args, kwargs
        base = getattr(kernel, "fn", kernel)
        self.name = name or getattr(base, "__name__", None) or getattr(kernel, "name", "kernel")
        self.device = _device_of(list(args) + list(kwargs.values()))
        self._work: dict = {}

    def __call__(self):
        return self.kernel[self.grid](*self.args, **self.kwargs)

    def work(self, exact: bool = False, flops=None, bytes=None) -> Work:
        """The launch's :class:`Work` (counted once per mode; see ``count_work``)."""
        key = (exact, flops, bytes)
        if key not in self._work:
            self._work[key] = count_work(self.kernel, self.grid, *self.args, exact=exact,
                                         flops=flops, bytes=bytes, **self.kwargs)
        return self._work[key]

    def __repr__(self) -> str:
        return f"<Launch {self.name} grid={self.grid}>"


def launch(kernel, grid, *args, **kwargs) -> Launch:
    """A :class:`Launch` of ``kernel[grid](*args, **kwargs)`` (``name=`` labels it)."""
    return Launch(kernel, grid, *args, **kwargs)


def time_ms(fn, device: str = "cpu", warmup: float = 25, rep: float = 100) -> float:
    """Median milliseconds of ``fn()`` by :func:`workbench.testing.do_bench`."""
    from ..runtime.bench import do_bench
    return float(do_bench(fn, warmup=warmup, rep=rep, return_mode="median", device=device))


def measure(lnch: Launch, name: str | None = None, *, exact: bool = False, flops=None,
            bytes=None, warmup: float = 25, rep: float = 100, config: dict | None = None) -> Run:
    """Time ``lnch`` (median of do_bench, seconds) and count its work: a
    :class:`~workbench.testing.work.Run`. ``flops``/``bytes`` override the counts;
    ``exact`` counts on the interpreter. An ``@autotune`` kernel is timed first (its first
    launch tunes it), then counted with the config it chose, which also becomes the Run's
    ``config`` unless ``config`` is given. Raises what the launch or the count raises."""
    ms = time_ms(lnch, lnch.device, warmup, rep)
    work = lnch.work(exact=exact, flops=flops, bytes=bytes)
    if config is None:
        from .tuned import resolve_launch
        _, meta = resolve_launch(lnch.kernel, lnch.args, lnch.kwargs)
        config = {k: v for k, v in meta.items() if k not in lnch.kwargs}
    return Run(name=str(name or lnch.name), seconds=ms * 1e-3, flops=work.flops, bytes=work.bytes,
               dtype=work.dtype, target=lnch.device, config=dict(config or {}), work=work)


@dataclass
class SweepResult:
    """Rows of a sweep: dicts with ``x`` (size or config), ``provider`` (the kernel's name or a
    baseline's), ``ms`` (median), ``value`` (in ``metric``), ``flops``, ``bytes``; ``notes``
    (skipped baselines, failures). ``.table()`` pivots to x -> provider -> value."""

    metric: str
    x_name: str
    rows: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    kernel_name: str = "kernel"

    @property
    def providers(self) -> list:
        out = []
        for r in self.rows:
            if r["provider"] not in out:
                out.append(r["provider"])
        return out

    @property
    def xs(self) -> list:
        out = []
        for r in self.rows:
            if r["x"] not in out:
                out.append(r["x"])
        return out

    def table(self) -> dict:
        """``{x_label: {provider: value}}`` in sweep order."""
        out: dict = {}
        for r in self.rows:
            out.setdefault(_label(r["x"]), {})[r["provider"]] = r["value"]
        return out

    def best(self, provider: str | None = None):
        """The row with the best value of ``provider`` (default: the kernel): the highest
        rate, or the lowest time for ``metric="ms"``."""
        rows = [r for r in self.rows if r["provider"] == (provider or self.kernel_name)
                and not math.isnan(r["value"])]
        if not rows:
            return None
        pick = min if self.metric == "ms" else max
        return pick(rows, key=lambda r: r["value"])

    def runs(self, provider: str | None = None) -> list:
        """The rows of ``provider`` (default: the kernel) as roofline
        :class:`~workbench.testing.work.Run` points."""
        p = provider or self.kernel_name
        return [r["run"] for r in self.rows if r["provider"] == p and r.get("run") is not None]

    def to_text(self) -> str:
        """A fixed-width table: one line per x, one column per provider."""
        provs = self.providers
        head = [self.x_name] + [f"{p} ({self.metric})" for p in provs]
        body = [[_label(x)] + [_fmt(self.table()[_label(x)].get(p)) for p in provs]
                for x in self.xs]
        widths = [max(len(str(c)) for c in col) for col in zip(head, *body, strict=True)]
        lines = ["  ".join(str(c).rjust(w) for c, w in zip(row, widths, strict=True))
                 for row in [head] + body]
        return "\n".join(lines + [f"note: {n}" for n in self.notes])

    def _repr_html_(self) -> str:
        provs = self.providers
        t = self.table()
        head = "".join(f"<th>{html.escape(p)} ({html.escape(self.metric)})</th>" for p in provs)
        body = "".join(
            f"<tr><td>{html.escape(_label(x))}</td>"
            + "".join(f"<td style='text-align:right'>{_fmt(t[_label(x)].get(p))}</td>"
                      for p in provs) + "</tr>" for x in self.xs)
        notes = "".join(f"<div><i>note: {html.escape(n)}</i></div>" for n in self.notes)
        # mathjax_ignore/tex2jax_ignore: no notebook typesets a "$" of this table as maths
        return ("<div class='mathjax_ignore tex2jax_ignore'><table class='wb-sweep'>"
                f"<tr><th>{html.escape(self.x_name)}</th>{head}</tr>"
                f"{body}</table>{notes}</div>")

    def plot(self, ax=None, logx: bool | None = None):
        """A line plot of ``metric`` against x per provider (matplotlib Figure; the
        ``"sweep_figure"`` view of :mod:`workbench.runtime.views`, registered by
        :mod:`workbench.viz`: :func:`workbench.viz.sweep_view.sweep_figure`). Raises
        ToolMissingError when no such view is registered (workbench.viz is missing)."""
        from ..errors import ToolMissingError
        from ..runtime import views
        view = views.lookup("sweep_figure")
        if view is None:
            raise ToolMissingError("SweepResult.plot() needs workbench.viz, which is not "
                                   "installed")
        return view(self, ax=ax, logx=logx)


def _label(x) -> str:
    if isinstance(x, dict):
        return ", ".join(f"{k}={v}" for k, v in x.items())
    return str(x)


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.4g}"


def _value(metric: str, ms: float, work: Work | None) -> float:
    kind, scale = METRICS[metric]
    if kind is None:
        return ms
    if work is None or ms <= 0:
        return math.nan
    return getattr(work, kind) / (ms * 1e-3) / scale


def sweep(bench, xs, baselines: dict | None = None, metric: str = "GB/s", *,
          x_name: str | None = None, flops=None, bytes=None, exact: bool = False,
          warmup: float = 25, rep: float = 100, name: str | None = None) -> SweepResult:
    """Time ``bench(x)`` for each ``x`` in ``xs`` (sizes, or dicts of meta-parameters) and
    each baseline, and express the times in ``metric``.

    ``bench(x)``: a :class:`Launch` (its work is counted from the IR), or any zero-argument
    callable when ``flops``/``bytes`` (functions of x giving FLOP / bytes) are given.
    ``baselines``: ``{"numpy": f, "torch": g, ...}`` with ``f(x)`` -> a callable doing the
    same work; one that raises ImportError (not installed) or is None is skipped with a
    note. ``metric``: ``"GB/s"``, ``"GFLOP/s"``, ``"TFLOP/s"`` or ``"ms"``. ``warmup``/``rep``:
    do_bench's durations (ms). A failing x is recorded as NaN with a note. Raises ValueError
    for an unknown metric."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    xs = list(xs)
    x_name = x_name or ("config" if xs and isinstance(xs[0], dict) else "size")
    result = SweepResult(metric=metric, x_name=x_name)
    skipped: set = set()
    for x in xs:
        lnch = bench(x)
        kname = str(name or getattr(lnch, "name", None) or getattr(bench, "__name__", "kernel"))
        result.kernel_name = kname
        device = getattr(lnch, "device", "cpu")
        work = _work_of(lnch, x, flops, bytes, exact, result)
        try:
            ms = time_ms(lnch, device, warmup, rep)
        except Exception as e:  # noqa: BLE001 - one bad size must not lose the sweep
            result.notes.append(f"{kname} at {_label(x)}: {type(e).__name__}: {e}")
            ms = math.nan
        run = None
        if work is not None and not math.isnan(ms):
            run = Run(name=f"{kname} {_label(x)}", seconds=ms * 1e-3, flops=work.flops,
                      bytes=work.bytes, dtype=work.dtype, target=device,
                      config=x if isinstance(x, dict) else {x_name: x}, work=work)
        result.rows.append({"x": x, "provider": kname, "ms": ms,
                            "value": _value(metric, ms, work), "flops": _get(work, "flops"),
                            "bytes": _get(work, "bytes"), "run": run})
        for bname, make in (baselines or {}).items():
            if bname in skipped:
                continue
            try:
                if make is None:
                    raise ImportError("not given")
                fn = make(x)
                bms = time_ms(fn, "cpu", warmup, rep)
            except ImportError as e:
                skipped.add(bname)
                result.notes.append(f"baseline {bname} skipped: {e}")
                continue
            except Exception as e:  # noqa: BLE001
                result.notes.append(f"baseline {bname} at {_label(x)}: {type(e).__name__}: {e}")
                bms = math.nan
            result.rows.append({"x": x, "provider": bname, "ms": bms,
                                "value": _value(metric, bms, work), "flops": _get(work, "flops"),
                                "bytes": _get(work, "bytes"), "run": None})
    return result


def _get(work, attr):
    return getattr(work, attr) if work is not None else math.nan


def _work_of(lnch, x, flops, bytes, exact, result) -> Work | None:
    f = flops(x) if callable(flops) else flops
    b = bytes(x) if callable(bytes) else bytes
    if isinstance(lnch, Launch):
        try:
            return lnch.work(exact=exact, flops=f, bytes=b)
        except Exception as e:  # noqa: BLE001 - the time is still worth showing
            result.notes.append(f"work of {lnch.name} at {_label(x)} not counted: {e}")
            return None
    if f is None and b is None:
        return None
    return Work(flops=float(f or 0.0), bytes=float(b or 0.0), mode="user")
