"""``workbench.compiler``: Triton's ``triton.compiler`` names. ``compile(ASTSource(...),
target=GPUTarget(...), options=...)`` compiles like ``workbench.compile``, and a failed
``tl.static_assert`` raises ``CompileTimeAssertionFailure`` (a CompilationError) at the line."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.compiler import ASTSource, GPUTarget
from workbench.compiler.errors import CompilationError, CompileTimeAssertionFailure


@wb.jit
def scale(x_ptr, out_ptr, n, FACTOR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)


def test_ast_source_compiles_and_runs():
    rng = np.random.default_rng()
    src = ASTSource(scale, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                      "FACTOR": "constexpr", "BLOCK": "constexpr"},
                    constexprs={"FACTOR": 3.0, "BLOCK": 64})
    kernel = wb.compiler.compile(src, target="cpu")  # None: the active driver's target
    x = rng.standard_normal(50).astype(np.float32)
    out = np.zeros(50, np.float32)
    kernel[(1,)](x, out, 50)
    np.testing.assert_array_equal(out, x * np.float32(3.0))
    gpu = wb.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 2})
    assert '"ttg.num-warps" = 2' in gpu.asm["ttgir"]


def test_static_assert_failure_class_and_line():
    @wb.jit
    def kernel():
        tl.static_assert(1 + 1 == 3, "arithmetic")

    with pytest.raises(CompileTimeAssertionFailure, match="arithmetic") as e:
        wb.compile(ASTSource(kernel, signature={}, constexprs={}))
    assert isinstance(e.value, CompilationError)
    assert "tl.static_assert(1 + 1 == 3" in str(e.value)


def test_a_missing_type_is_named():
    with pytest.raises(wb.LaunchError, match="'n' has no type"):
        wb.compile(ASTSource(scale, signature={"x_ptr": "*fp32", "out_ptr": "*fp32"},
                             constexprs={"FACTOR": 1.0, "BLOCK": 16}))


@wb.jit
def strided_copy(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs * stride, mask=offs < n), mask=offs < n)


def test_a_runtime_parameter_typed_constexpr_is_baked_in():
    # Triton's form of specialising stride=1 (or any value): the parameter keeps no argument
    rng = np.random.default_rng()
    stride = int(rng.integers(1, 4))
    src = ASTSource(strided_copy, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                             "stride": "constexpr", "BLOCK": "constexpr"},
                    constexprs={"stride": stride, "BLOCK": 32})
    kernel = wb.compiler.compile(src, target="cpu")
    assert "%stride" not in kernel.asm["ttir"].split("\n", 3)[1] + kernel.asm["ttir"]
    x = rng.standard_normal(32 * stride).astype(np.float32)
    out = np.zeros(32, np.float32)
    kernel[(1,)](x, out, 29)
    np.testing.assert_array_equal(out[:29], x[::stride][:29])
    assert (out[29:] == 0).all()
    # the same baked value through workbench.compile's own form
    again = wb.compile(strided_copy, "*fp32", "*fp32", "i32", tl.constexpr(stride), BLOCK=32)
    assert again.asm["ttir"] == kernel.asm["ttir"]


def test_ast_source_takes_tensor_descriptor_signature_entries():
    """Triton's ``tensordesc<fp16[64, 32]>`` signature entry: a host tensor descriptor of that
    element type and block shape, compiled ahead of time (TMA on cuda:90)."""
    import re

    @wb.jit
    def copy_tile(a_desc, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
        t = a_desc.load([0, 0])
        r = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
        tl.store(out_ptr + r, t)

    src = ASTSource(copy_tile, signature={"a_desc": "tensordesc<fp16[64, 32]>", "out_ptr": "*fp16",
                                     "BM": "constexpr", "BN": "constexpr"},
               constexprs={"BM": 64, "BN": 32})
    k = wb.compile(src, target=GPUTarget("cuda", 90, 32))
    assert re.search(r"!tt\.tensordesc<tensor<64x32xf16", k.asm["ttir"])
    assert "cp.async.bulk.tensor" in k.asm["ptx"]
    with pytest.raises(Exception, match="tensor descriptor type"):
        wb.compile(ASTSource(copy_tile, signature={"a_desc": "tensordesc<fp16>", "out_ptr": "*fp16",
                                               "BM": "constexpr", "BN": "constexpr"},
                         constexprs={"BM": 64, "BN": 32}), target=GPUTarget("cuda", 90, 32))
