"""The launch fast path (workbench/runtime/fastpath.py, argkeys.py): a hit gives exactly the
kernel and runtime arguments the slow path gives; anything that changes the specialisation,
the options or the target recompiles; unusual arguments fall back to the slow path's errors."""
import dataclasses
import sys

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.backends.base import PointerArg
from workbench.errors import LaunchError
from workbench.runtime.argkeys import pointer_arg
from workbench.runtime.binding import bind_arguments, specialize
from workbench.runtime.grid import grid3_fast, normalize_grid


def axpy_src(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, a * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m),
             mask=m)


def typed_src(x_ptr: "*fp32", n: tl.int8, BLOCK: tl.constexpr = 16):  # noqa: F722 - Triton type
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + n, mask=offs < n)


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for name in ("WORKBENCH_INTERPRET", "WORKBENCH_BOUNDS_CHECK", "WORKBENCH_DEBUG",
                 "WORKBENCH_CUDA_MMA"):
        monkeypatch.delenv(name, raising=False)


class Counting:
    """Wrap a JIT function's slow path to count how many launches took it."""

    def __init__(self, jf):
        self.jf, self.calls, self.slow = jf, 0, jf._run_slow
        jf._run_slow = self

    def __call__(self, *args):
        self.calls += 1
        return self.slow(*args)


def aligned(n, dtype=np.float32, shift=0):
    a = np.random.default_rng(n).standard_normal(n + 64).astype(dtype)
    off = (-a.ctypes.data % 16) // a.itemsize + shift
    return a[off:off + n]


def arrays(n=40, dtype=np.float32, shift=0):
    return aligned(n, dtype, shift), aligned(n, dtype), np.zeros(n, dtype)


def slow_kernel(jf, args, kw):
    """The kernel the slow path picks for these arguments (no launch)."""
    return jf._run_slow(args, kw, None, True, None)


def same_pointer(p, q):
    return isinstance(p, PointerArg) and isinstance(q, PointerArg) and p.obj is q.obj and \
        (p.address, p.lo, p.hi, p.itemsize) == (q.address, q.lo, q.hi, q.itemsize)


def test_second_launch_is_a_fast_hit_with_the_slow_paths_kernel():
    jf = wb.jit(axpy_src)
    x, y, out = arrays()
    first = jf[(1,)](x, y, out, 2.0, 40, BLOCK=64)
    count = Counting(jf)
    out[:] = 0
    again = jf[(1,)](x, y, out, 2.0, 40, BLOCK=64)
    np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)
    assert count.calls == 0 and again is first
    assert slow_kernel(jf, (x, y, out, 2.0, 40), {"BLOCK": 64}) is first
    assert len(jf.cache) == 1 and len(jf.cache.fast) == 1


def _runtime_pairs(jf, args, kw):
    """(fast runtime args, slow runtime args) of a launch."""
    hit = jf._fast.key(args, kw)
    assert hit is not None
    spec_values = bind_arguments(jf.fn, jf.params, args, kw)
    bound = specialize(jf.fn, jf.params, spec_values, jf.no_specialize_names())
    fast = [hit[1][i] for i, a in enumerate(bound.spec.args) if a.passed]
    return fast, list(bound.runtime_args)


@pytest.mark.parametrize("case", ["aligned", "unaligned", "strided", "readonly", "reversed",
                                  "empty", "f64", "np_scalars", "big_ints", "bool"])
def test_fast_runtime_arguments_equal_the_slow_paths(case):
    jf = wb.jit(axpy_src)
    x, y, out = arrays()
    a, n = 2.0, 40
    if case == "unaligned":
        x = aligned(40, shift=1)
    elif case == "strided":
        x = aligned(80)[::2]
    elif case == "readonly":
        x.flags.writeable = False
    elif case == "reversed":
        x = x[::-1]
    elif case == "empty":
        x, n = x[:0], 0
    elif case == "f64":
        x, y, out = arrays(dtype=np.float64)
    elif case == "np_scalars":
        a, n = np.float32(2.0), np.int64(40)
    elif case == "big_ints":
        n = 2 ** 40
    elif case == "bool":
        a = True
    jf.warmup(x, y, out, a, n, BLOCK=64, grid=(1,))
    fast, slow = _runtime_pairs(jf, (x, y, out, a, n), {"BLOCK": 64})
    assert len(fast) == len(slow)
    for f, s in zip(fast, slow, strict=True):
        assert same_pointer(f, s) if isinstance(s, PointerArg) else \
            (type(f) is type(s) and f == s)


def test_pointer_arg_shortcut_equals_the_constructor():
    a = np.zeros(3)
    p = pointer_arg(1, 2, 3, 4, a)
    assert type(p) is PointerArg and same_pointer(p, PointerArg(1, 2, 3, 4, a))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.address = 5  # still frozen


VARIANTS = {
    "dtype": lambda x, y, o, a, n, kw: ((x.astype(np.float64), y.astype(np.float64),
                                         o.astype(np.float64), a, n), kw),
    "alignment": lambda x, y, o, a, n, kw: ((aligned(40, shift=1), y, o, a, n), kw),
    "divisibility": lambda x, y, o, a, n, kw: ((x, y, o, a, 32), kw),
    "equal_to_1": lambda x, y, o, a, n, kw: ((x, y, o, a, 1), kw),
    "i64": lambda x, y, o, a, n, kw: ((x, y, o, a, 2 ** 40), kw),
    "constexpr": lambda x, y, o, a, n, kw: ((x, y, o, a, n), dict(kw, BLOCK=32)),
    "constexpr_type": lambda x, y, o, a, n, kw: ((x, y, o, a, n), dict(kw, BLOCK=64.0)),
    "num_warps": lambda x, y, o, a, n, kw: ((x, y, o, a, n), dict(kw, num_warps=8)),
    "bounds_check": lambda x, y, o, a, n, kw: ((x, y, o, a, n), dict(kw, bounds_check=False)),
    "scalar_type": lambda x, y, o, a, n, kw: ((x, y, o, 2, n), kw),
}


@pytest.mark.parametrize("change", sorted(VARIANTS))
def test_each_change_gets_the_slow_paths_own_kernel(change):
    jf = wb.jit(axpy_src)
    x, y, out = arrays()
    base_args, base_kw = (x, y, out, 2.0, 40), {"BLOCK": 64}
    base = jf.warmup(*base_args, grid=None, **base_kw)
    jf[(1,)](*base_args, **base_kw)
    args, kw = VARIANTS[change](*base_args, base_kw)
    if change == "constexpr_type":
        with pytest.raises(wb.WorkbenchError):  # a float BLOCK is not a valid arange bound
            jf[(1,)](*args, **kw)
        assert jf[(1,)](*base_args, **base_kw) is base
        return
    g = (0,) if change == "i64" else (1,)  # n = 2**40 would read past the arrays: no programs
    other = jf[g](*args, **kw)
    assert other is not base
    count = Counting(jf)
    assert jf[g](*args, **kw) is other and jf[(1,)](*base_args, **base_kw) is base
    assert count.calls == 0
    assert slow_kernel(jf, args, kw) is other and slow_kernel(jf, base_args, base_kw) is base


def test_environment_switches_take_effect_between_launches(monkeypatch):
    jf = wb.jit(axpy_src)
    x, y, out = arrays()
    args = (x, y, out, 2.0, 40)
    cpu = jf[(1,)](*args, BLOCK=64)
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    interp = jf[(1,)](*args, BLOCK=64)
    assert str(interp.target) == "interpreter" and jf[(1,)](*args, BLOCK=64) is interp
    monkeypatch.setenv("WORKBENCH_INTERPRET", "0")
    assert jf[(1,)](*args, BLOCK=64) is cpu
    monkeypatch.delenv("WORKBENCH_INTERPRET")
    assert jf[(1,)](*args, BLOCK=64) is cpu
    monkeypatch.setenv("WORKBENCH_BOUNDS_CHECK", "0")
    unchecked = jf[(1,)](*args, BLOCK=64)
    assert unchecked is not cpu and unchecked.options.bounds_check is False
    monkeypatch.setenv("WORKBENCH_DEBUG", "1")
    debug = jf[(1,)](*args, BLOCK=64)
    assert debug.options.debug is True and debug is not unchecked
    monkeypatch.delenv("WORKBENCH_BOUNDS_CHECK")
    monkeypatch.delenv("WORKBENCH_DEBUG")
    assert jf[(1,)](*args, BLOCK=64) is cpu
    monkeypatch.setenv("WORKBENCH_CUDA_MMA", "v2")
    forced = jf[(1,)](*args, BLOCK=64)
    assert forced is not cpu and forced.options.cuda_mma == "v2"
    monkeypatch.delenv("WORKBENCH_CUDA_MMA")
    assert jf[(1,)](*args, BLOCK=64) is cpu


def test_cache_changes_never_leave_a_stale_fast_entry():
    jf = wb.jit(axpy_src)
    x, y, out = arrays()
    args = (x, y, out, 2.0, 40)
    first = jf[(1,)](*args, BLOCK=64)
    jf.cache.clear()
    assert not jf.cache.fast
    second = jf[(1,)](*args, BLOCK=64)
    assert second is not first and jf[(1,)](*args, BLOCK=64) is second
    with_snapshots = wb.compile(jf, x, y, out, 2.0, 40, BLOCK=64, keep_snapshots=True)
    assert with_snapshots is not second and jf[(1,)](*args, BLOCK=64) is with_snapshots
    jf.cache = {}
    assert jf[(1,)](*args, BLOCK=64) is not with_snapshots


def test_errors_after_a_fast_entry_exist_are_the_slow_paths():
    jf = wb.jit(axpy_src)
    x, y, out = arrays()
    jf[(1,)](x, y, out, 2.0, 40, BLOCK=64)
    with pytest.raises(LaunchError, match="argument 'n'"):
        jf[(1,)](x, y, out, 2.0, "40", BLOCK=64)
    with pytest.raises(LaunchError, match="takes 6 arguments"):
        jf[(1,)](x, y, out, 2.0, 40, 64, 1)
    with pytest.raises(LaunchError, match="missing argument"):
        jf[(1,)](x, y, out, 2.0, BLOCK=64)
    with pytest.raises(LaunchError, match="grid sizes must be >= 0"):
        jf[(-1,)](x, y, out, 2.0, 40, BLOCK=64)
    with pytest.raises(LaunchError, match="grid must be"):
        jf["1"](x, y, out, 2.0, 40, BLOCK=64)
    with pytest.raises(LaunchError, match="not a parameter or option"):
        jf[lambda m: (m["NOPE"],)](x, y, out, 2.0, 40, BLOCK=64)
    with pytest.raises(LaunchError, match="bad launch option"):
        jf[(1,)](x, y, out, 2.0, 40, BLOCK=64, num_warps=3)


def test_fixed_type_range_is_checked_on_every_launch():
    jf = wb.jit(typed_src)
    x = np.zeros(16, np.float32)
    jf[(1,)](x, 3)
    with pytest.raises(LaunchError, match="does not fit"):
        jf[(1,)](x, 300)
    with pytest.raises(LaunchError, match="annotated"):
        jf[(1,)](np.zeros(16, np.float64), 3)
    with pytest.raises(LaunchError, match="annotated"):
        jf[(1,)](3, 3)


def test_grid_functions_defaults_and_options_on_the_fast_path():
    jf = wb.jit(typed_src)
    x = np.zeros(40, np.float32)
    seen = []

    def grid(meta):
        seen.append(meta)
        return (wb.cdiv(meta["n"], meta["BLOCK"]),)
    k = jf[grid](x, 3, num_warps=2)
    count = Counting(jf)
    assert jf[grid](x, 3, num_warps=2) is k and count.calls == 0
    assert seen[-1] == {"x_ptr": x, "n": 3, "BLOCK": 16, "num_warps": 2, "num_stages": 3}
    assert jf[(1, 1, 1)](x, 3, num_warps=2) is k and jf[1](x, 3, num_warps=2) is k
    np.testing.assert_array_equal(x[:3], [12, 12, 12])
    assert count.calls == 0


def test_jit_function_constexpr_is_keyed_by_identity():
    @wb.jit
    def double(v):
        return v * 2

    @wb.jit
    def triple(v):
        return v * 3

    def apply_src(x_ptr, F: tl.constexpr):
        offs = tl.arange(0, 16)
        tl.store(x_ptr + offs, F(tl.load(x_ptr + offs)))
    jf = wb.jit(apply_src)
    x = np.ones(16, np.float32)
    kd = jf[(1,)](x, F=double)
    kt = jf[(1,)](x, F=triple)
    count = Counting(jf)
    assert kd is not kt and jf[(1,)](x, F=double) is kd and jf[(1,)](x, F=triple) is kt
    assert count.calls == 0 and x[0] == 2 * 3 * 2 * 3


def test_grid3_fast_agrees_with_normalize_grid():
    for g in [(3,), [3, 2], (1, 2, 3), 5, 0, (0, 1)]:
        assert grid3_fast(g) == normalize_grid(g)
    for g in [(True,), (np.int64(2),), (1.0,), (), (1, 2, 3, 4), (-1,), True, "x"]:
        assert grid3_fast(g) is None


class _FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class _FakeCudaTensor:
    """Just enough of a CUDA torch tensor for the argument handler and devices.array_info."""

    def __init__(self, address, shape, stride, dtype="float16", itemsize=2):
        self._addr, self.shape, self._stride = address, shape, stride
        self.dtype, self._itemsize = _FakeDtype(dtype), itemsize
        self.is_cuda = True
        self.device = type("Device", (), {"index": 1, "type": "cuda"})()

    def data_ptr(self):
        return self._addr

    def element_size(self):
        return self._itemsize

    def stride(self):
        return self._stride

    def numel(self):
        return int(np.prod(self.shape))

    def is_contiguous(self):
        return self._stride == (self.shape[1], 1)

    def get_device(self):
        return 1


_FakeCudaTensor.__module__ = "torch"


@pytest.mark.parametrize("stride,address", [((8, 1), 4096), ((1, 4), 4098)])
def test_cuda_tensor_handler_matches_array_info(monkeypatch, stride, address):
    import types

    from workbench.runtime import argkeys
    from workbench.runtime.devices import array_info
    fake = types.ModuleType("torch")
    fake.Tensor = _FakeCudaTensor
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(argkeys, "HANDLERS", dict(argkeys.HANDLERS))
    t = _FakeCudaTensor(address, (4, 8), stride)
    handler = argkeys.handler_for(_FakeCudaTensor)
    code, rt = handler(t, argkeys.ParamInfo("x", True, None))
    info = array_info(t)
    assert rt == info.address and type(rt) is int  # the CUDA launcher needs only the address
    assert code == (t.dtype, 1, address % 16 == 0) and info.dtype == "fp16"


@pytest.mark.parametrize("stride,address,dtype,itemsize",
                         [((8, 1), 4096, "float16", 2), ((1, 4), 4112, "float32", 4),
                          ((-8, 1), 8192, "bfloat16", 2)])
def test_descriptor_of_a_cuda_tensor_reads_what_array_info_reads(monkeypatch, stride, address,
                                                                   dtype, itemsize):
    """A host descriptor over a CUDA torch tensor: the fast handler's code and DescriptorArg
    (its base read with fewer torch calls) equal those built from array_info, the slow path's
    reading of the same tensor; a host tensor base is read the slow way."""
    import types

    from workbench.runtime import argkeys
    from workbench.runtime.devices import array_info
    from workbench.tools.tensor_descriptor import TensorDescriptor
    fake = types.ModuleType("torch")
    fake.Tensor = _FakeCudaTensor
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(argkeys, "HANDLERS", dict(argkeys.HANDLERS))
    t = _FakeCudaTensor(address, (4, 8), stride, dtype, itemsize)
    d = TensorDescriptor(t, [4, 8], [8, 1], [2, 8], padding="nan")
    code, rv = argkeys.handler_for(TensorDescriptor)(d, argkeys.ParamInfo("d", True, None))
    info = array_info(t)
    assert code == ("tensordesc", info.dtype, "cuda", 1, (2, 8))
    assert rv.pointer == argkeys.pointer_arg(info.address, info.lo, info.hi, info.itemsize, t)
    assert (rv.shape, rv.strides, rv.padding_nan) == ((4, 8), (8, 1), True)
    t.get_device = lambda: -1  # a host tensor: array_info reads it (here: as cuda, the fake's)
    code2, rv2 = argkeys.handler_for(TensorDescriptor)(d, argkeys.ParamInfo("d", True, None))
    assert (code2, rv2) == (code, rv)


def test_host_torch_tensor_takes_the_slow_path(monkeypatch):
    import types

    from workbench.runtime import argkeys
    fake = types.ModuleType("torch")
    fake.Tensor = _FakeCudaTensor
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(argkeys, "HANDLERS", dict(argkeys.HANDLERS))
    t = _FakeCudaTensor(4096, (4, 8), (8, 1))
    t.get_device = lambda: -1  # what torch answers for a host tensor
    code, _ = argkeys.handler_for(_FakeCudaTensor)(t, argkeys.ParamInfo("x", True, None))
    assert code is argkeys.MISS


def clashing_src(_wb_options, type, _wb_keep, BLOCK: tl.constexpr = 16):
    """Parameter names equal to names the generated binder uses (or would shadow)."""
    offs = tl.arange(0, BLOCK)
    m = offs < _wb_keep
    tl.store(_wb_options + offs, tl.load(type + offs, mask=m) * 2, mask=m)


def plain_src(x_ptr, n, BLOCK: tl.constexpr = 16):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def test_generated_binder_positional_keyword_and_clashing_names():
    jf = wb.jit(clashing_src)
    src = np.random.default_rng().standard_normal(16).astype(np.float32)
    dst = np.zeros(16, np.float32)
    k = jf[(1,)](dst, src, 10)
    np.testing.assert_allclose(dst[:10], 2 * src[:10])
    assert "def _wb_bind(_wb_a0, _wb_a1, _wb_a2, _wb_a3=_wb_DEFAULTS[3], **_wb_options):" \
        in jf._fast.source
    count = Counting(jf)
    dst[:] = 0
    assert jf[(1,)](_wb_options=dst, type=src, _wb_keep=10) is k
    assert jf[(1,)](dst, type=src, _wb_keep=10, BLOCK=16) is k
    assert jf[(1,)](dst, src, _wb_keep=10, num_warps=4) is not None
    assert count.calls == 1  # only the new num_warps option compiled/bound on the slow path
    np.testing.assert_allclose(dst[:10], 2 * src[:10])
    assert jf._fast.key((dst, src), {"type": src}) is None  # given twice: slow path's error
    assert jf._fast.key((dst, src, 10), {"nope": 1}) is None
    with pytest.raises(TypeError):  # an unhashable option: the lookup fails, run() goes slow
        hash(jf._fast.key((dst, src, 10), {"num_warps": [4]})[0])
    with pytest.raises(LaunchError, match="num_warps must be a power of 2"):
        jf[(1,)](dst, src, 10, num_warps=[4])
    plain = wb.jit(plain_src)
    x = np.random.default_rng().standard_normal(16).astype(np.float32)
    want = x + 1
    plain[(1,)](x, n=16)
    np.testing.assert_allclose(x, want)
    assert "def _wb_bind(x_ptr, n, BLOCK=_wb_DEFAULTS[2], **_wb_options):" in plain._fast.source


class _CaiArray:
    """A device array known only by ``__cuda_array_interface__`` (as CuPy's, a class
    property); no GPU memory is touched."""

    def __init__(self, ptr, n, typestr="<f4"):
        self._cai = {"data": (ptr, False), "shape": (n,), "typestr": typestr, "strides": None,
                     "version": 3}

    @property
    def __cuda_array_interface__(self):
        return self._cai


@pytest.mark.parametrize("ptr", [0x7000_0000, 0x7000_0004])
def test_cuda_array_interface_objects_take_the_fast_path(ptr):
    from workbench.runtime import argkeys
    assert argkeys.handler_for(_CaiArray) is argkeys._cuda_array
    jf = wb.jit(axpy_src)
    x, y, out = _CaiArray(ptr, 40), _CaiArray(0x7100_0000, 40), _CaiArray(0x7200_0000, 40)
    compiled = jf.warmup(x, y, out, 2.0, 40, BLOCK=64, grid=None)  # compiles for cuda, no GPU
    assert compiled.target.backend == "cuda"
    fast, slow = _runtime_pairs(jf, (x, y, out, 2.0, 40), {"BLOCK": 64})
    assert fast[:3] == [p.address for p in slow[:3]] == [ptr, 0x7100_0000, 0x7200_0000]
    code, _ = argkeys._cuda_array(x, argkeys.ParamInfo("x", True, None))
    assert code == ("fp32", 0, ptr % 16 == 0)
    bad, _ = argkeys._cuda_array(_CaiArray(ptr, 40, "<c8"), argkeys.ParamInfo("x", True, None))
    assert bad is argkeys.MISS  # complex64: the slow path's error


def desc_copy_src(src_desc, dst_desc, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    tile = src_desc.load([pm * BM, pn * BN])
    dst_desc.store([pm * BM, pn * BN], tile * 2)


def test_tensor_descriptors_take_the_fast_path_with_the_slow_paths_arguments():
    """A launch with host tensor descriptors is a fast hit the second time (the descriptor's
    base, shape, strides and padding read again each launch); a different block shape or
    base dtype is a different kernel; the runtime DescriptorArgs equal the slow path's."""
    from workbench.backends.descriptors import DescriptorArg
    from workbench.tools.tensor_descriptor import TensorDescriptor
    rng = np.random.default_rng()
    jf = wb.jit(desc_copy_src)
    m, n = int(rng.integers(17, 60)), 32
    src = rng.standard_normal((m, n)).astype(np.float32)
    dst = np.zeros_like(src)
    args = (TensorDescriptor.from_tensor(src, [16, 16]),
            TensorDescriptor.from_tensor(dst, [16, 16]))
    grid = ((m + 15) // 16, 2)
    first = jf[grid](*args, BM=16, BN=16)
    np.testing.assert_array_equal(dst, src * 2)
    count = Counting(jf)
    src2 = rng.standard_normal((m, n)).astype(np.float32)
    dst2 = np.zeros_like(src2)
    args2 = (TensorDescriptor.from_tensor(src2, [16, 16]),
             TensorDescriptor(dst2, [m, n], [n, 1], [16, 16], padding="nan"))
    again = jf[grid](*args2, BM=16, BN=16)
    assert count.calls == 0 and again is first  # new arrays, same kernel, no slow path
    np.testing.assert_array_equal(dst2, src2 * 2)
    hit = jf._fast.key(args2, {"BM": 16, "BN": 16})
    spec_values = bind_arguments(jf.fn, jf.params, args2, {"BM": 16, "BN": 16})
    bound = specialize(jf.fn, jf.params, spec_values, jf.no_specialize_names())
    fast = [hit[1][i] for i, a in enumerate(bound.spec.args) if a.passed]
    slow = list(bound.runtime_args)
    assert len(fast) == len(slow) == 2
    for f, s in zip(fast, slow, strict=True):
        assert isinstance(f, DescriptorArg) and isinstance(s, DescriptorArg)
        assert same_pointer(f.pointer, s.pointer)
        assert (f.shape, f.strides, f.padding_nan) == (s.shape, s.strides, s.padding_nan)
    assert fast[1].padding_nan and not fast[0].padding_nan
    # a new block shape or dtype: the slow path, and a kernel of its own
    other = jf[(m // 8 + 1, 4)](TensorDescriptor.from_tensor(src, [8, 8]),
                                TensorDescriptor.from_tensor(dst2, [8, 8]), BM=8, BN=8)
    assert count.calls == 1 and other is not first
    np.testing.assert_array_equal(dst2, src * 2)
    s64, d64 = src.astype(np.float64), np.zeros((m, n))
    jf[grid](TensorDescriptor.from_tensor(s64, [16, 16]),
             TensorDescriptor.from_tensor(d64, [16, 16]), BM=16, BN=16)
    assert count.calls == 2
    np.testing.assert_array_equal(d64, s64 * 2)
