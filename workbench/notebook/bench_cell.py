"""``%%tilekernel --bench "EXPR"``: time a live launch and place it on the roofline.

``EXPR`` is a launch, ``kernel[grid](args...)``. Its parts (kernel, grid, arguments) are
evaluated once in the user's namespace and held as a :class:`workbench.testing.sweep.Launch`,
so the FLOPs and bytes are counted from the kernel's IR
(:func:`workbench.testing.work.count_work`) and the time is the median of
:func:`workbench.testing.do_bench` (ms). Ceilings are those of the device the arrays live on
(the CPU's without a GPU), measured once per machine and cached. The output is the roofline
figure (a PNG inside HTML, so any front end shows it) and its figures as text.
"""
from __future__ import annotations

import ast
import html

from .display import box_html, show, show_error

BENCH_FILE = "<tilekernel --bench>"


def split_launch(expr: str, ns: dict):
    """The :class:`~workbench.testing.sweep.Launch` of ``kernel[grid](args...)`` written in
    ``expr`` (parts evaluated in ``ns``), or None when ``expr`` is not of that shape.
    Raises what evaluating the parts raises (SyntaxError, NameError...)."""
    from ..testing.sweep import Launch
    tree = ast.parse(expr.strip(), BENCH_FILE, mode="eval").body
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Subscript)):
        return None

    def ev(node):
        code = compile(ast.fix_missing_locations(ast.Expression(node)), BENCH_FILE, "eval")
        return eval(code, ns)  # noqa: S307 - the user's own launch expression

    kernel, grid = ev(tree.func.value), ev(tree.func.slice)
    if not hasattr(kernel, "__getitem__") or not (hasattr(kernel, "params") or
                                                 hasattr(kernel, "fn")):
        return None
    args, kwargs = [], {}
    for a in tree.args:
        if isinstance(a, ast.Starred):
            args.extend(ev(a.value))
        else:
            args.append(ev(a))
    for kw in tree.keywords:
        if kw.arg is None:
            kwargs.update(ev(kw.value))
        else:
            kwargs[kw.arg] = ev(kw.value)
    return Launch(kernel, grid, *args, **kwargs)


def run_bench(expr: str, ns: dict, warmup: float = 25, rep: float = 100):
    """Time ``expr``, count its work, draw the roofline and display both. Returns the
    roofline figure (its ``workbench_data`` has the point), or None after showing an error
    box. Never raises."""
    from ..testing.ceilings import ceilings
    from ..testing.sweep import measure
    from ..viz.roofline import roofline
    try:
        launch = split_launch(expr, ns)
    except Exception as exc:  # noqa: BLE001
        show_error(exc, f"reading --bench: {expr}", (BENCH_FILE,))
        return None
    if launch is None:
        show(box_html("note", "--bench expects a launch: kernel[grid](args...)",
                      f"got: {expr}"), f"--bench expects a launch: kernel[grid](args...); "
                                       f"got {expr}")
        return None
    try:
        run = measure(launch, warmup=warmup, rep=rep)
    except Exception as exc:  # noqa: BLE001
        show_error(exc, f"timing --bench: {expr}", (BENCH_FILE,))
        return None
    try:
        ceil = ceilings(run.target)
        fig = roofline([run], ceil)
    except Exception as exc:  # noqa: BLE001
        show_error(exc, "measuring ceilings / drawing the roofline")
        return None
    data = fig.workbench_data
    mode = run.work.mode if run.work is not None else "no"
    text = (f"{run.name}: {run.seconds * 1e3:.4g} ms (median of do_bench), "
            f"{run.flops:.4g} FLOP, {run.bytes:.4g} bytes ({mode} count), "
            f"{run.bytes_per_s / 1e9:.3g} GB/s, {run.flops_per_s / 1e9:.3g} GFLOP/s\n"
            + data["text"] + "\n" + ceil.to_text())
    notes = "".join(box_html("note", f"{p['name']} is above its roof",
                             p["reason"]) for p in data["points"] if p["above_roof"])
    body = (f'{fig._repr_html_()}'
            f'<pre style="font-size:12px">{html.escape(text)}</pre>{notes}')
    show(body, text)
    return fig
