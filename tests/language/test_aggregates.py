"""Aggregate classes (``tl.core._aggregate``) in kernels: construction, @jit and builtin-style
methods, ``__getitem__``, passing to and returning from helpers, carrying through loops and
runtime ifs; the compile errors (attribute assignment, unused must_use_result) at the line."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@tl.core._aggregate
class Acc:
    """A running sum and a running maximum of float32 rows, plus the row width."""
    total: tl.tensor
    peak: tl.tensor
    width: tl.constexpr

    def __init__(self, total, peak, width):
        self.total = total
        self.peak = peak
        self.width = width

    @wb.jit
    def add(self, row):
        return Acc(self.total + row, tl.maximum(self.peak, row), self.width)

    def scaled(self, k, _semantic=None):
        return tl.mul(self.total, k, _semantic=_semantic)

    def __getitem__(self, i, _semantic=None):
        return self.total if i == 0 else self.peak

    @wb.must_use_result
    @wb.jit
    def doubled(self):
        return self.total * 2


@wb.jit
def start(width: tl.constexpr):
    return Acc(tl.zeros((width,), tl.float32), tl.full((width,), float("-inf"), tl.float32),
               width)


@wb.jit
def fold_kernel(x_ptr, sum_ptr, peak_ptr, mix_ptr, n_rows, W: tl.constexpr):
    cols = tl.arange(0, W)
    acc = start(W)
    for r in range(n_rows):  # an aggregate carried by a loop
        acc = acc.add(tl.load(x_ptr + r * W + cols))
    if tl.sum(acc.total, 0) > 0:  # and through a runtime if
        acc = Acc(acc.total, acc.peak * 2, acc.width)
    else:
        acc = Acc(acc.total, acc.peak - 1, W)
    tl.store(sum_ptr + cols, acc[0])
    tl.store(peak_ptr + tl.arange(0, acc.width), acc[1])
    tl.store(mix_ptr + cols, acc.scaled(3.0) + acc.doubled())


def test_aggregate_carried_and_helpers(backend):
    rng = np.random.default_rng()
    n_rows, w = int(rng.integers(2, 9)), 16
    x = rng.standard_normal((n_rows, w)).astype(np.float32)
    outs = [np.empty(w, np.float32) for _ in range(3)]
    fold_kernel[(1,)](x, *outs, n_rows, W=w)
    total, peak = x.sum(0), x.max(0)
    peak = peak * 2 if total.sum() > 0 else peak - 1
    np.testing.assert_allclose(outs[0], total, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[1], peak, rtol=1e-6)
    np.testing.assert_allclose(outs[2], total * 5, rtol=1e-5, atol=1e-5)


@tl.core._aggregate
class Offsets:
    """Built by an initializer that calls tl builtins itself (``_semantic``)."""
    lo: tl.tensor
    hi: tl.tensor

    def __init__(self, n: tl.constexpr, _semantic=None):
        self.lo = tl.arange(0, n, _semantic=_semantic)
        self.hi = tl.arange(n, 2 * n, _semantic=_semantic)

    @staticmethod
    @wb.jit
    def make(n: tl.constexpr):
        return Offsets(n)


@wb.jit
def swap_kernel(x_ptr, y_ptr, N: tl.constexpr):
    o = Offsets.make(N)
    tl.store(y_ptr + o.lo, tl.load(x_ptr + o.hi))
    tl.store(y_ptr + o.hi, tl.load(x_ptr + o.lo))


def test_builtin_initializer_and_static_jit(backend):
    x = np.random.default_rng().integers(-100, 100, 32).astype(np.int32)
    y = np.empty_like(x)
    swap_kernel[(1,)](x, y, N=16)
    np.testing.assert_array_equal(y, np.concatenate([x[16:], x[:16]]))


def _error(kernel, **kw):
    with pytest.raises(CompilationError) as e:
        wb.compile(kernel, "*fp32", target="cpu", **kw)
    return str(e.value)


def test_attribute_assignment_is_refused_at_the_line():
    @wb.jit
    def k(p):
        a = start(4)
        a.total = tl.load(p + tl.arange(0, 4))

    msg = _error(k)
    assert "a.total = tl.load" in msg and "attribute" in msg

    @wb.jit
    def k2(p):
        a = start(4)
        a.total += 1.0

    msg = _error(k2)
    assert "a.total += 1.0" in msg and "attribute" in msg


def test_unused_must_use_result_method_is_refused_at_the_line():
    @wb.jit
    def k(p):
        a = start(4)
        a.doubled()

    msg = _error(k)
    assert "The result of a.doubled is not being used" in msg and "a.doubled()" in msg


def test_missing_field_is_an_error_at_the_construction():
    @tl.core._aggregate
    class Half:
        a: tl.tensor
        b: tl.tensor

        def __init__(self, a):
            self.a = a

    @wb.jit
    def k(p):
        h = Half(tl.load(p))  # noqa: F841 - the construction is what fails

    msg = _error(k)
    assert "did not initialize attribute 'b'" in msg and "h = Half(tl.load(p))" in msg


def test_aggregate_kernel_compiles_for_cuda():
    ker = wb.compile(fold_kernel, "*fp32", "*fp32", "*fp32", "*fp32", "i32", W=16,
                     target="cuda:90")
    ttir = ker.asm["ttir"]
    assert "scf.for" in ttir and "scf.if" in ttir  # the fields travel as loop/if results
    assert ".entry fold_kernel" in ker.asm["ptx"]


@pytest.mark.gpu
def test_aggregate_kernel_on_the_gpu():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng()
    n_rows, w = int(rng.integers(2, 9)), 16
    x = rng.standard_normal((n_rows, w)).astype(np.float32)
    outs = [torch.zeros(w, dtype=torch.float32, device="cuda") for _ in range(3)]
    fold_kernel[(1,)](torch.from_numpy(x).cuda(), *outs, n_rows, W=w)
    total, peak = x.sum(0), x.max(0)
    peak = peak * 2 if total.sum() > 0 else peak - 1
    np.testing.assert_allclose(outs[0].cpu().numpy(), total, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[1].cpu().numpy(), peak, rtol=1e-6)
    np.testing.assert_allclose(outs[2].cpu().numpy(), total * 5, rtol=1e-5, atol=1e-5)


@wb.jit
def type_kernel(x_ptr, y_ptr):
    a = Acc(tl.load(x_ptr + tl.arange(0, 4)), tl.load(y_ptr + tl.arange(0, 4)), 4)
    b = Acc(a.peak, a.total, 4)
    tl.static_assert(a.type == b.type)
    c = Acc(a.total, a.peak, 8)
    tl.static_assert(a.type != c.type)  # the constexpr field differs


def test_aggregate_type_compares_fields():
    wb.compile(type_kernel, "*fp32", "*fp32", target="cpu")


AGG_MODULE = """
import workbench as wb
import workbench.language as tl


@tl.core._aggregate
class Box:
    v: tl.tensor

    def __init__(self, v):
        self.v = v {INIT}

    @wb.jit
    def get(self):
        return self.v {GET}


@wb.jit
def kernel(x_ptr):
    tl.store(x_ptr, Box(tl.load(x_ptr)).get())
"""


def _fingerprint(tmp_path, name, init="", get=""):
    import importlib.util

    from workbench.runtime.disk_cache import source_fingerprint
    path = tmp_path / "agg_cache_case.py"
    path.write_text(AGG_MODULE.replace("{INIT}", init).replace("{GET}", get))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return repr(source_fingerprint(mod.kernel))


def test_disk_cache_key_follows_the_aggregate_methods(tmp_path):
    base = _fingerprint(tmp_path, "agg_a")
    assert _fingerprint(tmp_path, "agg_b") == base
    assert _fingerprint(tmp_path, "agg_c", get="+ 1") != base  # a @jit method edited
    assert _fingerprint(tmp_path, "agg_d", init="* 2") != base  # the Python __init__
