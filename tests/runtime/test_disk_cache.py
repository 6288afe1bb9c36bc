"""The on-disk compile cache: hits across fresh in-memory state, keys, corruption, races."""
from __future__ import annotations

import importlib.util
import linecache
import os

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.entry import unpack_parts
from workbench.errors import OutOfBoundsError
from workbench.runtime import disk_cache as dc

FACTOR = tl.constexpr(3)


@wb.jit
def _triple(x):
    return x * FACTOR


@wb.jit
def axpy3(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, _triple(x) + y, mask=mask)


@wb.jit
def unmasked_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))  # no mask: out of bounds past the end


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "wbcache"
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(d))
    monkeypatch.delenv("WORKBENCH_DISK_CACHE", raising=False)
    monkeypatch.delenv("WORKBENCH_ALWAYS_COMPILE", raising=False)
    return d


def fresh(kernel):
    """A new JIT function for the same Python function: empty in-memory cache."""
    return wb.jit(kernel.fn)


def entries(d):
    return sorted(d.glob("*/*.wbk"))


def run_axpy(kernel, n=1000, dtype=np.float32, **kw):
    rng = np.random.default_rng(n)
    x, y = rng.random(n).astype(dtype), rng.random(n).astype(dtype)
    out = np.full(n, np.nan, dtype)
    ck = kernel[(wb.cdiv(n, 256),)](x, y, out, n, BLOCK=256, **kw)
    np.testing.assert_allclose(out, 3 * x + y, rtol=1e-6)
    return ck


@pytest.mark.parametrize("target", ["cpu", "interpreter"])
def test_hit_across_fresh_state_gives_same_kernel(cache, target, monkeypatch):
    if target == "interpreter":
        monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    cold = run_axpy(fresh(axpy3))
    assert cold.extra["disk_cache"] == "miss"
    assert len(entries(cache)) == 1
    # a hit must not run the frontend at all
    import workbench.frontend as frontend

    def boom(*a, **k):
        raise AssertionError("frontend ran on a cache hit")
    monkeypatch.setattr(frontend, "generate_ttir", boom)
    warm = run_axpy(fresh(axpy3))
    assert warm.extra["disk_cache"] == "hit"
    assert warm.asm == cold.asm
    assert warm.line_maps == cold.line_maps
    assert warm.metadata == cold.metadata
    assert warm.timings["disk_load"] > 0 and warm.timings["total"] == cold.timings["total"]
    (path,) = entries(cache)
    if target == "cpu":  # the first reload adds the machine code; the next one loads it
        obj = _machine_code(path)
        assert obj is not None and len(obj) > 100
        third = run_axpy(fresh(axpy3), n=3001)
        assert third.extra["disk_cache"] == "hit"
        assert _machine_code(path) == obj


def _machine_code(path):
    """The machine code in the CPU backend's part of the entry at ``path``, or None."""
    _, parts = unpack_parts(dc.read_bytes(path))
    return unpack_parts(parts["launch"])[1].get("object")


def test_cached_cpu_kernel_reports_out_of_bounds_at_the_source_line(cache):
    x, out = np.arange(100, dtype=np.float32), np.zeros(100, np.float32)
    with pytest.raises(OutOfBoundsError) as cold:
        fresh(unmasked_copy)[(1,)](x, out, BLOCK=128)
    with pytest.raises(OutOfBoundsError) as warm:
        k = fresh(unmasked_copy)
        k[(1,)](x, out, BLOCK=128)
    assert next(iter(k.cache.values())).extra["disk_cache"] == "hit"
    assert warm.value.loc == cold.value.loc and warm.value.loc.line > 0
    assert warm.value.program_id == (0, 0, 0) and str(warm.value) == str(cold.value)


def test_each_constexpr_dtype_option_and_target_gets_its_own_entry(cache):
    n = 1000
    x = np.ones(n, np.float32)
    variants = [dict(BLOCK=256), dict(BLOCK=128), dict(BLOCK=256, num_warps=8),
                dict(BLOCK=256, target="interpreter")]
    keys = set()
    for v in variants:
        ck = wb.compile(fresh(axpy3), x, x, x, n, **v)
        assert ck.extra["disk_cache"] == "miss", v
        keys.add(dc.cache_key(axpy3, ck.spec, ck.options, ck.target))
    ck64 = wb.compile(fresh(axpy3), x.astype(np.float64), x.astype(np.float64),
                      x.astype(np.float64), n, BLOCK=256)
    assert ck64.extra["disk_cache"] == "miss" and "f64" in ck64.asm["ttir"]
    keys.add(dc.cache_key(axpy3, ck64.spec, ck64.options, ck64.target))
    assert len(keys) == 5 and len(entries(cache)) == 5
    # each variant now hits its own entry, and a float64 launch never gets the f32 binary
    for v in variants:
        assert wb.compile(fresh(axpy3), x, x, x, n, **v).extra["disk_cache"] == "hit"
    run_axpy(fresh(axpy3), dtype=np.float64)
    run_axpy(fresh(axpy3), dtype=np.float32)


HELPER_SRC = '''
import workbench as wb
import workbench.language as tl
K = tl.constexpr({k})

@wb.jit
def helper(x):
    return x * {factor}

@wb.jit
def kern(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, helper(tl.load(x_ptr + offs)) + K)
'''


def _load(path, text, name):
    path.write_text(text)
    linecache.checkcache(str(path))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_key_covers_helper_source_and_constexpr_globals(cache, tmp_path):
    path = tmp_path / "kmod.py"
    x = np.ones(16, np.float32)

    def key(factor, k, name):
        mod = _load(path, HELPER_SRC.format(factor=factor, k=k), name)
        ck = wb.compile(mod.kern, x, BLOCK=16)
        return dc.cache_key(mod.kern, ck.spec, ck.options, ck.target), ck

    k1, ck1 = key(2, 1, "kmod_a")
    k2, ck2 = key(5, 1, "kmod_b")  # only the helper's body changed
    k3, ck3 = key(2, 7, "kmod_c")  # only a constexpr global changed
    k4, ck4 = key(2, 1, "kmod_d")  # back to the first text
    assert len({k1, k2, k3}) == 3 and k4 == k1
    assert [c.extra["disk_cache"] for c in (ck1, ck2, ck3, ck4)] == ["miss"] * 3 + ["hit"]
    out = x.copy()
    ck4[(1,)](out)
    np.testing.assert_array_equal(out, 3 * x)


def test_jit_function_constexpr_keys_by_source_not_identity():
    from workbench.runtime.specialization import ArgSpec, Specialization
    a, b = fresh(_triple), fresh(_triple)
    assert repr(a) != repr(b)  # the in-memory key differs between the two objects...

    def spec(f):
        return Specialization((ArgSpec("combine", "constexpr", "constexpr", value=f),))
    assert dc._spec_key(spec(a)) == dc._spec_key(spec(b))  # ...the disk key does not
    assert dc._spec_key(spec(a)) != dc._spec_key(spec(axpy3))
    fp = dc.source_fingerprint(axpy3)
    assert sorted(s[1] for s in fp if s[0] == "fn") == ["_triple", "axpy3"]
    assert ("global", "FACTOR", "constexpr:" + repr(FACTOR)) in fp


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "header"])
def test_corrupted_or_truncated_entry_is_rebuilt(cache, damage):
    run_axpy(fresh(axpy3))
    (path,) = entries(cache)
    good = path.read_bytes()
    bad = {"flip": good[:-10] + bytes([good[-10] ^ 0xFF]) + good[-9:],
           "truncate": good[:len(good) // 2], "empty": b"",
           "header": good.replace(b"WBCACHE %d" % dc.FORMAT_VERSION, b"WBCACHE 9", 1)}[damage]
    assert bad != good
    path.write_bytes(bad)
    assert dc.read_bytes(path) is None
    ck = run_axpy(fresh(axpy3))
    assert ck.extra["disk_cache"] == "miss"
    assert dc.read_bytes(path) is not None and path.read_bytes() != bad
    assert run_axpy(fresh(axpy3)).extra["disk_cache"] == "hit"


def test_entry_format_roundtrip_and_atomic_write(tmp_path):
    p = tmp_path / "a" / "b.wbk"
    dc.write_entry(p, {"x": [1, 2, "three"]})
    assert dc.read_entry(p) == {"x": [1, 2, "three"]}
    assert [f.name for f in p.parent.iterdir()] == ["b.wbk"]  # no temporary left behind
    head = p.read_bytes().split(b"\n", 1)[0].split(b" ")
    assert head[0] == b"WBCACHE" and int(head[3]) == len(p.read_bytes().split(b"\n", 1)[1])


_RACE_KERNEL = """
import workbench as wb
import workbench.language as tl


@wb.jit
def axpy3(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 3 * x + tl.load(y_ptr + offs, mask=mask), mask=mask)
"""

_RACE_MAIN = """
import os, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import race_kernel
go = sys.argv[2]
while not os.path.exists(go):  # start together
    time.sleep(0.005)
n = 777
x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
out = np.full(n, np.nan, np.float32)
ck = race_kernel.axpy3[(4,)](x, y, out, n, BLOCK=256)
assert np.allclose(out, 3 * x + y)
print("ok", ck.extra["disk_cache"])
"""


def test_concurrent_processes_compiling_the_same_kernel(cache, tmp_path):
    """Three fresh processes compile the same kernel at once: each gets a valid result and the
    cache ends with one valid entry and no temp files (separate interpreters, not fork: the
    CPU backend keeps worker threads, and forking a threaded process is unsafe)."""
    import subprocess
    import sys
    mod = tmp_path / "race"
    mod.mkdir()
    (mod / "race_kernel.py").write_text(_RACE_KERNEL)
    (mod / "main.py").write_text(_RACE_MAIN)
    go = tmp_path / "go"
    env = dict(os.environ, WORKBENCH_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    procs = [subprocess.Popen([sys.executable, str(mod / "main.py"), str(mod), str(go)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    go.write_text("go")
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    assert all(o[0].startswith("ok ") for o in outs), outs
    (path,) = entries(cache)
    assert dc.read_bytes(path) is not None
    assert not [f for f in path.parent.iterdir() if f.suffix == ".tmp"]


def test_cache_dir_env_default_and_switches(cache, monkeypatch, tmp_path):
    assert dc.cache_dir() == cache
    monkeypatch.delenv("WORKBENCH_CACHE_DIR")
    assert dc.cache_dir().name == "tile-workbench"
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "other"))
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "0")
    run_axpy(fresh(axpy3))
    assert not (tmp_path / "other").exists() and not entries(cache)
    monkeypatch.setenv("WORKBENCH_DISK_CACHE", "1")
    assert run_axpy(fresh(axpy3)).extra["disk_cache"] == "miss"
    assert len(entries(tmp_path / "other")) == 1 and not entries(cache)
    monkeypatch.setenv("WORKBENCH_ALWAYS_COMPILE", "1")
    assert run_axpy(fresh(axpy3)).extra["disk_cache"] == "miss"
    monkeypatch.delenv("WORKBENCH_ALWAYS_COMPILE")
    assert run_axpy(fresh(axpy3)).extra["disk_cache"] == "hit"


def test_keep_snapshots_compiles_and_still_stores(cache):
    x = np.ones(8, np.float32)
    ck = wb.compile(fresh(axpy3), x, x, x, 8, BLOCK=8, keep_snapshots=True)
    assert ck.snapshots and ck.extra["disk_cache"] == "miss"
    assert wb.compile(fresh(axpy3), x, x, x, 8, BLOCK=8).extra["disk_cache"] == "hit"


def test_a_hit_keeps_the_compile_report(cache):
    """The report's data (shared-memory accesses with their bank-conflict degrees, notes) comes
    back from the disk as the compile made it."""
    from workbench.testing.examples import matmul_fp16_kernel

    def compile_matmul():
        return wb.compile(fresh(matmul_fp16_kernel), "*fp16:16", "*fp16:16", "*fp16:16", 128,
                          128, 128, target="cuda:80", BM=64, BN=64, BK=32, GROUP_M=8)

    cold = compile_matmul()
    warm = compile_matmul()
    assert (cold.extra["disk_cache"], warm.extra["disk_cache"]) == ("miss", "hit")
    accesses = cold.extra["shared_accesses"]
    assert accesses and all(isinstance(a, dict) for a in accesses)
    assert warm.extra["shared_accesses"] == accesses
    assert warm.extra["notes"] == cold.extra["notes"]
