"""``tl.const`` pointer parameters and ``while tl.condition(...)`` (Triton 3.6's names):
loads through a const pointer work, a store or atomic through one is refused in Triton's
words, a const and a plain pointer are different types; ``tl.condition`` loops run as the
plain test would."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError


@wb.jit
def copy_from_const(src: tl.const, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m) + 1.0, mask=m)


@wb.jit
def store_to_const(src: tl.const, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    p = src + offs
    tl.store(p, 0.0, mask=offs < n)


@wb.jit
def atomic_on_const(src: tl.const):
    tl.atomic_add(src, 1.0)


@wb.jit(do_not_specialize=["flag"])
def choose(src: tl.const, dst, flag):
    out = src if flag else dst
    tl.store(dst, tl.load(out))


@wb.jit
def prefix_sum_until(x_ptr, out_ptr, n, limit):
    i = 0
    acc = 0.0
    while tl.condition((i < n) & (acc < limit), disable_licm=True):
        acc += tl.load(x_ptr + i)
        i += 1
    tl.store(out_ptr, acc)
    tl.store(out_ptr + 1, i.to(tl.float32))


def test_loads_through_a_const_pointer(backend):
    n = 77
    x = np.random.default_rng().standard_normal(n).astype(np.float32)
    before = x.copy()
    out = np.full(n, np.nan, np.float32)
    copy_from_const[(wb.cdiv(n, 32),)](x, out, n, BLOCK=32)
    np.testing.assert_array_equal(out, before + 1.0)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("kernel, args", [(store_to_const, (8,)), (atomic_on_const, ())])
def test_writes_through_a_const_pointer_are_refused(kernel, args):
    x = np.zeros(8, np.float32)
    with pytest.raises(CompilationError) as info:
        kernel[(1,)](x, *args, **({"BLOCK": 8} if args else {}))
    assert info.value.error_message == "Cannot store to a constant pointer"
    assert "tl.const" in str(info.value)


def test_while_condition_runs_as_the_plain_test(backend):
    rng = np.random.default_rng()
    x = rng.random(50).astype(np.float32)
    limit = float(x[:20].sum())
    out = np.full(2, np.nan, np.float32)
    prefix_sum_until[(1,)](x, out, 50, limit)
    acc, i = np.float32(0), 0
    while i < 50 and acc < limit:
        acc += x[i]
        i += 1
    np.testing.assert_allclose(out, [acc, i], rtol=1e-5)


def test_condition_with_other_arguments_is_a_caret_error():
    @wb.jit
    def bad(x_ptr):
        i = 0
        while tl.condition(i < 4, True, disable_licm=True):
            i += 1
        tl.store(x_ptr, i)

    with pytest.raises(CompilationError, match="tl.condition takes the loop test"):
        bad[(1,)](np.zeros(1, np.int32))


@wb.jit
def _pick(a, b, choose_b):
    if choose_b:
        return b
    else:
        return a


@wb.jit(do_not_specialize=["flag"])
def mix_if(src: tl.const, dst, flag):
    if flag:
        out = src
    else:
        out = dst
    tl.store(dst, tl.load(out))


@wb.jit(do_not_specialize=["flag"])
def mix_call(src: tl.const, dst, flag):
    out = _pick(dst, src, flag)
    tl.store(dst, tl.load(out))


@pytest.mark.parametrize("kernel, words", [
    (choose, "Ternary expression with dynamic condition has inconsistent type: *kfp32 and "
             "*fp32"),
    (mix_if, "Mismatched type for out between the then block (tensor<const_pointer<fp32>>)"),
    (mix_call, "Return type mismatch: the then block (tensor<const_pointer<fp32>>)"),
])
def test_mixing_const_and_plain_pointers_is_refused_in_tritons_words(kernel, words):
    x = np.zeros(4, np.float32)
    with pytest.raises(CompilationError) as info:
        kernel[(1,)](x, x.copy(), 3)
    assert words in info.value.error_message
