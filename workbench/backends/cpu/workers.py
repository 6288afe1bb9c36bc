"""A process-wide pool of helper threads for CPU kernel launches.

A launch runs its first share on the calling thread and hands the others to helper threads
that live for the whole process (starting a thread costs tens of microseconds; waking a
blocked one, a few). Each share is one ctypes call into native code, which releases the GIL,
so the shares run in parallel on different cores. Helpers are daemon threads: they never keep
the interpreter from exiting.
"""
from __future__ import annotations

import os
import queue
import threading

_LOCK = threading.Lock()
_HELPERS: list = []


def _forget_helpers_in_child() -> None:
    """A forked child has only the forking thread: the helpers' queues would never be read,
    so it starts an empty pool (and a fresh lock, which another thread may have held)."""
    global _LOCK
    _LOCK = threading.Lock()
    _HELPERS.clear()


os.register_at_fork(after_in_child=_forget_helpers_in_child)


def _helper_main(q: queue.SimpleQueue) -> None:
    while True:
        fn, done, errors = q.get()
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised on the launching thread
            errors.append(exc)
        finally:
            done.release()


def _helpers(n: int) -> list:
    with _LOCK:
        while len(_HELPERS) < n:
            q: queue.SimpleQueue = queue.SimpleQueue()
            t = threading.Thread(target=_helper_main, args=(q,), daemon=True,
                                 name=f"workbench-cpu-{len(_HELPERS) + 1}")
            t.start()
            _HELPERS.append(q)
        return _HELPERS[:n]


def run_parallel(jobs: list) -> None:
    """Run the callables ``jobs`` at once: ``jobs[0]`` on this thread, the others on helper
    threads; return when all are done. The first exception raised by a helper's job is
    re-raised here (after every job finished)."""
    if len(jobs) == 1:
        jobs[0]()
        return
    done = threading.Semaphore(0)
    errors: list = []
    for q, fn in zip(_helpers(len(jobs) - 1), jobs[1:], strict=True):
        q.put((fn, done, errors))
    try:
        jobs[0]()
    finally:
        for _ in jobs[1:]:
            done.acquire()
    if errors:
        raise errors[0]
