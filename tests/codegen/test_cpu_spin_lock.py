"""CPU backend: a spin lock (``while tl.atomic_cas(lock, 0, 1) == 1``) across worker threads.

A program that holds the lock always makes progress (each worker thread runs its programs one
after another to completion, and the OS schedules every thread), so waiters get the lock. But
a program that fails (out-of-bounds access, failed assert) while holding the lock returns
without releasing it: its waiters on other worker threads used to spin forever and hang the
launch (and the Python process: the threads are in native code). Now a ``scf.while`` loop that
reads memory checks the launch's stop flag at its head and leaves the program once another
program failed, and the launch raises the failure."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.base import PointerArg
from workbench.backends.cpu import CpuBackend
from workbench.config import CompileContext, Options, Target
from workbench.errors import OutOfBoundsError


@wb.jit
def fail_holding_the_lock(Lock, Arrived, Tries, Out, limit):
    # Each program arrives, takes the lock (spinning at most `limit` tries, recorded in
    # Tries), waits (bounded) until both programs arrived, then stores out of bounds while
    # holding the lock; the release is never reached.
    pid = tl.program_id(0)
    tl.atomic_add(Arrived, 1)
    tries = 0
    while (tl.atomic_cas(Lock, 0, 1) == 1) & (tries < limit):
        tries += 1
    tl.store(Tries + pid, tries)
    waited = 0
    while (tl.atomic_add(Arrived, 0) < 2) & (waited < limit):
        waited += 1
    tl.store(Out + 1048576, pid)
    tl.atomic_xchg(Lock, 0)


@wb.jit
def scalar_while(Out, n):
    # a while loop that reads no memory: no stop check (it cannot wait for another program)
    i = 0
    acc = 0
    while i < n:
        acc += i
        i += 1
    tl.store(Out + tl.program_id(0), acc)


def _compile(jf, signature, **opts):
    from workbench.frontend import generate_ttir
    from workbench.passes.manager import PassManager
    from workbench.passes.pipelines import ttir_passes
    from workbench.runtime.compiler import parse_signature_entry
    from workbench.runtime.specialization import Specialization
    names = [p.name for p in jf.params]
    spec = Specialization(tuple(parse_signature_entry(n, s)
                                for n, s in zip(names, signature, strict=True)))
    options, ctx = Options(**opts), CompileContext()
    mod = PassManager(ttir_passes(options)).run(generate_ttir(jf.src, spec, options), ctx,
                                                 "ttir")
    return CpuBackend(Target.parse("cpu")).compile(mod, spec, options, ctx)


def _kernel_llir(res, name):
    """The optimised LLVM IR of the kernel body function ``@name`` (not the grid loop)."""
    text = res.stages[0].text
    start = text.index(f"@{name}(")
    return text[start:text.index("\n}\n", start)]


def _ptr(a):
    return PointerArg(a.ctypes.data, a.ctypes.data, a.ctypes.data + a.nbytes, a.itemsize, a)


def test_program_failing_inside_a_spin_lock_ends_the_launch():
    res = _compile(fail_holding_the_lock, ["*i32", "*i32", "*i32", "*i32", "i32"])
    body = _kernel_llir(res, "fail_holding_the_lock")
    assert "cmpxchg" in body and "load atomic i32" in body  # the lock, the stop flag
    res.launcher.workers = 2  # both programs at once, also on a one-core machine
    lock, arrived = np.zeros(1, np.int32), np.zeros(1, np.int32)
    tries, out = np.full(2, -1, np.int32), np.zeros(4, np.int32)
    limit = 1 << 28  # seconds of spinning: a waiter that reaches it was not stopped
    with pytest.raises(OutOfBoundsError) as ei:
        res.launcher((2, 1, 1), [_ptr(lock), _ptr(arrived), _ptr(tries), _ptr(out), limit])
    winner = ei.value.program_id[0]
    assert ei.value.arg == "Out" and "tl.store(Out + 1048576, pid)" in str(ei.value)
    assert lock[0] == 1 and arrived[0] == 2 and 0 <= tries[winner] < limit, (lock, tries)
    # the other program was still waiting for the lock when the winner failed: it left its
    # program instead of spinning (it never got past the loop to record its tries)
    assert tries[1 - winner] == -1, f"the waiting program spun {tries[1 - winner]} times"
    assert (out == 0).all()


def test_only_while_loops_that_read_memory_check_the_stop_flag():
    res = _compile(scalar_while, ["*i32", "i32"])
    assert "load atomic" not in _kernel_llir(res, "scalar_while")
    out = np.full(3, -1, np.int32)
    res.launcher((3, 1, 1), [_ptr(out), 10])
    np.testing.assert_array_equal(out, 45)
