"""The shared-access records of ldmatrix/stmatrix accesses (``compiled.extra["shared_accesses"]``,
which the bank views redraw with :func:`workbench.layouts.bank_conflicts`) against the
addresses the emitted PTX really gives: every lane's row address of every instruction,
evaluated from the PTX text (:mod:`ptx_lanes`), then banks and wavefronts counted from those
addresses (PTX ISA 9.7.9.16/17: lane t gives row t % 8 of matrix t // 8; one 8-lane phase per
16-byte-per-lane matrix)."""
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.course.shared_layouts import conversion_buffer
from workbench.layouts import bank_conflicts, parse

sys.path.insert(0, str(Path(__file__).parent))
from ptx_lanes import matrix_addresses  # noqa: E402
from test_stmatrix import dot_store_t_k, dot_tma_store_k  # noqa: E402


@wb.jit
def dot_k(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b).to(tl.float16))


SIG = ("*fp16:16", "*fp16:16", "*fp16:16")
MM = {"BM": 64, "BN": 64, "BK": 32}


def _ptx_counts(rows: list, nw: int) -> tuple:
    """(wavefronts, worst conflict degree) of x4 instructions from their per-thread row
    addresses: per warp, four 8-lane phases of 16 bytes per lane."""
    total, worst = 0, 1.0
    for addr in rows:
        for w in range(nw):
            lanes = addr[32 * w:32 * (w + 1)]
            wf = ideal = 0
            for p in range(4):
                words = {int(a) // 4 + i for a in lanes[8 * p:8 * p + 8] for i in range(4)}
                per_bank = Counter(x % 32 for x in words)
                wf += max(per_bank.values())
                ideal += -(-len(words) // 32)
            total += wf
            worst = max(worst, wf / ideal)
    return total, worst


CASES = [  # (kernel, target, warps, record op, PTX form, tile shape of the buffer)
    (dot_k, "cuda:80", 4, "ttg.local_load (ldmatrix.x4,", "ldmatrix.sync.aligned.m8n8.x4."
     "shared.b16", (64, 32)),
    (dot_k, "cuda:80", 4, "ttg.local_load (ldmatrix.x4.trans", "ldmatrix.sync.aligned.m8n8.x4."
     "trans.shared.b16", (32, 64)),
    (dot_k, "cuda:80", 8, "ttg.local_load (ldmatrix.x4.trans", "ldmatrix.sync.aligned.m8n8.x4."
     "trans.shared.b16", (32, 64)),
    (dot_k, "cuda:90", 4, "ttg.convert_layout (ldmatrix.x4,", "ldmatrix.sync.aligned.m8n8.x4."
     "shared.b16", (64, 64)),
    (dot_store_t_k, "cuda:90", 4, "ttg.convert_layout (stmatrix.x4.trans", "stmatrix.sync."
     "aligned.m8n8.x4.trans.shared.b16", (64, 64)),
    (dot_store_t_k, "cuda:90", 8, "ttg.convert_layout (stmatrix.x4.trans", "stmatrix.sync."
     "aligned.m8n8.x4.trans.shared.b16", (64, 64)),
    (dot_tma_store_k, "cuda:90", 4, "ttg.local_alloc (stmatrix.x4,", "stmatrix.sync.aligned."
     "m8n8.x4.shared.b16", (64, 64)),
]


@pytest.mark.parametrize("kernel,target,nw,op,form,shape", CASES,
                         ids=[f"{c[0].__name__}-{c[1]}-w{c[2]}-{c[4].split('.')[0]}"
                              f"{'-trans' if 'trans' in c[4] else ''}" for c in CASES])
def test_record_is_what_the_ptx_addresses(kernel, target, nw, op, form, shape):
    c = wb.compile(kernel, *SIG, target=target, num_warps=nw, **MM)
    recs = [r for r in c.extra["shared_accesses"] if r["op"].startswith(op)]
    assert len(recs) == 1, [r["op"] for r in c.extra["shared_accesses"]]
    rec = recs[0]
    ptx_rows = [a for f, a in matrix_addresses(c.asm["ptx"], 32 * nw) if f == form]
    assert ptx_rows
    # the view's analysis of the record: per request, every lane's row (first word) address
    rep = bank_conflicts(conversion_buffer(rec["layout"], shape), parse(rec["access_layout"]),
                         shape, "fp16", rec["vector_bytes"])
    base = int(min(int(a.min()) for a in ptx_rows))
    assert base % 128 == 0  # buffers start on a bank line: banks are the same relative
    # a conversion moved in rounds reuses one round's buffer; its record numbers the rounds
    # as the high offset bits (the buffer layout's top bits), so compare within a round
    span = 1 << (int(max(int(a.max()) for a in ptx_rows)) - base + 15).bit_length()
    ours = Counter((q.warp, tuple(int(x) % span for x in q.addresses[:, 0]))
                   for q in rep.requests)
    theirs = Counter((w, tuple(int(x) - base for x in a[32 * w:32 * (w + 1)]))
                     for a in ptx_rows for w in range(nw))
    assert ours == theirs
    # per-lane banks of warp 0's first instruction, as the view draws them
    first = tuple((int(x) - base) // 4 % 32 for x in ptx_rows[0][:32])
    assert first in {tuple(int(b) for b in q.banks[:, 0]) for q in rep.requests if q.warp == 0}
    wavefronts, worst = _ptx_counts(ptx_rows, nw)
    assert rec["wavefronts"] == wavefronts == sum(rep.wavefronts)
    assert rec["conflict_degree"] == worst == rep.conflict_degree


def test_the_counts_see_conflicts():
    """The PTX-side count is not blind: rows 128 bytes apart in one phase are 8-way."""
    rows = [np.array([128 * (t % 8) for t in range(32)], np.int64)]
    assert _ptx_counts(rows, 1) == (32, 8.0)
