"""Tuples as kernel arguments, values and results: launched on the interpreter and the CPU
backend against numpy with fresh random inputs; the ttir signature flattened as Triton
flattens it; tuples through helpers, loops, ifs, reductions and scans."""
from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError, LaunchError

BLOCK = 32


class View(NamedTuple):
    ptr: object
    n: int
    scale: float


@wb.jit
def affine_k(X, outs, coeffs, BLOCK: tl.constexpr):
    # outs: (pointer, (pointer, None)); coeffs: (int, (float, constexpr))
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    a, bc = coeffs  # Triton's frontend takes one level of unpacking per assignment
    b, c = bc
    first, rest = outs
    second, nothing = rest
    tl.static_assert(nothing is None)
    tl.store(first + offs, x * a + b)
    tl.store(second + offs, x * c)


def test_nested_tuple_arguments_against_numpy(backend, rng):
    x = rng.standard_normal(BLOCK).astype(np.float32)
    a = int(rng.integers(2, 9))
    b = float(rng.standard_normal())
    c = int(rng.integers(2, 5))
    o1, o2 = np.full(BLOCK, np.nan, np.float32), np.full(BLOCK, np.nan, np.float32)
    ck = affine_k[(1,)](x, (o1, (o2, None)), (a, (b, tl.constexpr(c))), BLOCK=BLOCK)
    np.testing.assert_allclose(o1, x * a + np.float32(b), rtol=1e-6)
    np.testing.assert_allclose(o2, x * c, rtol=1e-6)
    # the pointers are runtime arguments, the constexpr element and None are not
    assert ck.spec.signature_text() == "*fp32:16, (*fp32:16, (*fp32:16, constexpr)), " \
                                       "(i32, (fp32, constexpr))"


@wb.jit
def view_k(src, dst, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < src.n
    v = tl.load(src.ptr + offs, mask=m, other=0.0)
    tl.store(dst.ptr + offs, v * src.scale + dst.scale, mask=offs < dst.n)


def test_namedtuple_arguments_read_by_field(backend, rng):
    n = int(rng.integers(5, BLOCK))
    x = rng.standard_normal(BLOCK).astype(np.float32)
    y = np.full(BLOCK, -7.0, np.float32)
    s, t = float(rng.uniform(1, 2)), float(rng.uniform(-1, 1))
    view_k[(1,)](View(x, n, s), View(y, n, t), BLOCK=BLOCK)
    ref = np.where(np.arange(BLOCK) < n, x * np.float32(s) + np.float32(t), -7.0)
    np.testing.assert_allclose(y, ref, rtol=1e-6)


@wb.jit
def store_each(ptrs, values):
    for i in tl.static_range(len(values)):
        tl.store(ptrs[i], values[i])


@wb.jit
def bump(values):
    return tl.tuple([v + 1 for v in values])


@wb.jit
def index_k(ptrs, values):
    store_each(ptrs, bump(values))


@pytest.mark.parametrize("size", [0, 1, 3])
def test_tuple_length_index_and_comprehension(backend, rng, size):
    vals = tuple(int(v) for v in rng.integers(-100, 100, size))
    outs = tuple(np.zeros(1, np.int32) for _ in range(size))
    index_k[(1,)](outs, vals)
    assert [int(o[0]) for o in outs] == [v + 1 for v in vals]


@wb.jit
def sum_diff(a, b):
    return a + b, a - b


@wb.jit
def carried_k(X, outs, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    acc = (tl.zeros([BLOCK], tl.float32), x)
    for _ in range(n):  # a tuple carried through scf.for
        acc = (acc[0] + acc[1], acc[1] * 0.5)
    i = 0
    while i < n:  # and through scf.while, concatenated with an empty tuple
        acc = acc + ()
        i += 1
    if n > 2:  # a tuple merged from both branches of a runtime if
        t = sum_diff(acc[0], acc[1])
    else:
        t = (acc[1], acc[0])
    tl.store(outs[0] + offs, t[0])
    tl.store(outs[1] + offs, t[1])


@pytest.mark.parametrize("n", [1, 4])
def test_tuples_through_loops_ifs_and_helpers(backend, rng, n):
    x = rng.standard_normal(BLOCK).astype(np.float32)
    outs = (np.zeros(BLOCK, np.float32), np.zeros(BLOCK, np.float32))
    carried_k[(1,)](x, outs, n, BLOCK=BLOCK)
    a0, a1 = np.zeros(BLOCK, np.float32), x.copy()
    for _ in range(n):
        a0, a1 = a0 + a1, a1 * np.float32(0.5)
    ref = (a0 + a1, a0 - a1) if n > 2 else (a1, a0)
    np.testing.assert_allclose(outs[0], ref[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[1], ref[1], rtol=1e-5, atol=1e-6)


@wb.jit
def add_max(a0, a1, b0, b1):
    return a0 + b0, tl.maximum(a1, b1)


@wb.jit
def reduce_scan_k(X, Y, outs, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    pair = (tl.load(X + offs), tl.load(Y + offs))
    s, m = tl.reduce(pair, 0, add_max)
    c = tl.associative_scan(pair, 0, add_max)
    tl.store(outs[0], s)
    tl.store(outs[1], m)
    tl.store(outs[2] + offs, c[0])
    tl.store(outs[3] + offs, c[1])


def test_tuple_operands_of_reduce_and_scan(backend, rng):
    x = rng.standard_normal(BLOCK).astype(np.float32)
    y = rng.standard_normal(BLOCK).astype(np.float32)
    outs = (np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(BLOCK, np.float32),
            np.zeros(BLOCK, np.float32))
    reduce_scan_k[(1,)](x, y, outs, BLOCK=BLOCK)
    np.testing.assert_allclose(outs[0][0], x.sum(dtype=np.float32), rtol=1e-5, atol=1e-5)
    assert outs[1][0] == y.max()
    np.testing.assert_allclose(outs[2], np.cumsum(x, dtype=np.float32), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(outs[3], np.maximum.accumulate(y))


@wb.jit
def tuple_ops_k(out):
    t = tl.tuple((4, 5)) + (6, 7)
    u = (0, 1) + t[:2]
    tl.static_assert(len(t) == 4 and t == (4, 5, 6, 7) and u == tl.tuple((0, 1, 4, 5)))
    tl.static_assert((1, 2) == (1, 2) and not ((1, 2) == (1, 3)))
    tl.static_assert(isinstance(t[1].type, tl.constexpr_type))
    v = (tl.program_id(0), tl.program_id(0) + 1)
    tl.static_assert(v.type == tl.tuple_type([tl.int32, tl.int32]))
    w = v * 2
    for i in tl.static_range(len(w)):
        tl.store(out + i, w[i] + t[i])


def test_tuple_operations(backend):
    out = np.zeros(4, np.int32)
    tuple_ops_k[(1,)](out)
    np.testing.assert_array_equal(out, [4, 6, 6, 8])


def _signature_line(ttir: str) -> str:
    return next(ln for ln in ttir.splitlines() if "tt.func public" in ln)


@pytest.mark.parametrize("target", ["cuda:80", "cuda:90"])
def test_ttir_flattens_tuple_arguments_and_compiles_for_cuda(target):
    ck = wb.compile(affine_k, "*fp32:16", ("*fp32:16", ("*fp32", None)), ("i32", ("fp32", 3)),
                    BLOCK=BLOCK, target=target)
    sig = _signature_line(ck.asm["ttir"])
    args = re.findall(r"%(\w+): ([^ ,)]+(?:<[^>]*>)?)( \{tt.divisibility = 16 : i32\})?", sig)
    assert [(n, t, bool(d)) for n, t, d in args] == [
        ("X", "!tt.ptr<f32>", True), ("outs", "!tt.ptr<f32>", True),
        ("outs_0", "!tt.ptr<f32>", False), ("coeffs", "i32", False), ("coeffs_1", "f32", False)]
    assert ".entry affine_k" in ck.asm["ptx"]


def test_ttir_signature_matches_triton():
    pytest.importorskip("triton", reason="comparing with Triton 3.6 needs the triton extra")
    from workbench.runtime.compare import compare
    c = compare(affine_k, "*fp32:16", ("*fp32:16", ("*fp32", None)), ("i32", ("fp32", 3)),
                target="cuda:90", BLOCK=BLOCK)
    strip = re.compile(r" loc\([^()]*(\([^()]*\))?\)")
    # both number repeated names with one counter per function (%outs_0, %coeffs_1)
    theirs = strip.sub("", _signature_line(c.theirs["ttir"]))
    assert theirs == _signature_line(c.ours["ttir"])


def test_specialisation_follows_each_element(rng):
    @wb.jit
    def k(out, t):
        tl.store(out, t[0] + t[1])

    out = np.zeros(1, np.int32)
    a, b = (int(v) for v in rng.integers(20, 1000, 2))
    k[(1,)](out, (a, b))
    assert out[0] == a + b
    k[(1,)](out, (1, 32))  # 1 becomes the constant, 32 gets the divisibility hint
    assert out[0] == 33
    specs = {c.spec.signature_text() for c in k.cache.values()}
    assert "*i32:16, (i32:1, i32:16)" in specs and len(specs) == 2


def test_compiled_kernel_checks_tuple_arguments(rng):
    @wb.jit
    def k(out, t):
        tl.store(out, t[0] * t[1])

    out = np.zeros(1, np.float32)
    ck = k.warmup(out, (3.0, 5.0), grid=(1,))
    a, b = rng.standard_normal(2).astype(np.float32)
    ck[(1,)](out, (float(a), float(b)))
    np.testing.assert_allclose(out[0], a * b, rtol=1e-6)
    with pytest.raises(LaunchError, match=r"argument 't' does not fit"):
        ck[(1,)](out, (1.0, 2.0, 3.0))


def test_bad_tuple_element_names_its_place():
    @wb.jit
    def k(out, t):
        tl.store(out, t[0])

    with pytest.raises(LaunchError, match=r"argument 't\[1\]\[0\]'.*complex"):
        k[(1,)](np.zeros(1, np.float32), (1.0, (2j,)))


def test_assigning_into_a_tuple_is_refused():
    @wb.jit
    def k(out):
        t = tl.tuple([5, 6, 7])
        t[0] = 0

    with pytest.raises(CompilationError):
        k[(1,)](np.zeros(1, np.int32))


@wb.jit
def desc_pair_k(descs, shape, BM: tl.constexpr, BN: tl.constexpr):
    src, dst = descs
    tl.static_assert(len(shape) == 2)
    v = src.load([0, 0])
    dst.store([0, 0], v * 2 + shape[1])


def test_tuple_of_descriptors(backend, rng):
    from workbench.tools.tensor_descriptor import TensorDescriptor
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = np.zeros_like(a)
    pair = (TensorDescriptor.from_tensor(a, [16, 32]), TensorDescriptor.from_tensor(b, [16, 32]))
    ck = desc_pair_k[(1,)](pair, a.shape, BM=16, BN=32)
    np.testing.assert_allclose(b, a * 2 + 32, rtol=1e-6)
    # each descriptor is flattened as Triton flattens it (descriptor, i32 shape, i64 strides)
    sig = _signature_line(wb.compile(desc_pair_k, pair, a.shape, BM=16, BN=32,
                                     target="cuda:90").asm["ttir"])
    types = re.findall(r"%descs\w*: ([^,)]+(?:<[^>]*>>)?)", sig)
    desc = "!tt.tensordesc<tensor<16x32xf32>>"
    assert types == [desc, "i32", "i32", "i64", "i64"] * 2
    assert ck.spec.signature_text().startswith("(tensordesc<fp32[16, 32]>, ")


def test_ast_source_with_triton_tuple_signature_paths():
    from workbench.runtime.astsource import ASTSource, GPUTarget
    src = ASTSource(affine_k, signature={"X": "*fp32", "outs": ("*fp32", ("*fp32", "constexpr")),
                                         "coeffs": ("i32", ("fp32", "constexpr")),
                                         "BLOCK": "constexpr"},
                    constexprs={"BLOCK": BLOCK, (1, 1, 1): None, (2, 1, 1): 3},
                    attrs={(0,): [["tt.divisibility", 16]], (1, 1, 0): [["tt.divisibility", 16]]})
    ck = wb.compile(src, target=GPUTarget("cuda", 90, 32))
    assert ck.spec.signature_text() == "*fp32:16, (*fp32, (*fp32:16, constexpr)), " \
                                       "(i32, (fp32, constexpr))"
    assert "%outs_0: !tt.ptr<f32> {tt.divisibility = 16 : i32}" in ck.asm["ttir"]


@pytest.mark.gpu
def test_tuple_arguments_on_the_gpu(rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    x = rng.standard_normal(BLOCK).astype(np.float32)
    dx = torch.from_numpy(x).cuda()
    o1, o2 = torch.full((BLOCK,), float("nan"), device="cuda"), torch.zeros(BLOCK, device="cuda")
    a, b = int(rng.integers(2, 9)), float(rng.standard_normal())
    for _ in range(2):  # the second launch takes the fast path
        affine_k[(1,)](dx, (o1, (o2, None)), (a, (b, tl.constexpr(3))), BLOCK=BLOCK)
    # the GPU fuses x * a + b into one fma (one rounding): compare with the exact value,
    # allowing for cancellation where x * a is close to -b
    want = x.astype(np.float64) * a + np.float64(np.float32(b))
    np.testing.assert_allclose(o1.cpu().numpy(), want, rtol=1e-6,
                               atol=1e-6 * float(np.abs(x * a).max()))
    np.testing.assert_allclose(o2.cpu().numpy(), x * 3, rtol=1e-6)
