"""The on-disk cache under concurrency: processes and threads compiling and launching the same
and different kernels at once, a writer killed mid-write, readers racing a writer. No corrupt
entry is ever loaded and every launch gives numpy's answer (fresh random inputs).

Separate interpreters (subprocess), not fork: the CPU backend keeps worker threads."""
from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from workbench.runtime import disk_cache as dc

KERNELS = '''
import workbench as wb
import workbench.language as tl


@wb.jit
def axpy(x_ptr, y_ptr, out_ptr, n, A: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, A * x + tl.load(y_ptr + offs, mask=mask), mask=mask)


@wb.jit
def rowsum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))
'''

# each thread launches axpy with A in 1..3 (threads and processes share some specialisations
# and not others) and rowsum, checking every result against numpy; n is never a multiple of
# 16, so each A has one specialisation (one entry)
WORKER = '''
import os, sys, threading, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import kernels
go, rounds = sys.argv[2], int(sys.argv[3])
while not os.path.exists(go):  # start together
    time.sleep(0.002)
seen, errors = set(), []


def job(t):
    rng = np.random.default_rng()
    try:
        for r in range(rounds):
            n = 16 * int(rng.integers(6, 200)) + 5  # never divisible by 16: one specialisation
            x = rng.standard_normal(n).astype(np.float32)
            y = rng.standard_normal(n).astype(np.float32)
            out = np.full(n, np.nan, np.float32)
            a = (t + r) % 3 + 1
            ck = kernels.axpy[(-(-n // 256),)](x, y, out, n, A=a, BLOCK=256)
            np.testing.assert_allclose(out, a * x + y, rtol=1e-6, atol=1e-6)
            m = rng.standard_normal((7, 50)).astype(np.float32)
            s = np.full(7, np.nan, np.float32)
            ck2 = kernels.rowsum[(7,)](m, s, 50, BLOCK=64)
            np.testing.assert_allclose(s, m.sum(axis=1), rtol=1e-5, atol=1e-5)
            seen.update((ck.extra.get("disk_cache"), ck2.extra.get("disk_cache")))
    except BaseException:
        import traceback
        errors.append(traceback.format_exc())


threads = [threading.Thread(target=job, args=(t,)) for t in range(3)]
for th in threads:
    th.start()
for th in threads:
    th.join()
if errors:
    sys.exit("ERR " + " | ".join(errors))
print("ok", " ".join(sorted(s for s in seen if s)))
'''

# compiles axpy (A=2) with os.fdopen wrapped so the entry's temporary file gets half its bytes,
# then says so (the marker file) and hangs until killed
KILLED_WRITER = '''
import os, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
marker = sys.argv[2]
real_fdopen = os.fdopen


class HalfWriter:
    def __init__(self, f):
        self.f = f

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, data):
        self.f.write(data[:len(data) // 2])
        self.f.flush()
        open(marker, "w").close()
        time.sleep(120)  # killed here, mid-write


os.fdopen = lambda fd, mode="r", *a, **k: HalfWriter(real_fdopen(fd, mode, *a, **k))
import kernels
x = np.ones(300, np.float32)
kernels.axpy[(2,)](x, x, np.empty_like(x), 300, A=2, BLOCK=256)
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A module of kernels, a cache folder and the environment of the subprocesses."""
    mod = tmp_path / "mod"
    mod.mkdir()
    (mod / "kernels.py").write_text(KERNELS)
    (mod / "worker.py").write_text(WORKER)
    (mod / "killed.py").write_text(KILLED_WRITER)
    cache = tmp_path / "cache"
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(cache))
    monkeypatch.delenv("WORKBENCH_DISK_CACHE", raising=False)
    monkeypatch.delenv("WORKBENCH_ALWAYS_COMPILE", raising=False)
    monkeypatch.delenv("WORKBENCH_INTERPRET", raising=False)
    env = dict(os.environ, WORKBENCH_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return mod, cache, env


def _workers(mod, env, go, n, rounds):
    return [subprocess.Popen([sys.executable, str(mod / "worker.py"), str(mod), str(go),
                              str(rounds)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(n)]


def _entries(cache):
    return sorted(cache.glob("*/*.wbk"))


def test_processes_and_threads_compile_and_launch_at_once(project, tmp_path):
    """Three processes of three threads each launch two kernels in four specialisations at
    once; then three more find every entry on disk. All results equal numpy's, every entry
    is valid and no temporary file is left."""
    mod, cache, env = project
    go = tmp_path / "go"
    procs = _workers(mod, env, go, 3, 2)
    go.write_text("go")
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [o[1][-3000:] for o in outs]
    assert all(o[0].startswith("ok") for o in outs), outs
    assert any("miss" in o[0] for o in outs), outs
    found = _entries(cache)
    assert len(found) == 4  # axpy with A = 1, 2, 3 and rowsum
    assert all(dc.read_bytes(p) is not None for p in found)
    assert not list(cache.glob("*/*.tmp"))
    procs = _workers(mod, env, go, 3, 1)  # the second wave loads what the first stored
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [o[1][-3000:] for o in outs]
    assert all(o[0].split() == ["ok", "hit"] for o in outs), outs


def _kill_mid_write(mod, env, tmp_path):
    marker = tmp_path / "writing"
    proc = subprocess.Popen([sys.executable, str(mod / "killed.py"), str(mod), str(marker)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the writer never started writing"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def _launch_axpy(mod, a=2):
    """Launch axpy from a fresh import of the kernels' file (an empty in-memory cache)."""
    spec = importlib.util.spec_from_file_location(f"wb_conc_kernels_{time.monotonic_ns()}",
                                                  mod / "kernels.py")
    assert spec is not None and spec.loader is not None
    kernels = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernels)
    rng = np.random.default_rng()
    x, y = rng.standard_normal(700).astype(np.float32), rng.standard_normal(700).astype(np.float32)
    out = np.full(700, np.nan, np.float32)
    ck = kernels.axpy[(3,)](x, y, out, 700, A=a, BLOCK=256)
    np.testing.assert_allclose(out, a * x + y, rtol=1e-6)
    return ck


def test_a_writer_killed_mid_write_leaves_no_entry_and_the_next_compile_is_correct(
        project, tmp_path):
    mod, cache, env = project
    _kill_mid_write(mod, env, tmp_path)
    assert _entries(cache) == []  # only the temporary file, half written
    (tmp,) = cache.glob("*/*.tmp")
    assert 0 < tmp.stat().st_size
    assert _launch_axpy(mod).extra["disk_cache"] == "miss"
    (entry,) = _entries(cache)
    assert dc.read_bytes(entry) is not None
    assert tmp.exists()  # a recent temporary may belong to a live writer: kept
    assert _launch_axpy(mod).extra["disk_cache"] == "hit"


def test_a_writer_killed_while_replacing_an_entry_leaves_the_old_one(project, tmp_path):
    mod, cache, env = project
    _launch_axpy(mod)
    (entry,) = _entries(cache)
    good = entry.read_bytes()
    env = dict(env, WORKBENCH_ALWAYS_COMPILE="1")  # the killed process rewrites the entry
    _kill_mid_write(mod, env, tmp_path)
    assert entry.read_bytes() == good
    (tmp,) = cache.glob("*/*.tmp")
    old = time.time() - dc.STALE_TMP_SECONDS - 5
    os.utime(tmp, (old, old))  # its writer died long ago
    assert _launch_axpy(mod).extra["disk_cache"] == "hit"
    # a torn entry (written in place by something that does not rename) is detected
    good = entry.read_bytes()
    entry.write_bytes(good[:len(good) // 2])
    assert dc.read_bytes(entry) is None
    assert _launch_axpy(mod).extra["disk_cache"] == "miss"  # rebuilt
    assert dc.read_bytes(entry) is not None
    assert not tmp.exists()  # the stale temporary was swept by a later write of the entry


def test_readers_racing_a_writer_never_see_a_partial_entry(tmp_path):
    """Four threads read one entry while another rewrites it 40 times with entries of
    different sizes: every read is one of the written payloads, whole."""
    path = tmp_path / "ab" / "entry.wbk"
    rng = np.random.default_rng()
    payloads = [rng.bytes(int(n)) for n in rng.integers(1, 100_000, 8)]
    dc.write_bytes(path, payloads[0])
    done = threading.Event()
    bad: list = []
    reads = [0]

    def reader():
        while not done.is_set():
            got = dc.read_bytes(path)
            reads[0] += 1
            if got not in payloads:
                bad.append(None if got is None else len(got))

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(40):
        dc.write_bytes(path, payloads[i % len(payloads)])
    done.set()
    for t in threads:
        t.join()
    assert bad == [] and reads[0] > 0
    assert [p.name for p in path.parent.iterdir()] == ["entry.wbk"]


def test_llvmlite_escape_table_is_full_before_any_thread_compiles():
    """llvmlite builds its string-escaping table lazily on first use, which two compiling
    threads can race (one read a half-filled table: KeyError 47); importing the code
    generators (which every compile does first, under the import lock) fills it once."""
    from llvmlite.ir import values

    import workbench.codegen  # noqa: F401
    table = values._escape_string.__defaults__[0]
    assert sorted(table) == list(range(256))
    assert values._escape_string("a/b\n") == "a/b\\0a"
