"""Every public name of Triton 3.6's triton.language is provided (compared with the installed
Triton's dir(), so a name cannot go missing silently), and the ones added last behave as
Triton's: block_type, void, slice, target_info, tl.standard, bitonic_merge,
extern_elementwise, builtin_max/min."""
import inspect

import numpy as np
import pytest
from lang_helpers import launch

import workbench as wb
import workbench.language as tl

#: names of triton.language.core that are no language API: a TypeVar for annotations and the
#: name of the attribute Triton marks its builtins with
_CORE_INTERNALS = {"T", "TRITON_BUILTIN"}


def _public(module) -> set:
    return {n for n in dir(module) if not n.startswith("_")}


def test_every_public_name_of_triton_language_is_provided():
    triton_language = pytest.importorskip(
        "triton.language", reason="real Triton is not installed: nothing to compare dir() with")
    missing = sorted(_public(triton_language) - set(dir(tl)))
    assert missing == [], f"triton.language names not in workbench.language: {missing}"


def test_every_language_name_of_triton_language_core_is_provided():
    core = pytest.importorskip(
        "triton.language.core", reason="real Triton is not installed: nothing to compare with")
    ours = set(dir(tl)) | set(dir(tl.core))
    own = set()
    for n in _public(core) - _CORE_INTERNALS:
        obj = getattr(core, n)
        home = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
        if isinstance(home, str) and home.startswith("triton.language"):
            own.add(n)  # defined by Triton's language, not imported from elsewhere
    missing = sorted(own - ours)
    assert missing == [], f"triton.language.core names not provided: {missing}"


def test_block_void_and_slice_types_on_the_host():
    t = tl.block_type(tl.float16, [16, 32])
    assert t == tl.block_type(tl.float16, (16, 32)) and t != tl.block_type(tl.float16, [32, 16])
    assert t != tl.float16 and t.scalar == tl.float16 and t.element_ty == tl.float16
    assert t.is_block() and t.shape == (16, 32) and t.numel == 512 and t.nbytes == 1024
    assert t.with_element_ty(tl.int8) == tl.block_type(tl.int8, [16, 32])
    assert hash(t) == hash(tl.block_type(tl.float16, [16, 32]))
    with pytest.raises(TypeError):
        tl.block_type(tl.float32, [])
    with pytest.raises(ValueError):
        tl.block_type(tl.float32, [12])
    assert str(tl.void) == "void" and tl.void.is_void() and not tl.void.is_floating()
    s = tl.slice(0, 8, None)
    assert (s.start, s.stop, s.step) == (0, 8, None) and isinstance(s.type, tl.slice_type)
    assert tl.get_int_dtype(16, False) == tl.uint16 and tl.get_int_dtype(64, True) == tl.int64
    assert tl.tensor_descriptor_type(tl.float16, [16, 16]).block_shape == (16, 16)


@wb.jit
def block_type_kernel(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.static_assert(x.type == tl.block_type(tl.float32, [N]))
    tl.static_assert(x.type.scalar == tl.float32)
    tl.static_assert(x.type.shape == (N,))
    # the type constructors are callable in kernels, as Triton's
    tl.static_assert(tl.slice(0, N, 1).stop == N)
    desc = tl.tensor_descriptor_type(tl.block_type(tl.float32, [N, N]), None, None)
    tl.static_assert(desc.block_shape == (N, N))
    tl.static_assert(tl.pointer_type(tl.float32) == x_ptr.dtype)
    tl.store(out_ptr + tl.arange(0, N), x * 2)


def test_block_type_is_a_tiles_type_in_kernels(backend, rng):
    x = rng.standard_normal(32).astype(np.float32)
    out = np.zeros(32, np.float32)
    launch(backend, block_type_kernel, (1,), x, out, N=32)
    np.testing.assert_array_equal(out, x * 2)


@wb.jit
def target_kernel(out_ptr):
    if tl.target_info.cuda_capability_geq(9, 0):
        v = 90
    elif tl.target_info.is_cuda():
        v = 80
    elif tl.target_info.is_hip():
        v = -1
    else:
        v = 7
    tl.store(out_ptr, v)


def test_target_info_answers_for_the_compile_target():
    out = np.zeros(1, np.int32)
    k = wb.compile(target_kernel, out, target="cpu")
    k[(1,)](out)
    assert out[0] == 7  # no GPU target: every question is False, as Triton without a driver
    for target, want in (("cuda:80", 80), ("cuda:90", 90)):
        text = wb.compile(target_kernel, "*i32", target=target).asm["ttir"]
        assert f"arith.constant {want} : i32" in text, text


@wb.jit
def merge_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, DESC: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.standard.bitonic_merge(x, descending=DESC))


@pytest.mark.parametrize("desc", [False, True])
def test_bitonic_merge_sorts_bitonic_rows(backend, rng, desc):
    m, n = 4, 32
    up = np.sort(rng.standard_normal((m, n // 2)), axis=1)
    down = -np.sort(-rng.standard_normal((m, n // 2)), axis=1)
    x = np.concatenate([up, down], axis=1).astype(np.float32)  # rising then falling
    out = np.zeros_like(x)
    launch(backend, merge_kernel, (1,), x, out, M=m, N=n, DESC=desc)
    want = np.sort(x, axis=1)
    np.testing.assert_array_equal(out, want[:, ::-1] if desc else want)


def test_standard_module_holds_the_standard_functions():
    for name in ("sort", "topk", "flip", "softmax", "argmax", "cumsum", "sum", "max", "ravel",
                 "swizzle2d", "zeros_like", "interleave", "xor_sum", "reduce_or"):
        assert getattr(tl.standard, name) is getattr(tl, name), name
    assert tl.standard.bitonic_merge is tl.bitonic_merge


_FABS = tl.constexpr({(tl.float32,): ("__nv_fabsf", tl.float32)})  # dtypes -> (symbol, dtype)


@wb.jit
def extern_max_kernel(x_ptr, y_ptr, out_ptr, big_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    e = tl.extern_elementwise("", "", [x], _FABS, is_pure=True)
    tl.store(out_ptr + offs, tl.builtin_max(e, y, 0.25))
    tl.store(big_ptr, tl.builtin_min(3, 9, 5))


def test_extern_elementwise_and_builtin_max(backend, rng):
    x = rng.standard_normal(64).astype(np.float32)
    y = rng.standard_normal(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    small = np.zeros(1, np.int32)
    launch(backend, extern_max_kernel, (1,), x, y, out, small, N=64)
    np.testing.assert_array_equal(out, np.maximum(np.maximum(np.abs(x), y), np.float32(0.25)))
    assert small[0] == 3
    text = wb.compile(extern_max_kernel, "*fp32", "*fp32", "*fp32", "*i32", N=64,
                      target="interpreter").asm["ttir"]
    assert 'tt.extern_elementwise' in text and '"__nv_fabsf"' in text
