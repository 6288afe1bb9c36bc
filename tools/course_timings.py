"""How long each course lesson takes to run, as a student finishes it: every answer cell
filled with the package's solution, the notebook executed top to bottom by nbclient in a fresh
kernel with an empty compile cache, wall-clock seconds per lesson (kernel start included).

    python tools/course_timings.py [--markdown] [LESSON.ipynb ...]

Prints one line per lesson (a Markdown table with ``--markdown``) and the machine it ran on.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def run_lesson(path: Path) -> tuple:
    """``(seconds, checks passed, checks)`` for one lesson run with its solutions."""
    import nbformat
    from nbclient import NotebookClient

    from workbench.course import solution
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        course = cell.metadata.get("course", {})
        if course.get("role") == "answer":
            cell.source = solution(course["exercise"]).replace("@jit", "@wb.jit", 1)
    with tempfile.TemporaryDirectory() as cache:
        env = {"WORKBENCH_CACHE_DIR": cache,
               "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                             if p)}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            t0 = time.perf_counter()
            NotebookClient(nb, timeout=600, kernel_name="python3",
                           resources={"metadata": {"path": str(ROOT)}}).execute()
            seconds = time.perf_counter() - t0
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    checks = [o.get("data", {}).get("text/html", "") for c in nb.cells
              if c.metadata.get("course", {}).get("role") == "check" for o in c.outputs]
    passed = sum('data-correct="1"' in h for h in checks)
    return seconds, passed, len(checks)


def main(argv=None) -> int:
    """Run the lessons named (default: all of ``notebooks/course``) and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lessons", nargs="*", type=Path)
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args(argv)
    lessons = args.lessons or sorted((ROOT / "notebooks" / "course").glob("*.ipynb"))
    print(f"{platform.node()}: {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}, Python {platform.python_version()}")
    if args.markdown:
        print("| lesson | seconds | checks right |\n|---|---:|---:|")
    total = 0.0
    for path in lessons:
        seconds, passed, n = run_lesson(path)
        total += seconds
        if args.markdown:
            print(f"| {path.stem} | {seconds:.0f} | {passed} of {n} |", flush=True)
        else:
            print(f"{path.stem:34s} {seconds:6.1f} s  {passed}/{n} checks right", flush=True)
    print(f"total {total:.0f} s; load average now {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
