"""Tests of the hand-built-ttir helpers in :mod:`tests.ir_kit` themselves."""
from __future__ import annotations

import numpy as np

from tests.ir_kit import K, ptr_arg


def test_ptr_arg_spans_strided_views():
    base = np.zeros((4, 6), np.float32)
    v = base[::2, ::-3]
    pa = ptr_arg(v)
    b0 = base.ctypes.data
    assert pa.address == b0 + 5 * 4
    assert (pa.lo, pa.hi) == (b0 + 2 * 4, b0 + 2 * 24 + 5 * 4 + 4)


def test_builder_kit_finishes_with_return():
    k = K("empty", [])
    m = k.finish()
    assert m.regions[0].block.ops[0].regions[0].block.ops[-1].name == "tt.return"
