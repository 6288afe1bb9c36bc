"""Shape ops on the CUDA backend (trans, reshape, join, split, cat; sort and flip built from
them; gather, histogram).

Without a GPU: the index maps the code generator emits (:mod:`workbench.codegen.nvptx.shape_ops`,
written once over an ALU) are evaluated on Python ints against numpy; the per-thread model of
both lowerings (register renaming and the shared-memory round trip) runs on the layouts the
compiler really chose for each shape op of real kernels; every kernel compiles to PTX for sm_80
and sm_90 and ptxas assembles it. On a GPU (``gpu`` marker): numpy references, fresh random
inputs, poisoned outputs."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from tests.ir_kit import K, ptr
from workbench.backends import nvidia_tools
from workbench.codegen.nvptx.shape_ops import PyAlu, gather_map, index_maps, lin, register_plan
from workbench.codegen.nvptx.threads import thread_layout
from workbench.ir.parser import parse_module
from workbench.ir.types import TensorType, i32
from workbench.layouts import BlockedLayout

PTXAS = nvidia_tools.find_tool("ptxas")
SHAPE_OPS = ("tt.trans", "tt.reshape", "tt.join", "tt.split", "tt.cat")


# numpy semantics of each op -------------------------------------------------------------------
def numpy_op(name, attrs, srcs, dst_shapes):
    if name == "tt.trans":
        return [np.transpose(srcs[0], [int(o) for o in attrs["order"]])]
    if name == "tt.reshape":
        return [srcs[0].reshape(dst_shapes[0])]
    if name == "tt.join":
        return [np.stack(srcs, axis=-1)]
    if name == "tt.split":
        return [srcs[0][..., 0], srcs[0][..., 1]]
    return [np.concatenate(srcs, axis=0)]


def via_map(flat, srcs, dst_shape):
    combined = np.concatenate([s.ravel() for s in srcs])
    out = np.empty(dst_shape, combined.dtype)
    for d in itertools.product(*[range(s) for s in dst_shape]):
        out[d] = combined[flat(PyAlu, d)]
    return out


CASES = [("tt.trans", {"order": [1, 0]}, [(4, 8)], [(8, 4)]),
         ("tt.trans", {"order": [2, 0, 1]}, [(2, 4, 8)], [(8, 2, 4)]),
         ("tt.trans", {"order": [1, 2, 0]}, [(3, 5, 2)], [(5, 2, 3)]),
         ("tt.reshape", {}, [(4, 8)], [(2, 16)]),
         ("tt.reshape", {}, [(6, 10)], [(3, 4, 5)]),
         ("tt.join", {}, [(4, 8), (4, 8)], [(4, 8, 2)]),
         ("tt.join", {}, [(3,), (3,)], [(3, 2)]),
         ("tt.split", {}, [(4, 8, 2)], [(4, 8), (4, 8)]),
         ("tt.cat", {}, [(4, 8), (4, 8)], [(8, 8)]),
         ("tt.cat", {}, [(3, 5), (2, 5)], [(5, 5)])]


@pytest.mark.parametrize("name,attrs,src_shapes,dst_shapes", CASES)
def test_index_maps_match_numpy(name, attrs, src_shapes, dst_shapes):
    rng = np.random.default_rng()
    srcs = [rng.integers(0, 1 << 30, s) for s in src_shapes]
    want = numpy_op(name, attrs, srcs, dst_shapes)
    maps = index_maps(name, attrs, src_shapes, dst_shapes)
    for f, w, shape in zip(maps, want, dst_shapes, strict=False):
        np.testing.assert_array_equal(via_map(f, srcs, shape), w)


def test_gather_map_matches_take_along_axis():
    rng = np.random.default_rng()
    src = rng.integers(0, 100, (4, 8))
    for axis in (0, 1):
        idx = rng.integers(0, src.shape[axis], (4, 8))
        f = gather_map(src.shape, axis)
        got = np.empty(idx.shape, src.dtype)
        for d in itertools.product(range(4), range(8)):
            got[d] = src.ravel()[f(PyAlu, d, int(idx[d]))]
        np.testing.assert_array_equal(got, np.take_along_axis(src, idx, axis))


# the per-thread model of the lowering -------------------------------------------------------
def simulate(name, attrs, srcs, src_types, dst_types):
    """What every thread computes, per :func:`shape_ops.lower_index_map`: returns the outputs
    and, per output, whether it was a register renaming."""
    s_tls = [thread_layout(t) for t in src_types]
    d_tls = [thread_layout(t) for t in dst_types]
    maps = index_maps(name, attrs, [t.shape for t in src_types], [t.shape for t in dst_types])
    nw = 1 << len(d_tls[0].warp)
    threads = [(w, ln) for w in range(nw) for ln in range(32)]
    plans = [register_plan(s_tls, d, f) for d, f in zip(d_tls, maps, strict=False)]
    renamed = all(p is not None for p in plans)
    buf = {}
    if not renamed:
        base = 0
        for a, stl in zip(srcs, s_tls, strict=False):
            for w, ln in threads:
                for c in stl.coords(w, ln):
                    buf.setdefault(base + lin(PyAlu, c, a.shape), set()).add(a[c])
            base += a.size
        assert all(len(v) == 1 for v in buf.values()) and len(buf) == base
    outs = []
    for d, f, plan in zip(d_tls, maps, plans, strict=False):
        got = {}
        for w, ln in threads:
            regs = [[a[c] for c in stl.coords(w, ln)] for a, stl in zip(srcs, s_tls, strict=False)]
            for r, c in enumerate(d.coords(w, ln)):
                if renamed:
                    k, i = plan[r]
                    v = regs[k][i]
                else:
                    (v,) = buf[f(PyAlu, c)]
                assert got.setdefault(c, v) == v, "two threads disagree on an element"
        out = np.empty(d.shape, srcs[0].dtype)
        assert len(got) == out.size, "an element of the result is never computed"
        for c, v in got.items():
            out[c] = v
        outs.append(out)
    return outs, renamed


def _shape_ops_of(ttgir_text):
    mod = parse_module(ttgir_text)
    return [op for op in mod.walk() if op.name in SHAPE_OPS]


def check_model(op):
    rng = np.random.default_rng()
    srcs = [rng.integers(0, 1 << 30, v.type.shape) for v in op.operands]
    dst_types = [r.type for r in op.results]
    outs, renamed = simulate(op.name, op.attributes, srcs, [v.type for v in op.operands],
                             dst_types)
    want = numpy_op(op.name, op.attributes, srcs, [t.shape for t in dst_types])
    for o, w in zip(outs, want, strict=False):
        np.testing.assert_array_equal(o, w)
    return renamed


# kernels ---------------------------------------------------------------------------------------
@wb.jit
def shape_k(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + r * N + c)
    if OP == "trans":
        tl.store(o_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], tl.trans(x))
    elif OP == "permute3":
        y = tl.permute(tl.reshape(x, (M, N // 4, 4)), (2, 0, 1))
        i = tl.arange(0, 4)[:, None, None]
        j = tl.arange(0, M)[None, :, None]
        k = tl.arange(0, N // 4)[None, None, :]
        tl.store(o_ptr + i * (M * (N // 4)) + j * (N // 4) + k, y)
    elif OP == "reshape":
        tl.store(o_ptr + tl.arange(0, M * N), tl.reshape(x, (M * N,)))
    elif OP == "join":
        y = tl.join(x, x * 2.0)
        tl.store(o_ptr + (r * N + c)[:, :, None] * 2 + tl.arange(0, 2)[None, None, :], y)
    elif OP == "split":
        a, b = tl.split(tl.reshape(x, (M, N // 2, 2)))
        tl.store(o_ptr + r * (N // 2) + tl.arange(0, N // 2)[None, :], a - 3.0 * b)
    elif OP == "interleave":
        y = tl.interleave(x, x + 0.5)
        tl.store(o_ptr + r * (2 * N) + tl.arange(0, 2 * N)[None, :], y)
    elif OP == "cat":
        y = tl.cat(x, x + 1.0, can_reorder=True)
        tl.store(o_ptr + tl.arange(0, 2 * M)[:, None] * N + c, y)
    elif OP == "sort":
        tl.store(o_ptr + r * N + c, tl.sort(x))
    elif OP == "sort_desc":
        tl.store(o_ptr + r * N + c, tl.sort(x, descending=True))
    else:  # flip
        tl.store(o_ptr + r * N + c, tl.flip(x, 1))


def numpy_shape(op, x):
    m, n = x.shape
    return {"trans": lambda: x.T, "permute3": lambda: x.reshape(m, n // 4, 4).transpose(2, 0, 1),
            "reshape": lambda: x.ravel(), "join": lambda: np.stack([x, x * 2], -1),
            "split": lambda: x[:, 0::2] - 3 * x[:, 1::2],
            "interleave": lambda: np.stack([x, x + 0.5], -1).reshape(m, 2 * n),
            "cat": lambda: np.concatenate([x, x + 1]), "sort": lambda: np.sort(x, 1),
            "sort_desc": lambda: -np.sort(-x, 1), "flip": lambda: x[:, ::-1]}[op]()


OPS = ["trans", "permute3", "reshape", "join", "split", "interleave", "cat", "sort",
       "sort_desc", "flip"]
SHAPES = [(8, 16, 4), (32, 64, 4), (16, 16, 1), (64, 32, 8), (2, 8, 2)]


def _compile(op, m, n, warps, target):
    return wb.compile(shape_k, "*fp32", "*fp32", M=m, N=n, OP=op, target=target,
                      num_warps=warps)


@pytest.mark.parametrize("m,n,warps", SHAPES)
@pytest.mark.parametrize("op", OPS)
def test_model_on_compiled_layouts(op, m, n, warps):
    """Every shape op of the compiled kernel, on the layouts it got, matches numpy when every
    thread does what the lowering emits."""
    c = _compile(op, m, n, warps, "cuda:90")
    for sop in _shape_ops_of(c.asm["ttgir"]):
        check_model(sop)


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("op", OPS)
def test_ptx_assembles(op, arch):
    c = _compile(op, 32, 64, 4, f"cuda:{arch}")
    assert ".entry shape_k" in c.asm["ptx"]
    if PTXAS:
        assert "cubin" in c.asm


def _blocked(spt, tpw, wpc, order):
    return BlockedLayout(tuple(spt), tuple(tpw), tuple(wpc), tuple(order))


def test_trans_of_permuted_blocked_is_a_register_renaming():
    """Triton's layout for trans: the source's blocked layout with every field permuted."""
    src = TensorType((32, 64), i32, _blocked([1, 4], [4, 8], [4, 1], [1, 0]))
    dst = TensorType((64, 32), i32, _blocked([4, 1], [8, 4], [1, 4], [0, 1]))
    x = np.arange(32 * 64).reshape(32, 64)
    (out,), renamed = simulate("tt.trans", {"order": [1, 0]}, [x], [src], [dst])
    assert renamed
    np.testing.assert_array_equal(out, x.T)


def test_join_split_on_a_register_dim_are_renamings():
    """join into a layout whose new minor dim of 2 lives in registers (and split back)."""
    a_t = TensorType((16, 32), i32, _blocked([1, 1], [4, 8], [4, 1], [1, 0]))
    j_t = TensorType((16, 32, 2), i32, _blocked([1, 1, 2], [4, 8, 1], [4, 1, 1], [2, 1, 0]))
    a, b = np.arange(512).reshape(16, 32), -np.arange(512).reshape(16, 32)
    (j,), renamed = simulate("tt.join", {}, [a, b], [a_t, a_t], [j_t])
    assert renamed
    np.testing.assert_array_equal(j, np.stack([a, b], -1))
    (x, y), renamed = simulate("tt.split", {}, [j], [j_t], [a_t, a_t])
    assert renamed
    np.testing.assert_array_equal(x, a)
    np.testing.assert_array_equal(y, b)


def test_shared_path_when_threads_differ():
    src = TensorType((32, 64), i32, _blocked([1, 4], [4, 8], [4, 1], [1, 0]))
    dst = TensorType((64, 32), i32, _blocked([1, 4], [4, 8], [4, 1], [1, 0]))
    x = np.arange(32 * 64).reshape(32, 64)
    (out,), renamed = simulate("tt.trans", {"order": [1, 0]}, [x], [src], [dst])
    assert not renamed
    np.testing.assert_array_equal(out, x.T)


def test_renaming_emits_no_shared_memory():
    ttgir = (
        "#a = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], "
        "warpsPerCTA = [4, 1], order = [1, 0]}>\n"
        "#b = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], "
        "warpsPerCTA = [1, 4], order = [0, 1]}>\n"
        'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, '
        'ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {'
    ) + """
  tt.func public @t(%p: !tt.ptr<f32>) {
    %0 = tt.splat %p : !tt.ptr<f32> -> tensor<32x64x!tt.ptr<f32>, #a>
    %1 = tt.load %0 : tensor<32x64x!tt.ptr<f32>, #a>
    %2 = tt.trans %1 {order = array<i32: 1, 0>} : tensor<32x64xf32, #a> -> tensor<64x32xf32, #b>
    %3 = tt.splat %p : !tt.ptr<f32> -> tensor<64x32x!tt.ptr<f32>, #b>
    tt.store %3, %2 : tensor<64x32x!tt.ptr<f32>, #b>
    tt.return
  }
}
"""
    from workbench.codegen.nvptx import compile_ttgir
    out = compile_ttgir(parse_module(ttgir), arch=90)
    assert "bar.sync" not in out.ptx and out.shared == 0


# gather and histogram (no frontend builtin yet: hand-built ttir) --------------------------------
def gather_kernel(m, n, axis):
    k = K("gather_k", [("x", ptr(i32)), ("i", ptr(i32)), ("o", ptr(i32))])
    offs = k.bin("arith.addi", k.broadcast(k.bin("arith.muli", k.expand(k.arange(0, m), 1),
                                                   k.splat(k.const(n, i32), (m, 1))), (m, n)),
                 k.broadcast(k.expand(k.arange(0, n), 0), (m, n)))
    x = k.load(k.addptr(k.args[0], offs))
    idx = k.load(k.addptr(k.args[1], offs))
    g = k.op("tt.gather", [x, idx], x.type, axis=axis)
    k.store(k.addptr(k.args[2], offs), g)
    return k.ret()


def histogram_kernel(n, bins, masked):
    k = K("hist_k", [("x", ptr(i32)), ("o", ptr(i32))])
    r = k.arange(0, n)
    x = k.load(k.addptr(k.args[0], r))
    ops = [x]
    if masked:  # count only even positions
        one = k.splat(k.const(1, i32), (n,))
        ops.append(k.cmp("arith.cmpi", "eq", k.bin("arith.andi", r, one),
                         k.splat(k.const(0, i32), (n,))))
    h = k.op("tt.histogram", ops, TensorType((bins,), i32))
    k.store(k.addptr(k.args[1], k.arange(0, bins)), h)
    return k.ret()


def _cuda(module, arch=90, num_warps=4):
    from workbench.backends.cuda import CudaBackend
    from workbench.config import CompileContext, Options, Target
    return CudaBackend(Target.parse(f"cuda:{arch}")).compile(
        module, None, Options(num_warps=num_warps), CompileContext())


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("build", [lambda: gather_kernel(16, 32, 0),
                                   lambda: gather_kernel(16, 32, 1),
                                   lambda: histogram_kernel(256, 16, False),
                                   lambda: histogram_kernel(1024, 64, True)])
def test_gather_histogram_ptx(build, arch):
    res = _cuda(build().module, arch)
    ptx = res.extra["ptx"]
    assert "bar.sync" in ptx and res.metadata.shared > 0
    if "hist_k" in ptx:
        assert "atom.shared.add.u32" in ptx or "red.shared.add.u32" in ptx
    if PTXAS:
        assert "cubin" in res.extra


# on the GPU ------------------------------------------------------------------------------------
def _dev(a):
    from workbench.backends.cuda_driver import DeviceArray
    return DeviceArray.from_numpy(a)


def _sync():
    from workbench.backends import cuda_driver
    cuda_driver.synchronize()


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,warps", SHAPES)
@pytest.mark.parametrize("op", OPS)
def test_shape_ops_gpu(op, m, n, warps):
    x = np.random.default_rng().standard_normal((m, n)).astype(np.float32)
    want = numpy_shape(op, x)
    dx, do = _dev(x), _dev(np.full(want.size, np.nan, np.float32))
    # bit-exact against numpy: no mul+add -> fma contraction (split computes a - 3.0 * b)
    shape_k[(1,)](dx, do, M=m, N=n, OP=op, num_warps=warps, enable_fp_fusion=False)
    _sync()
    np.testing.assert_array_equal(do.to_numpy().reshape(want.shape), want)


def _launch(module, grid, args, num_warps=4):
    from workbench.backends import cuda_driver as cd
    res = _cuda(module, 90, num_warps)
    assert res.launch_error is None, res.launch_error
    conv = [a.pointer_arg() if isinstance(a, cd.DeviceArray) else a for a in args]
    res.launcher(tuple(grid) + (1,) * (3 - len(grid)), conv)
    cd.synchronize()


@pytest.mark.gpu
@pytest.mark.parametrize("axis", [0, 1])
def test_gather_gpu(axis):
    rng = np.random.default_rng()
    m, n = 16, 32
    x = rng.integers(-1000, 1000, (m, n)).astype(np.int32)
    idx = rng.integers(0, (m, n)[axis], (m, n)).astype(np.int32)
    dx, di, do = _dev(x), _dev(idx), _dev(np.full((m, n), -7, np.int32))
    _launch(gather_kernel(m, n, axis).module, (1,), [dx, di, do])
    np.testing.assert_array_equal(do.to_numpy(), np.take_along_axis(x, idx, axis))


@pytest.mark.gpu
@pytest.mark.parametrize("n,bins,masked", [(256, 16, False), (1024, 64, True)])
def test_histogram_gpu(n, bins, masked):
    x = np.random.default_rng().integers(-4, bins + 4, n).astype(np.int32)
    dx, do = _dev(x), _dev(np.full(bins, -7, np.int32))
    _launch(histogram_kernel(n, bins, masked).module, (1,), [dx, do])
    v = x[0::2] if masked else x
    v = v[(v >= 0) & (v < bins)]
    np.testing.assert_array_equal(do.to_numpy(), np.bincount(v, minlength=bins))
