"""FileCheck-style assertions on IR text through the ``filecheck`` package (LLVM FileCheck's
Python clone): ``check(text, '''CHECK: ... / CHECK-NEXT: ... / CHECK-NOT: ...''')``."""
from __future__ import annotations

import contextlib
import io
import os
import tempfile

from filecheck.matcher import Matcher
from filecheck.options import Options


def run_filecheck(text: str, checks: str, **options) -> tuple[int, str]:
    """Run filecheck with the directives ``checks`` on ``text``; returns (exit code, messages).
    ``options`` are filecheck Options fields (``match_full_lines=True``, ...)."""
    with tempfile.TemporaryDirectory() as d:
        check_path = os.path.join(d, "checks.mlir")
        input_path = os.path.join(d, "input.mlir")
        with open(check_path, "w") as f:
            f.write(checks)
        with open(input_path, "w") as f:
            f.write(text)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
            opts = Options(match_filename=check_path, input_file=input_path, **options)
            code = Matcher.from_opts(opts).run()
    return code, err.getvalue()


def check(text: str, checks: str, **options) -> None:
    """Assert that ``text`` satisfies the FileCheck directives in ``checks``."""
    code, msg = run_filecheck(text, checks, **options)
    assert code == 0, f"FileCheck failed:\n{msg}\n--- input ---\n{text}"
