"""``python -m workbench quickstart``: compile a real kernel through every stage, run it on the
CPU, check it against numpy, and show the stages side by side (terminal and an HTML file).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path


def _show(compiled, what: str, args) -> None:
    """Print one compiled kernel's stages side by side: the source, the tile IR, then the GPU
    IR and PTX (cuda) or LLVM IR and host assembly (cpu), ``args.lines`` lines per column."""
    from workbench.viz.text_view import side_by_side
    print(f"\n{what}: stages of {compiled.name} for {args.target}: {', '.join(compiled.stages)}")
    for note in compiled.extra.get("notes", []):
        print(f"note: {note}")
    lower = ("ttgir", "ptx") if "ttgir" in compiled.asm else ("llir", "asm")
    shown = [s for s in ("source", "ttir") + lower if s in compiled.asm]
    print(f"the terminal shows {', '.join(shown)} (--lines N for longer columns); the HTML "
          "view below has every stage")
    print(side_by_side(compiled, shown, colour=sys.stdout.isatty(), max_lines=args.lines))


def quickstart(args) -> int:
    """Launch a vector add and a softmax on the CPU, check them against numpy, then show both
    kernels' stages for ``args.target`` (terminal columns and one HTML file)."""
    import numpy as np

    import workbench
    from workbench.testing.examples import add_kernel, softmax_kernel

    rng = np.random.default_rng()
    n = 98_765
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.full(n, np.nan, dtype=np.float32)
    grid = lambda meta: (workbench.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
    np.testing.assert_array_equal(out, x + y)
    print(f"vector add on the CPU: {n} elements, {workbench.cdiv(n, 1024)} programs, "
          "equal to numpy")

    rows, cols = 123, 781
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    sm = np.full_like(a, np.nan)
    softmax_kernel[(rows,)](sm, a, a.strides[0] // 4, sm.strides[0] // 4, cols,
                            BLOCK_SIZE=workbench.next_power_of_2(cols))
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(sm, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    print(f"softmax on the CPU: {rows} x {cols}, equal to numpy within 1e-5")

    sig = ("*fp32:16", "*fp32:16", "*fp32:16", "i32")
    kernels = [(workbench.compile(add_kernel, *sig, target=args.target, BLOCK_SIZE=1024),
                "the vector add"),
               (workbench.compile(softmax_kernel, "*fp32:16", "*fp32:16", "i32", "i32", "i32",
                                  target=args.target, BLOCK_SIZE=1024),
                "the softmax (its row max and sum are tl.max and tl.sum reductions)")]
    for compiled, what in kernels:
        _show(compiled, what, args)
        if "sass" in compiled.asm:  # made now (nvdisasm), so the HTML file shows it too
            compiled.asm["sass"]
    html = Path(args.html or Path(tempfile.gettempdir()) / "workbench_quickstart.html")
    html.write_text("<!doctype html><meta charset='utf-8'><title>Tile Workbench quickstart"
                    "</title>" + "".join(c._repr_html_() for c, _ in kernels),
                    encoding="utf-8")
    print(f"\nthe full side-by-side views of both kernels (every stage, linked by source "
          f"line): {html}")
    print("in Jupyter: %load_ext workbench, then %%tilekernel (notebooks/01_quickstart.ipynb)")
    return 0


def _target(text: str) -> str:
    from workbench.config import Target
    from workbench.errors import TargetError
    try:
        return str(Target.parse(text))
    except TargetError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m workbench", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    q = sub.add_parser("quickstart", help="compile, run and show a real kernel")
    q.add_argument("--target", default="cuda:90", type=_target,
                   help="whose stages to show: cuda:90 (default), cuda:80, cpu, interpreter")
    q.add_argument("--html", help="where to write the HTML view")
    q.add_argument("--lines", type=int, default=40, help="lines per column in the terminal")
    c = sub.add_parser("course", help="the course's tools for instructors")
    c.add_argument("--release", metavar="DIR", required=True,
                   help="write the student notebooks (nbgrader metadata, no solutions) and "
                        "grade.py into DIR")
    args = p.parse_args(argv)
    if args.command == "quickstart":
        return quickstart(args)
    if args.command == "course":
        from workbench.course.release import release
        for path in release(Path(args.release)):
            print(path)
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
