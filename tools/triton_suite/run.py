"""Run Triton's own tutorials or language tests against the workbench, through the
``triton`` shim in this folder, and print what passed and why the rest did not.

    python tools/triton_suite/run.py --triton-src /path/to/triton --what core --every 20
    python tools/triton_suite/run.py --triton-src /path/to/triton --what tutorials

``--triton-src`` is a checkout (or ``git archive``) of Triton 3.6 holding ``python/tutorials``
and ``python/test``; its files are read where they are and never copied here. ``--what``:
``tutorials`` (each file run as a script in a subprocess, with a time limit), ``core``
(``test_core.py``) or the name of another file of ``python/test/unit/language``
(``test_standard``, ``test_random``, ...). The tests run with ``TRITON_INTERPRET=1`` and
``--device cpu`` and torch CPU tensors; ``--backend`` picks the workbench's interpreter or
its CPU backend; ``--backend cuda`` (on a machine with an NVIDIA GPU and a CUDA torch) runs
them with ``--device cuda`` on the workbench's CUDA backend, and tutorials with the GPU as the
active driver; and ``--backend triton`` runs the same files on real Triton's own interpreter
(the installed ``triton`` package, no shim: the figures ours are measured against);
``--compile-target cuda:90`` turns Triton's interpreter off and makes ``triton.compile``
without a target compile for that GPU, and the test helpers (``is_cuda()``,
``torch.cuda.get_device_capability()``) answer for it, for compile-only files such as
``test_compile_errors`` on a machine without that GPU: with ``--backend triton`` for real
Triton (its interpreter cannot compile, and there is no GPU driver), with ``--backend cpu``
for the workbench's CUDA backend compiling for that target.
``--every N`` keeps every Nth collected case (deterministic), ``-k`` is pytest's. ``--json``
writes the per-case records (a tutorial's record keeps the last 3,000 characters of its
stderr in ``tail`` when it failed or timed out); ``--ids`` takes such a file and runs
exactly its cases (the same sample under another backend, whose collection may differ).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

#: a tutorial that exits 0 after printing this has skipped its own work on this device
_GATED = re.compile(r"not supported|requires|only supported", re.IGNORECASE)
_EXC = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b")
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def _env(backend: str, compile_target: str = "") -> dict:
    env = dict(os.environ)
    env["TRITON_INTERPRET"] = "1"
    if backend == "triton":  # real Triton: only the plugin's folder, never the shim
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, "oracle"),
                                             env.get("PYTHONPATH", "")])
        if compile_target:
            env["TRITON_INTERPRET"] = "0"
            env["SUITE_COMPILE_TARGET"] = compile_target
        return env
    env["PYTHONPATH"] = os.pathsep.join([HERE, REPO, env.get("PYTHONPATH", "")])
    env["WORKBENCH_INTERPRET"] = "1" if backend == "interpreter" else "0"
    if backend == "cuda":  # the workbench's CUDA backend on a GPU: Triton's GPU paths
        env["TRITON_INTERPRET"] = "0"
    elif compile_target:  # compile-only files as on that GPU (suite_plugin: pytest_configure)
        env["TRITON_INTERPRET"] = "0"
        env["SUITE_COMPILE_TARGET"] = compile_target
    return env


def run_tests(args) -> list[dict]:
    name = "test_core" if args.what == "core" else args.what
    path = os.path.join(args.triton_src, "python", "test", "unit", "language", name + ".py")
    out = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
    env = _env(args.backend, args.compile_target)
    env.update(SUITE_OUT=out, SUITE_EVERY=str(args.every), SUITE_OFFSET=str(args.offset))
    if args.ids:  # exactly the cases of an earlier --json run (another backend's sample)
        ids = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
        with open(args.ids) as f, ids:
            ids.write("\n".join(r["id"] for r in json.load(f)) + "\n")
        env["SUITE_IDS"] = ids.name
    plugin = "suite_oracle" if args.backend == "triton" else "suite_plugin"
    cmd = [sys.executable, "-m", "pytest", path, "-p", plugin, "-q", "-p",
           "no:cacheprovider", "--device", "cuda" if args.backend == "cuda" else "cpu",
           "--rootdir",
           os.path.join(args.triton_src, "python", "test"), "-o", "addopts="]
    if args.k:
        cmd += ["-k", args.k]
    if args.timeout:
        cmd += ["--timeout", str(args.timeout)] if _has_timeout() else []
    subprocess.run(cmd, env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        rows = [json.loads(line) for line in f]
    os.unlink(out)
    return rows


def _has_timeout() -> bool:
    try:
        import pytest_timeout  # noqa: F401
    except ImportError:
        return False
    return True


def _where(lines: list[str]) -> str:
    """`` at FILE:LINE: SOURCE`` of the innermost frame of a traceback's lines, or ""."""
    for i in range(len(lines) - 1, -1, -1):
        m = re.match(r'\s*File "([^"]+)", line (\d+)', lines[i])
        if m:
            src = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return f" at {os.path.basename(m.group(1))}:{m.group(2)}: {src}"
    return ""


def run_tutorials(args) -> list[dict]:
    folder = os.path.join(args.triton_src, "python", "tutorials")
    rows = []
    for fname in sorted(os.listdir(folder)):
        if not fname.endswith(".py") or (args.k and args.k not in fname):
            continue
        t0 = time.time()
        try:
            p = subprocess.run([sys.executable, os.path.join(folder, fname)],
                               env=_env(args.backend), cwd=tempfile.gettempdir(),
                               capture_output=True, text=True, timeout=args.timeout or 300)
            lines = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
            errors = [ln for ln in lines if _EXC.match(ln)]
            last = (errors or lines or [""])[-1] if p.returncode else ""
            if last and ":" not in last:  # a bare exception (an assert): say where
                last += _where(lines)
            outcome = "passed" if p.returncode == 0 else "failed"
            said = (p.stdout.strip().splitlines() or [""])[-1]
            tail = p.stderr[-3000:] if p.returncode else ""  # the traceback, for the json
            if outcome == "passed" and _GATED.search(said):
                outcome, last = "skipped", said  # the tutorial gated itself off this device
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            said = (out.strip().splitlines() or [""])[-1]
            outcome = "timeout"
            last = f"still running after {args.timeout or 300} s; last output: {said[:150]}"
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            tail = (out[-1500:] + "\n--- stderr ---\n" + err[-1500:]) if out or err else ""
        rows.append({"id": fname, "func": fname, "outcome": outcome,
                     "kind": last.split(":", 1)[0], "msg": last[:300], "tail": tail,
                     "seconds": round(time.time() - t0, 1)})
    return rows


def report(rows: list[dict], top: int) -> None:
    """Print passed/failed/errored/skipped per test function and the commonest reasons."""
    table: dict = collections.defaultdict(collections.Counter)
    for r in rows:
        table[r["func"]][r["outcome"]] += 1
    cols = ["passed", "failed", "error", "skipped", "timeout"]
    width = max([len(f) for f in table] + [8])
    print(f"{'function':<{width}} " + " ".join(f"{c:>7}" for c in cols))
    for func in sorted(table):
        print(f"{func:<{width}} " + " ".join(f"{table[func][c]:>7}" for c in cols))
    total = collections.Counter(r["outcome"] for r in rows)
    print(f"{'TOTAL':<{width}} " + " ".join(f"{total[c]:>7}" for c in cols))
    ran = total["passed"] + total["failed"] + total["error"] + total["timeout"]
    if ran:
        print(f"pass rate of cases run (skips left out): {total['passed']}/{ran} "
              f"= {100.0 * total['passed'] / ran:.1f}%")
    reasons = collections.Counter(r["msg"][:120] for r in rows
                                  if r["outcome"] in ("failed", "error", "timeout"))
    print(f"\ntop {top} failure reasons:")
    for msg, n in reasons.most_common(top):
        print(f"{n:6d}  {msg}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--triton-src", required=True, help="a Triton 3.6 checkout")
    ap.add_argument("--what", default="core", help="tutorials, core, or test_<name>")
    ap.add_argument("--backend", choices=["interpreter", "cpu", "cuda", "triton"],
                    default="interpreter")
    ap.add_argument("--compile-target", default="", help="with --backend triton or cpu: "
                    "cuda:80 or cuda:90, triton.compile without a target compiles for that "
                    "GPU, and is_cuda() answers for it (compile-only files)")
    ap.add_argument("-k", default=None, help="pytest -k expression (tutorials: name part)")
    ap.add_argument("--every", type=int, default=1, help="keep every Nth collected case")
    ap.add_argument("--offset", type=int, default=0, help="which case of each N to keep")
    ap.add_argument("--timeout", type=int, default=0, help="seconds per case / tutorial")
    ap.add_argument("--top", type=int, default=25, help="how many failure reasons to list")
    ap.add_argument("--json", default=None, help="write the per-case records here")
    ap.add_argument("--ids", default=None, help="run only the cases of this --json file")
    args = ap.parse_args(argv)
    args.triton_src = os.path.abspath(args.triton_src)  # the cases run in another folder
    for sub in ("tutorials", "test"):
        if not os.path.isdir(os.path.join(args.triton_src, "python", sub)):
            ap.error(f"{args.triton_src} has no python/{sub}: give a Triton 3.6 checkout")
    rows = run_tutorials(args) if args.what == "tutorials" else run_tests(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    report(rows, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
