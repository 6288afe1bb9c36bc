"""The compile report lists every shared memory access with its bank-conflict degree, read by
data from the real CUDA backend's output."""
import re
from html import escape

import workbench
from workbench.testing.examples import matmul_fp16_kernel
from workbench.viz.ir_view import render_compiled
from workbench.viz.shared_report import shared_access_table


def test_matmul_view_lists_shared_accesses_with_conflict_degrees():
    c = workbench.compile(matmul_fp16_kernel, "*fp16:16", "*fp16:16", "*fp16:16", 256, 256, 256,
                          target="cuda:80", BM=64, BN=64, BK=32, GROUP_M=8)
    accesses = c.extra["shared_accesses"]
    assert accesses and any("cp.async" in a["op"] for a in accesses)
    html = render_compiled(c)
    degrees = re.findall(r"data-conflict='([^']*)'", html)
    assert [float(d) for d in degrees] == [float(a["conflict_degree"]) for a in accesses]
    assert "shared memory accesses" in html
    for a in accesses:  # each row names the access's source line and both layouts
        assert a["loc"].rsplit("/", 1)[-1] in html
        assert escape(a["layout"]) in html and escape(a["access_layout"]) in html


def test_no_table_and_notes_shown_for_a_cpu_kernel():
    from workbench.testing.examples import add_kernel
    c = workbench.compile(add_kernel, "*fp32:16", "*fp32:16", "*fp32:16", "i32",
                          target="cpu", BLOCK_SIZE=256)
    assert shared_access_table(c) == ""
    c.extra.setdefault("notes", []).append("a note from the backend")
    assert "a note from the backend" in render_compiled(c)
