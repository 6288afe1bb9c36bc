"""``%tilelayout``: parsing the line, drawing through an InteractiveShell, errors as boxes."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from workbench.layouts import MmaLayout, PaddedRowMajor, SwizzledSharedLayout  # noqa: E402
from workbench.notebook import layout_magic  # noqa: E402
from workbench.notebook.layout_magic import UsageError, parse_line, parse_shape, parse_shared  # noqa: E402

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
           "order = [1, 0]}>")
COLUMN_READER = ("#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], "
                 "warpsPerCTA = [1, 1], order = [0, 1]}>")
XOR = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 32, order = [1, 0]}>"


def test_parse_line():
    text, opts = parse_line(f"{BLOCKED} --shape 64x32 --warp 1 --per-thread --banks {XOR} "
                            f"--dtype fp16")
    assert text == BLOCKED
    assert opts == {"shape": "64x32", "warp": "1", "per-thread": True, "banks": XOR,
                    "dtype": "fp16"}
    assert parse_shape("64x32") == (64, 32) and parse_shape("1024") == (1024,)
    assert parse_shared("row-major") == PaddedRowMajor(0)
    assert parse_shared("pad:2") == PaddedRowMajor(2)
    assert parse_shared(XOR) == SwizzledSharedLayout(1, 1, 32, (1, 0))
    for bad in ("--shape 4x4", f"{BLOCKED} --shape", f"{BLOCKED} --warp 1 --warp 2",
                f"{BLOCKED} --per-thread yes"):
        with pytest.raises(UsageError):
            parse_line(bad)
    with pytest.raises(UsageError, match="shared layout"):
        parse_shared(BLOCKED)
    with pytest.raises(UsageError):
        parse_shape("64 by 64")


def test_magic_draws_one_warp(shell):
    result, outputs, _ = shell.run(f"%tilelayout {BLOCKED} --shape 32x32 --warp 1")
    assert result.success
    assert len(outputs) == 1 and 'data-wb-view="layout"' in outputs[0]["text/html"]
    fig = layout_magic.LAST["layout"]
    assert fig.workbench_data.shape == (32, 32)
    assert np.array_equal(fig.workbench_highlight, fig.workbench_data.warp == 1)
    assert layout_magic.LAST["banks"] is None


def test_magic_default_shape_and_mma(shell):
    shell.run(f"%tilelayout {BLOCKED}")
    assert layout_magic.LAST["shape"] == (16, 32)  # the blocked layout's CTA tile
    mma = ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], "
           "instrShape = [16, 8]}>")
    result, outputs, _ = shell.run(f"%tilelayout {mma} --shape 16x8")
    assert result.success and layout_magic.LAST["encoding"] == MmaLayout(2, (1, 1), (16, 8))
    assert layout_magic.LAST["layout"].workbench_labels[8, 0] == "T0:2"  # PTX ISA c2: row g+8


def test_magic_bank_view_with_compare(shell):
    result, outputs, _ = shell.run(f"%tilelayout {COLUMN_READER} --shape 32x32 --banks row-major "
                                   f"--compare {XOR} --dtype fp32")
    assert result.success and len(outputs) == 2
    reports = layout_magic.LAST["banks"].workbench_data["reports"]
    assert [r.conflict_degree for r in reports] == [32, 1]
    assert "32-way" in outputs[1]["text/plain"] and "conflict-free" in outputs[1]["text/plain"]


def test_bad_layout_shows_the_error_fails_the_cell_and_the_kernel_survives(shell):
    bad = BLOCKED.replace("[4, 8]", "[4, 4]")
    html = shell.html(f"%tilelayout {bad} --shape 32x32", fails=True)
    assert 'data-wb-error="1"' in html and "threadsPerWarp = [4, 4] has product 16" in html
    html = shell.html("%tilelayout #ttg.blocked<{sizePerThread = [1]", fails=True)
    assert 'data-wb-error="1"' in html
    html = shell.html("%tilelayout --shape 4x4", fails=True)            # no layout
    assert 'data-wb-usage="1"' in html
    result, outputs, _ = shell.run(f"%tilelayout {BLOCKED} --warp 9")
    assert shell.failed(result) and "warp = 9" in outputs[0]["text/plain"]
    # braces are not expanded as {variables}: the text reaches the parser as written
    shell.ns["n"] = 64
    result, outputs, _ = shell.run(f"%tilelayout {BLOCKED} --shape {{n}}x{{n}}")
    assert shell.failed(result)
    assert 'data-wb-usage="1"' in outputs[0]["text/html"] and "{n}x{n}" in outputs[0]["text/plain"]
    result, _, _ = shell.run("1 + 1")
    assert result.success and result.result == 2


def test_failed_cell_names_the_magic(shell):
    result, _, _ = shell.run(f"%tilelayout {BLOCKED} --warp 9")
    assert result.error_in_exec._render_traceback_()[0].startswith("%tilelayout: ")


def test_unknown_option_fails_with_usage(shell):
    html = shell.html(f"%tilelayout {BLOCKED} --bogus 3", fails=True)
    assert 'data-wb-usage="1"' in html and "unknown option --bogus" in html
    assert "--banks SHARED" in html                                     # the usage text
    with pytest.raises(UsageError, match="unknown option --colour"):
        parse_line(f"{BLOCKED} --colour red")


@pytest.mark.parametrize("line", ["--help", "-h", f"{BLOCKED} --help"])
def test_help_shows_usage_and_succeeds(shell, line):
    html = shell.html(f"%tilelayout {line}")
    assert 'data-wb-usage="1"' in html and "%tilelayout options" in html
    assert "--compare SHARED" in html and "unexpected character" not in html


def test_quoted_values_parse_like_tilekernel_options(shell):
    """shlex splitting: quoted layouts and --banks values are one value each; unquoted
    ones still run to the next option."""
    text, opts = parse_line(f'"{COLUMN_READER}" --shape 32x32 --banks "{XOR}" --dtype fp32')
    assert text == COLUMN_READER and opts["banks"] == XOR and opts["shape"] == "32x32"
    assert parse_line(f"'{BLOCKED}' --compare '{XOR}'")[1]["compare"] == XOR
    with pytest.raises(UsageError, match="cannot split the line"):
        parse_line(f'{BLOCKED} --banks "{XOR}')
    result, outputs, _ = shell.run(f'%tilelayout {COLUMN_READER} --shape 32x32 --banks "{XOR}"')
    assert result.success, result.error_in_exec
    assert [r.conflict_degree for r in
            layout_magic.LAST["banks"].workbench_data["reports"]] == [1]
