"""CPU backend atomics (tt.atomic_rmw, tt.atomic_cas) on hand-built ttir: every op kind vs
numpy, old values returned, masks, a multi-threaded histogram vs np.bincount, a CAS spin lock
across threads, bounds checks."""
from __future__ import annotations

import numpy as np
import pytest

from tests.ir_kit import FILE, K, ptr, run
from workbench.errors import OutOfBoundsError
from workbench.ir.types import TensorType, bf16, f16, f32, f64, i1, i32, i64

rng = np.random.default_rng()
B = 64


def rmw(k, kind, p, v, mask=None, sem="acq_rel"):
    ops = [p, v] + ([mask] if mask is not None else [])
    return k.op("tt.atomic_rmw", ops, v.type, atomic_rmw_op=kind, sem=sem, scope="gpu")


def _rmw_kernel(kind, t, masked=False, sem="acq_rel"):
    """mem[i] = mem[i] <kind> val[i] (where mask[i]); old[i] = previous mem[i]."""
    k = K("rmw", [("m", ptr(t)), ("v", ptr(t)), ("old", ptr(t)), ("mask", ptr(i1))])
    mp, vp, op_, kp = k.args
    r = k.arange(0, B)
    v = k.load(k.addptr(vp, r))
    mask = k.load(k.addptr(kp, r)) if masked else None
    old = rmw(k, kind, k.addptr(mp, r), v, mask, sem)
    k.store(k.addptr(op_, r), old)
    return k.ret().compile()


INT_CASES = [("add", np.add), ("and", np.bitwise_and), ("or", np.bitwise_or),
             ("xor", np.bitwise_xor), ("max", np.maximum), ("min", np.minimum),
             ("xchg", lambda a, b: b), ("exch", lambda a, b: b)]


@pytest.mark.parametrize("kind,f", INT_CASES)
@pytest.mark.parametrize("t,np_t", [(i32, np.int32), (i64, np.int64)])
def test_int_rmw_ops_return_old_values(kind, f, t, np_t):
    res = _rmw_kernel(kind, t)
    m = rng.integers(-1000, 1000, B).astype(np_t)
    v = rng.integers(-1000, 1000, B).astype(np_t)
    m0 = m.copy()
    old = np.full(B, 12345, np_t)
    run(res, 1, m, v, old, np.ones(B, bool))
    np.testing.assert_array_equal(old, m0)
    np.testing.assert_array_equal(m, f(m0, v))


@pytest.mark.parametrize("kind", ["umax", "umin"])
def test_unsigned_max_min(kind):
    res = _rmw_kernel(kind, i32, sem="relaxed")
    m = rng.integers(-2 ** 31, 2 ** 31 - 1, B).astype(np.int32)
    v = rng.integers(-2 ** 31, 2 ** 31 - 1, B).astype(np.int32)
    m0 = m.copy()
    old = np.zeros(B, np.int32)
    run(res, 1, m, v, old, np.ones(B, bool))
    f = np.maximum if kind == "umax" else np.minimum
    np.testing.assert_array_equal(m, f(m0.view(np.uint32), v.view(np.uint32)).view(np.int32))
    np.testing.assert_array_equal(old, m0)


@pytest.mark.parametrize("sem", ["relaxed", "acquire", "release", "acq_rel"])
def test_masked_add_float_and_semantics(sem):
    res = _rmw_kernel("fadd", f32, masked=True, sem=sem)
    m = rng.standard_normal(B).astype(np.float32)
    v = rng.standard_normal(B).astype(np.float32)
    mask = rng.random(B) < 0.5
    m0 = m.copy()
    old = np.full(B, np.nan, np.float32)
    run(res, 1, m, v, old, mask)
    np.testing.assert_array_equal(m, np.where(mask, m0 + v, m0))
    np.testing.assert_array_equal(old, np.where(mask, m0, 0))  # masked-off lanes give 0


@pytest.mark.parametrize("t,np_t", [(f16, np.float16), (f64, np.float64)])
def test_fadd_f16_f64(t, np_t):
    res = _rmw_kernel("fadd", t)
    m = rng.standard_normal(B).astype(np_t)
    v = rng.standard_normal(B).astype(np_t)
    m0 = m.copy()
    old = np.zeros(B, np_t)
    run(res, 1, m, v, old, np.ones(B, bool))
    np.testing.assert_array_equal(m, m0 + v)
    np.testing.assert_array_equal(old, m0)


def _bf16(x):
    u = x.astype(np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def _f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def test_bf16_fadd_rounds_once_per_update():
    res = _rmw_kernel("fadd", bf16)
    m = _bf16(rng.standard_normal(B))
    v = _bf16(rng.standard_normal(B))
    m0 = m.copy()
    old = np.zeros(B, np.uint16)
    run(res, 1, m, v, old, np.ones(B, bool))
    np.testing.assert_array_equal(m, _bf16(_f32(m0) + _f32(v)))
    np.testing.assert_array_equal(old, m0)


@pytest.mark.parametrize("kind,f", [("max", np.maximum), ("min", np.minimum)])
def test_float_max_min_propagate_nan(kind, f):
    res = _rmw_kernel(kind, f32)
    m = rng.standard_normal(B).astype(np.float32)
    v = rng.standard_normal(B).astype(np.float32)
    v[3] = np.nan
    m[5] = np.nan
    m0 = m.copy()
    old = np.zeros(B, np.float32)
    run(res, 1, m, v, old, np.ones(B, bool))
    np.testing.assert_array_equal(m, f(m0, v))
    np.testing.assert_array_equal(old, m0)


def test_duplicate_addresses_in_one_tile_apply_in_index_order():
    k = K("dup", [("b", ptr(i32)), ("h", ptr(i32)), ("old", ptr(i32))])
    bp, hp, op_ = k.args
    r = k.arange(0, B)
    bins = k.load(k.addptr(bp, r))
    one = k.const(1, TensorType((B,), i32))
    k.store(k.addptr(op_, r), rmw(k, "add", k.addptr(hp, bins), one))
    res = k.ret().compile()
    b = rng.integers(0, 4, B).astype(np.int32)
    h = np.zeros(4, np.int32)
    old = np.full(B, -1, np.int32)
    run(res, 1, b, h, old)
    seen = np.zeros(4, int)
    exp = []
    for x in b:
        exp.append(seen[x])
        seen[x] += 1
    np.testing.assert_array_equal(old, exp)
    np.testing.assert_array_equal(h, np.bincount(b, minlength=4))


def _histogram_kernel(BLOCK, t=i32, kind="add"):
    k = K("hist", [("x", ptr(i32)), ("h", ptr(t)), ("n", i32)])
    xp, hp, n = k.args
    pid = k.pid()
    offs = k.bin("arith.addi", k.splat(k.bin("arith.muli", pid, k.const(BLOCK, i32)), (BLOCK,)),
                 k.arange(0, BLOCK))
    mask = k.cmp("arith.cmpi", "slt", offs, k.splat(n, (BLOCK,)))
    bins = k.load(k.addptr(xp, offs), mask)
    rmw(k, kind, k.addptr(hp, bins), k.const(1, TensorType((BLOCK,), t)), mask)
    return k.ret().compile()


@pytest.mark.parametrize("t,np_t,kind", [(i32, np.int32, "add"), (f32, np.float32, "fadd")])
def test_histogram_over_many_programs_on_many_threads(t, np_t, kind):
    res = _histogram_kernel(128, t, kind)
    res.launcher.workers = 8  # more threads than cores: real contention
    assert "atomicrmw" in res.stages[0].text and "lock" in res.stages[1].text
    n, nbins = 200_003, 37
    x = rng.integers(0, nbins, n).astype(np.int32)
    h = np.zeros(nbins, np_t)
    run(res, (n + 127) // 128, x, h, n)
    np.testing.assert_array_equal(h, np.bincount(x, minlength=nbins).astype(np_t))


def test_cas_spin_lock_protects_a_non_atomic_counter_across_threads():
    # each program: while cas(lock, 0, 1) != 0: spin; counter += 1 (plain load/store);
    # xchg(lock, 0). Without real atomics some increments would be lost.
    k = K("lock", [("lock", ptr(i32)), ("cnt", ptr(i32)), ("olds", ptr(i32))])
    lock, cnt, olds = k.args
    from test_cpu_while_dot import build_while

    def before(k, a):
        old = k.op("tt.atomic_cas", [lock, k.const(0, i32), k.const(1, i32)], i32,
                   sem="acquire", scope="gpu")
        return k.cmp("arith.cmpi", "ne", old, k.const(0, i32)), [old]

    def after(k, a):
        return []
    build_while(k, [], before, after)
    c = k.load(cnt)
    k.store(cnt, k.bin("arith.addi", c, k.const(1, i32)))
    k.store(k.addptr(olds, k.pid()), c)
    rmw(k, "xchg", lock, k.const(0, i32), sem="release")
    res = k.ret().compile()
    res.launcher.workers = 8
    n = 20_000
    lk, cn = np.zeros(1, np.int32), np.zeros(1, np.int32)
    seen = np.full(n, -1, np.int32)
    run(res, n, lk, cn, seen)
    assert cn[0] == n and lk[0] == 0
    np.testing.assert_array_equal(np.sort(seen), np.arange(n))


def test_cas_tile_float_bits_and_scalar_atomics():
    k = K("cas", [("x", ptr(f32)), ("o", ptr(f32)), ("s", ptr(i64)), ("so", ptr(i64))])
    xp, o, sp, so = k.args
    r = k.arange(0, 8)
    t = TensorType((8,), f32)
    old = k.op("tt.atomic_cas", [k.addptr(xp, r), k.const(5.0, t), k.const(-1.5, t)], t,
               sem="acq_rel", scope="gpu")
    k.store(k.addptr(o, r), old)
    sold = rmw(k, "add", sp, k.const(7, i64))
    k.store(so, sold)
    res = k.ret().compile()
    x = np.array([5, 1, 5, 2, 5, 5, 0, -0.0], np.float32)
    x0 = x.copy()
    out = np.full(8, np.nan, np.float32)
    s = np.array([2 ** 40], np.int64)
    s_old = np.zeros(1, np.int64)
    run(res, 3, x, out, s, s_old)
    np.testing.assert_array_equal(x, np.where(x0 == 5, -1.5, x0))
    assert s[0] == 2 ** 40 + 21 and s_old[0] in (2 ** 40, 2 ** 40 + 7, 2 ** 40 + 14)


def test_atomic_out_of_bounds_is_reported():
    res = _histogram_kernel(64)
    x = np.array([0, 1, 2, 9], np.int32)
    h = np.zeros(4, np.int32)
    with pytest.raises(OutOfBoundsError) as ei:
        run(res, 1, x, h, 4)
    assert "atomic" in str(ei.value) and ei.value.program_id == (0, 0, 0)
    assert ei.value.arg == "h" and FILE in str(ei.value)
    assert (h == 0).all()  # nothing was applied: the check runs before the first element


@pytest.mark.parametrize("kind", ["fadd", "max", "xchg"])
def test_masked_bf16_atomics_return_zero_where_masked_off(kind):
    """bf16 atomics go through a compare-exchange loop; with a mask, the masked-off result
    (0, which takes instructions in bf16) is made before the branch (it once sat after the
    join's phi, an invalid module)."""
    import ml_dtypes
    bft = ml_dtypes.bfloat16
    k = _rmw_kernel(kind, bf16, masked=True)
    m = rng.standard_normal(B).astype(bft)
    v = rng.standard_normal(B).astype(bft)
    mask = rng.random(B) < 0.5
    mem, old = m.copy(), np.full(B, 7.0, bft)
    run(k, 1, mem, v, old, mask)
    f = {"fadd": lambda a, b: (a.astype(np.float32) + b.astype(np.float32)).astype(bft),
         "max": np.maximum, "xchg": lambda a, b: b}[kind]
    np.testing.assert_array_equal(mem, np.where(mask, f(m, v), m))
    np.testing.assert_array_equal(old, np.where(mask, m, bft(0)))


def test_a_broken_module_is_an_error_not_an_abort(tmp_path):
    """LLVM's parser would abort the whole process on a module with debug info that does not
    verify; the code generators turn that step off and verify themselves, so a code generator
    bug is an exception the notebook can show."""
    import subprocess
    import sys
    script = tmp_path / "broken.py"
    script.write_text('''
import llvmlite.binding as llvm
import workbench.codegen
text = """
define i32 @f(i1 %c) !dbg !4 {
a:
  br i1 %c, label %b, label %d
b:
  %x = add i32 1, 2, !dbg !7
  br label %d
d:
  %y = phi i32 [ %x, %a ], [ 0, %b ]
  ret i32 %y
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!0 = distinct !DICompileUnit(language: DW_LANG_C, file: !1, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "k.py", directory: "/")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 1, type: !5, unit: !0, \
spFlags: DISPFlagDefinition)
!5 = !DISubroutineType(types: !6)
!6 = !{}
!7 = !DILocation(line: 2, column: 1, scope: !4)
"""
try:
    llvm.parse_assembly(text).verify()
except RuntimeError as e:
    print("error:", str(e).splitlines()[0])
''')
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("error:") and "dominate" in r.stdout, r.stdout
