"""The suite shim's ``triton._filecheck`` (Triton's frontend test helpers): ``run_parser``
gives our frontend's ttir before any pass, and a kernel's ``# CHECK`` comments are matched
against it. Run in a subprocess: the shim is a package named ``triton`` and must not shadow
the real one in this process."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent('''
    import sys
    sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tools/triton_suite"]
    import numpy as np
    import pytest
    import triton
    import triton.language as tl
    from triton._filecheck import filecheck_test, run_filecheck_test, run_parser


    @tl.core._aggregate
    class Span:
        lo: tl.tensor
        n: tl.constexpr

        def __init__(self, lo, n):
            self.lo = lo
            self.n = n


    @triton.jit
    def good():
        # CHECK-LABEL: tt.func public @good
        # CHECK: tt.make_range {end = 8 : i32, start = 0 : i32}
        # CHECK-NOT: tt.load
        # CHECK: arith.muli
        s = Span(tl.arange(0, 8), 8)
        _ = s.lo * s.n


    @triton.jit
    def wrong():
        # CHECK: tt.atomic_rmw
        _ = tl.arange(0, 4)


    @triton.jit
    def with_args(x_ptr, N: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, N), 1.0)


    filecheck_test(good)()
    with pytest.raises(ValueError, match="atomic_rmw"):
        run_filecheck_test(wrong)
    text = run_parser(with_args, args=(np.zeros(16, np.float32), 16)).str_nodebug()
    assert "%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}" in text, text
    assert "end = 16 : i32" in text and "tt.store" in text, text
    print("shim-ok")
''')


def test_run_parser_and_filecheck_through_the_shim(tmp_path):
    script = tmp_path / "frontend_case.py"  # kernels need a source file
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script), ROOT], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and "shim-ok" in out.stdout, out.stderr[-3000:]
