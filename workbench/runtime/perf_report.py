"""Triton's benchmark-table helpers (``triton.testing.Benchmark`` and ``perf_report``):
call a function over a grid of sizes and lines, print the table, save it as CSV, plot it.

The function decorated by ``@perf_report(Benchmark(...))`` takes the x argument(s), the line
argument and ``args``, and returns a number (usually milliseconds or GB/s from ``do_bench``)
or a tuple ``(value, min, max)``; the table keeps the first number. The table is a pandas
DataFrame with ``return_df=True`` when pandas is installed, else a list of row dicts.
Unlike Triton, nothing is plotted: ``show_plots`` is accepted and ignored (the compiler
parts import no plotting library; :func:`workbench.testing.sweep` with
:mod:`workbench.viz` draws such curves).
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field


@dataclass
class Benchmark:
    """One table: ``x_names`` (arguments set to each of ``x_vals``), ``line_arg`` (the argument
    set to each of ``line_vals``, one column each, headed by ``line_names``), ``args`` (fixed
    arguments), and for the plot ``plot_name``, ``ylabel``, ``xlabel``, ``styles``,
    ``x_log``, ``y_log`` (Triton's ``triton.testing.Benchmark``)."""

    x_names: list
    x_vals: list
    line_arg: str
    line_vals: list
    line_names: list
    plot_name: str = "benchmark"
    args: dict = field(default_factory=dict)
    xlabel: str = ""
    ylabel: str | tuple = ""
    x_log: bool = False
    y_log: bool = False
    styles: list | None = None
    color: str | None = None


def _first(value):
    return value[0] if isinstance(value, (tuple, list)) else value


class Mark:
    """What ``@perf_report`` returns: ``run(show_plots=False, print_data=False,
    save_path="", return_df=False)`` fills every table, and ``fn`` is the plain function."""

    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks

    def _table(self, bench: Benchmark) -> list[dict]:
        rows = []
        for x in bench.x_vals:
            xs = x if isinstance(x, (tuple, list)) else [x] * len(bench.x_names)
            xargs = dict(zip(bench.x_names, xs, strict=True))
            row = dict(xargs)
            for value, name in zip(bench.line_vals, bench.line_names, strict=True):
                kwargs = {**xargs, bench.line_arg: value, **bench.args}
                row[name] = _first(self.fn(**kwargs))
            rows.append(row)
        return rows

    def run(self, show_plots=False, print_data=False, save_path="", return_df=False,
            **kwargs):
        """Fill every table; print them (``print_data``), save ``<plot_name>.csv`` under
        ``save_path`` (``show_plots`` is ignored: see the module docstring). Returns the
        table(s) when ``return_df`` (one table, or a list for several benchmarks)."""
        benches = self.benchmarks if isinstance(self.benchmarks, list) else [self.benchmarks]
        tables = []
        for bench in benches:
            bench.args = {**bench.args, **kwargs}
            rows = self._table(bench)
            if print_data:
                print(f"{bench.plot_name}:")
                cols = list(rows[0]) if rows else []
                print("  ".join(f"{c:>12}" for c in cols))
                for r in rows:
                    print("  ".join(f"{r[c]:>12.4g}" if isinstance(r[c], float)
                                    else f"{r[c]!s:>12}" for c in cols))
            if save_path:
                os.makedirs(save_path, exist_ok=True)
                with open(os.path.join(save_path, f"{bench.plot_name}.csv"), "w") as f:
                    w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else [])
                    w.writeheader()
                    w.writerows(rows)
            tables.append(_as_frame(rows) if return_df else rows)
        if return_df:
            return tables[0] if len(tables) == 1 else tables
        return None


def _as_frame(rows: list[dict]):
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows)


def perf_report(benchmarks):
    """Decorator: ``@perf_report(Benchmark(...))`` (or a list of them) turns the function into
    a :class:`Mark` whose ``run`` fills the tables."""
    def wrap(fn):
        return Mark(fn, benchmarks)
    return wrap
