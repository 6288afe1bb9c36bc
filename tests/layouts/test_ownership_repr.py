"""Short reprs: Ownership and BankReport print one line (layout, shape, counts, conflict
degree), not their per-element arrays."""
from __future__ import annotations

from workbench.layouts import PaddedRowMajor, SwizzledSharedLayout, bank_conflicts, ownership, parse

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
           "order = [1, 0]}>")
COLUMN_READER = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], "
                 "warpsPerCTA = [1, 1], order = [0, 1]}>")


def test_ownership_repr_is_one_short_line():
    own = ownership(parse(BLOCKED), (64, 64))
    text = repr(own)
    assert "\n" not in text and len(text) < 300, text
    assert text.startswith("Ownership(#ttg.blocked<") and "[64, 64]" in text
    assert "4 warps x 32 lanes x 32 registers" in text and "held once" in text
    bcast = repr(ownership(parse(BLOCKED), (8, 8)))               # smaller than the CTA tile
    assert "broadcast" in bcast and "\n" not in bcast


def test_bank_report_repr_is_one_short_line():
    rep = bank_conflicts(PaddedRowMajor(0), parse(COLUMN_READER), (32, 32), "fp32")
    text = repr(rep)
    assert "\n" not in text and len(text) < 400, text
    assert text.startswith("BankReport([32, 32] fp32") and "32-way conflict" in text
    assert f"{rep.total_wavefronts} wavefronts" in text
    xor = SwizzledSharedLayout(1, 1, 32, (1, 0))
    assert "conflict-free" in repr(bank_conflicts(xor, parse(COLUMN_READER), (32, 32), "fp32"))
