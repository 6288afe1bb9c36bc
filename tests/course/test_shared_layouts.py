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
    table,
    triton_shared_layouts,
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
    assert triton_shared_layouts(transpose_whole, *SIG, BM=64, BN=64) == []
    shared = triton_shared_layouts(matmul_nt, "*fp32:16", "*fp32:16", "*fp32:16", "i32:16",
                                   "i32:16", "i32:16", BM=32, BN=32, BK=32)
    assert shared and all("vec = 1, perPhase = 1, maxPhase = 1" in s for s in shared), shared
