"""Lesson 5's three layouts of a transpose's shared buffer: plain (conflicted), padded and the
compiler's swizzle, from the compiler's own records and bank analysis; and real Triton's
shared layouts for the same kernels (skipped without Triton)."""
from __future__ import annotations

import numpy as np
import pytest

import workbench as wb
from workbench.course.lessons.l05_shared import matmul_nt, transpose_whole
from workbench.course.shared_layouts import (
    PaddedLines,
    compare_layouts,
    shared_layouts_in,
    shared_reads_in,
    table,
    triton_ttgir,
)
from workbench.viz.shared_report import shared_accesses

SIG = ("*fp32:16", "*fp32:16", "i32:16", "i32:16")


def test_padded_lines_offsets():
    rng = np.random.default_rng()
    rows, cols, pad = 8, 16, int(rng.integers(1, 4))
    by_rows = PaddedLines(pad, (1, 0)).offsets((rows, cols))
    by_cols = PaddedLines(pad, (0, 1)).offsets((rows, cols))
    i, j = int(rng.integers(rows)), int(rng.integers(cols))
    assert by_rows[i, j] == i * (cols + pad) + j
    assert by_cols[i, j] == j * (rows + pad) + i


def test_plain_padded_swizzled_for_the_lesson_transpose():
    ck = wb.compile(transpose_whole, *SIG, target="cuda:90", BM=64, BN=64)
    records = [r for r in shared_accesses(ck) if r["op"].startswith("ttg.convert_layout")]
    plain, padded, swizzled = compare_layouts(records[:2], (64, 64), "fp32")
    assert "vec = 1, perPhase = 1, maxPhase = 1" in plain.layout
    # the store walks down a column of 64 fp32: 16 of 32 lanes share a bank without help
    assert plain.accesses[0][:1] == ("st.shared",) and plain.accesses[0][3] == 16
    assert padded.accesses[1][1] == 4            # padding breaks the 16-byte vectors
    # the swizzle is the compiler's own record, figure for figure
    assert swizzled.layout == records[0]["layout"]
    assert [a[2] for a in swizzled.accesses] == [r["wavefronts"] for r in records[:2]]
    assert swizzled.wavefronts < padded.wavefronts < plain.wavefronts
    assert "16-way" in table([plain, padded, swizzled])


def test_triton_stages_exact_fp32_dot_operands_in_plain_buffers():
    pytest.importorskip("triton", reason="real Triton (the oracle) is not installed: "
                        "pip install 'tile-workbench[triton]'")
    # a convert_layout's scratch buffer is chosen in Triton's lowering to LLVM: none in ttgir
    assert shared_layouts_in(triton_ttgir(transpose_whole, *SIG, BM=64, BN=64)) == []
    sig = ("*fp32:16",) * 3 + ("i32:16",) * 3
    ttgir = triton_ttgir(matmul_nt, *sig, BM=32, BN=32, BK=32)
    shared = shared_layouts_in(ttgir)
    assert shared and all("vec = 1, perPhase = 1, maxPhase = 1" in s for s in shared), shared
    a, b = sorted(shared_reads_in(ttgir), key=lambda r: "opIdx = 1" in r["access_layout"])
    assert a["shape"] == b["shape"] == (32, 32) and "opIdx = 0" in a["access_layout"]
    # a's slab (K fastest, read along K in 16-byte vectors): no conflict; b's transposed slab
    # (K fastest, FMA lanes walking N, a multiple of 32 words apart): 16 lanes on one bank
    assert a["conflict_degree"] == 1 and a["vector_bytes"] == 16
    assert b["conflict_degree"] == 16 and b["vector_bytes"] == 4
    assert b["wavefronts"] == 8 * a["wavefronts"]


def test_shared_reads_of_our_own_ttgir():
    """The same reading works on the workbench's ttgir (an fp16 dot for cuda:80: ldmatrix
    operands from swizzled buffers, conflict-free)."""
    from workbench.course.lessons.l06_matmul import matmul_fp16
    ck = wb.compile(matmul_fp16, "*fp16:16", "*fp16:16", "*fp32:16", "i32:16", "i32:16",
                    "i32:16", target="cuda:80", BM=64, BN=64, BK=32)
    reads = shared_reads_in(ck.asm["ttgir"])
    assert len(reads) == 2 and all("swizzled_shared" in r["layout"] for r in reads)
    assert all(r["conflict_degree"] == 1 for r in reads), reads
