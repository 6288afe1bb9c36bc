"""Fuzzing over many seeds in worker processes, so that a program which kills its process
(a segfault in generated code, an abort in a library) is reported as a crash with its seed
instead of ending the run.

Each worker is a fresh Python process (``python -m workbench.testing.fuzz.workers``, so the
caller's script is never re-imported) that reads one seed at a time from its stdin and writes
the seed's result as one JSON line. The parent knows which seed each worker holds, so a
worker that dies (or runs past ``timeout`` seconds on one seed and is killed) yields a
``crash`` result for exactly that seed, and a new worker takes the rest. Every seed is
independent of the others (its program, its data and its files come from the seed alone), so
results do not depend on the number of workers or the order.
"""
from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from multiprocessing.connection import wait

_TAG = "@@wb-fuzz-result "
STARTUP = 120.0  # seconds a new worker may spend importing before its first seed's clock runs


def run_one(task: str, seed: int, options: dict) -> dict:
    """The result of one seed in this process. ``task`` is ``"valid"`` (a random valid
    program checked against numpy: :func:`~workbench.testing.fuzz.check.check`; ``options``:
    ``ptx_every`` k and ``first`` (PTX for cuda:80/90 when ``(seed - first) % k == 0``),
    ``ptxas``, ``cuda``) or ``"bad"`` (a mutant run by
    :func:`~workbench.testing.fuzz.badcheck.run`). ``"selftest"`` checks the pool itself: a
    seed divisible by 7 kills its process with SIGSEGV, one divisible by 11 sleeps for
    ``options["sleep"]`` seconds, any other returns ``{"seed": seed}``."""
    if task == "selftest":
        if seed % 7 == 0:
            import signal
            os.kill(os.getpid(), signal.SIGSEGV)
        if seed % 11 == 0:
            time.sleep(float(options.get("sleep", 0)))
        return {"seed": seed}
    if task == "bad":
        from .badcheck import run
        from .mutate import mutate
        m = mutate(seed)
        out = asdict(run(m))
        out["note"] = m.note
        return out
    from .build import generate
    from .check import check
    every = int(options.get("ptx_every", 0))
    archs = (80, 90) if every and (seed - int(options.get("first", 0))) % every == 0 else ()
    res = check(generate(seed), ptx_archs=archs, ptxas=options.get("ptxas"),
                cuda=bool(options.get("cuda")))
    return asdict(res)


def crash_result(task: str, seed: int, exitcode, hung: bool, stderr: str = "") -> dict:
    """The result recorded for a seed whose worker died (``exitcode``, negative for a
    signal) or was killed after running too long (``hung``); ``stderr``: the end of what the
    worker printed there."""
    what = "timed out and was killed" if hung else f"died (exit code {exitcode})"
    msg = f"the worker process {what} while running seed {seed}"
    if stderr.strip():
        msg += "\n" + stderr.strip()[-1500:]
    if task == "bad":
        return {"seed": seed, "kind": "?", "expect": "?", "stages": {"process": "crash"},
                "messages": {"process": msg}, "note": ""}
    return {"seed": seed, "passed": [], "failures": {"crash": msg}, "unsupported": {}}


class _Worker:
    """One worker process and the seed it holds."""

    def __init__(self, task: str, options: dict):
        import workbench

        from ...config import child_env
        root = os.path.dirname(os.path.dirname(os.path.abspath(workbench.__file__)))
        env = child_env(root)
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "workbench.testing.fuzz.workers", task, json.dumps(options)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, env=env,
            text=True, bufsize=1)
        self.seed: int | None = None
        self.t0 = 0.0
        self.fresh = True

    def give(self, seed: int | None) -> None:
        """Send ``seed`` (None: stop). A fresh worker's first seed gets :data:`STARTUP`
        seconds more before it counts as hung (the worker imports the compiler first)."""
        assert self.proc.stdin is not None
        self.seed, self.t0 = seed, time.monotonic() + (STARTUP if self.fresh else 0.0)
        self.fresh = False
        try:
            self.proc.stdin.write("stop\n" if seed is None else f"{seed}\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died; the caller sees it exit

    def read(self) -> dict | None:
        """The next result line, or None when the worker's stdout ended."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                return None
            if line.startswith(_TAG):
                return json.loads(line[len(_TAG):])

    def stderr_tail(self) -> str:
        """The last 2,000 characters the worker wrote to stderr."""
        self.err.seek(0)
        return self.err.read().decode(errors="replace")[-2000:]

    def close(self) -> None:
        """Stop the worker and wait for it."""
        if self.proc.poll() is None:
            self.give(None)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()


def run_pool(task: str, seeds, jobs: int = 1, options: dict | None = None,
             timeout: float = 600.0, on_result=None) -> list:
    """Run every seed of ``seeds`` in ``jobs`` worker processes; returns one result dict per
    seed (in completion order; see :func:`run_one` and :func:`crash_result`). ``on_result``
    is called with each result as it arrives. ``timeout`` (seconds per seed) bounds a hung
    program."""
    todo = collections.deque(seeds)
    results: list = []
    busy: list = []

    def start():
        w = _Worker(task, options or {})
        w.give(todo.popleft())
        busy.append(w)

    def emit(res):
        results.append(res)
        if on_result is not None:
            on_result(res)

    def finish(w, res):
        emit(res)
        if todo:
            w.give(todo.popleft())
        else:
            busy.remove(w)
            w.close()

    try:
        for _ in range(max(1, min(jobs, len(todo)))):
            start()
        _drive(busy, todo, task, timeout, finish, start, emit)
    finally:  # interrupted (Ctrl-C, an exception in on_result): no worker outlives the pool
        for w in busy:
            w.proc.kill()
            w.proc.wait()
            w.err.close()
    return results


def _drive(busy, todo, task, timeout, finish, start, emit) -> None:
    """Wait for results; a worker that exits or overruns ``timeout`` on its seed gives that
    seed a crash result and is replaced while seeds remain."""
    while busy:
        assert all(w.proc.stdout is not None for w in busy)
        ready = wait([w.proc.stdout for w in busy], timeout=1.0)
        for w in list(busy):
            if w.proc.stdout in ready:
                res = w.read()
                if res is not None:
                    finish(w, res)
                    continue
            hung = w.proc.poll() is None and time.monotonic() - w.t0 > timeout
            if w.proc.poll() is not None or hung:
                if hung:
                    w.proc.kill()
                w.proc.wait()
                busy.remove(w)
                seed = w.seed
                assert seed is not None
                emit(crash_result(task, seed, w.proc.returncode, hung, w.stderr_tail()))
                w.close()
                if todo:
                    start()


def _serve(task: str, options: dict) -> None:
    """A worker's loop: a seed per stdin line, a tagged JSON result per stdout line."""
    import faulthandler
    faulthandler.enable()  # a segfault prints the Python stack to stderr before dying
    for line in sys.stdin:
        if line.strip() == "stop":
            return
        res = run_one(task, int(line), options)
        sys.stdout.write(_TAG + json.dumps(res, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _serve(sys.argv[1], json.loads(sys.argv[2]))
