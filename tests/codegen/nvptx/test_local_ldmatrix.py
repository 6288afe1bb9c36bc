"""``ttg.local_load`` with ``ldmatrix`` into any distributed layout (Triton 3.6 tries it for
every local_load): the rows every lane addresses, run through the hardware's rule (PTX ISA
9.7.9.16: lane t gives row t % 8 of matrix t // 8; thread T gets word T % 4 of row T // 4, or
with ``.trans`` column T // 4 of rows 2 (T % 4) + e), deliver to each (warp, lane, register)
the element the destination layout puts there, at the buffer offset of the shared encoding's
swizzle. Without a GPU; the GPU run is ``tests/fidelity/test_fidelity_gpu.py``."""
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import workbench as wb
from workbench.codegen.nvptx.local_ldmatrix import plan_load
from workbench.codegen.nvptx.smem_access import swizzle_offset_py
from workbench.codegen.nvptx.threads import thread_layout
from workbench.layouts import parse

sys.path.insert(0, str(Path(__file__).parent))
from test_cvt_swizzle import _hardware_ldmatrix  # noqa: E402

SWZ = "#ttg.swizzled_shared<{{vec = {v}, perPhase = {p}, maxPhase = {m}, order = [{o}]}}>"
LIN = "#ttg.linear<{{register = [{r}], lane = [{ln}], warp = [{w}], block = []}}>"

CASES = [  # (shared encoding, destination layout, shape, element bits, warps, form)
    # the transposed K operand of Q K^T on sm_80 (Triton's #linear), 4 and 8 warps
    (SWZ.format(v=8, p=1, m=8, o="1, 0"),
     LIN.format(r="[0, 1], [0, 8], [0, 16], [0, 32], [16, 0], [32, 0]",
                ln="[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]", w="[8, 0], [0, 0]"),
     (64, 64), 16, 4, "plain"),
    (SWZ.format(v=8, p=1, m=8, o="1, 0"),
     LIN.format(r="[0, 1], [0, 8], [0, 16], [0, 32], [8, 0], [16, 0], [32, 0]",
                ln="[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]", w="[0, 0], [0, 0], [0, 0]"),
     (64, 64), 16, 8, "plain"),
    # a layout whose lanes 2-4 walk along a row: the transposed form
    (SWZ.format(v=8, p=1, m=8, o="1, 0"),
     LIN.format(r="[1, 0], [0, 8], [0, 16], [0, 32], [8, 0], [16, 0], [32, 0]",
                ln="[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]", w="[0, 0], [0, 0]"),
     (64, 64), 16, 4, "trans"),
    # 32-bit elements: one element per word, lanes 0-1 along the row
    (SWZ.format(v=4, p=1, m=8, o="1, 0"),
     LIN.format(r="[0, 4], [0, 8], [0, 16], [8, 0], [16, 0]",
                ln="[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]", w="[0, 0], [0, 0]"),
     (32, 32), 32, 4, "plain"),
    # column-major buffer (order [0, 1]): rows of the buffer are columns of the tensor
    (SWZ.format(v=8, p=1, m=8, o="0, 1"),
     LIN.format(r="[1, 0], [8, 0], [16, 0], [32, 0], [0, 8], [0, 16], [0, 32]",
                ln="[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]", w="[0, 0], [0, 0]"),
     (64, 64), 16, 4, "plain"),
    # 16-byte vectors per thread along the row: no ldmatrix form, ld.shared
    (SWZ.format(v=8, p=1, m=8, o="1, 0"),
     "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
     "order = [1, 0]}>", (64, 64), 16, 4, None),
]


def _tl(enc, shape):
    return thread_layout(SimpleNamespace(encoding=parse(enc), shape=shape))


@pytest.mark.parametrize("smem,dst,shape,bits,nw,form", CASES)
def test_ldmatrix_rows_deliver_the_layouts_elements(smem, dst, shape, bits, nw, form):
    enc, tl = parse(smem), _tl(dst, shape)
    m = plan_load(tl, enc, shape, bits)
    if form is None:
        assert m is None
        return
    assert m is not None and m.trans == (form == "trans")
    tile_bits = (shape[0] * shape[1]).bit_length() - 1
    got = _hardware_ldmatrix(m, SimpleNamespace(tile_bits=tile_bits), nw)
    kept = 0
    for i in range(tl.num_regs.bit_length() - 1):
        if any(tl.regs[1 << i]):
            kept |= 1 << i
    for w in range(nw):
        for t in range(32):
            for r, c in enumerate(tl.coords(w, t)):
                want = int(swizzle_offset_py(enc, shape, tuple(int(x) for x in c)))
                assert got[(w, t, r & kept)] == (0, want), (w, t, r, c)


def test_the_compiled_kernel_reads_the_linear_operand_with_ldmatrix():
    """The sm_80 Q K^T kernel: both local_loads (the Q operand and the #linear K tile) are
    ldmatrix.x4, 16 instructions as Triton 3.6 emits, recorded conflict-free."""
    sys.path.insert(0, str(Path(__file__).parents[2] / "fidelity"))
    from fidelity_kernels import scores_t_k
    c = wb.compile(scores_t_k, "*fp16:16", "*fp16:16", "*fp32:16", "i32", target="cuda:80",
                   num_warps=4, BM=64, BN=64, D=64)
    ptx = c.asm["ptx"]
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 16
    assert "ld.shared.b32" not in ptx
    recs = [r for r in c.extra["shared_accesses"] if r["op"].startswith("ttg.local_load")]
    assert [r["op"] for r in recs] == ["ttg.local_load (ldmatrix.x4, 16 B/lane)"] * 2
    assert all(r["conflict_degree"] == 1.0 for r in recs)
