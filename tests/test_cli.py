"""``python -m workbench quickstart``: the README's first command."""
import pytest

from workbench.__main__ import main


def test_quickstart_runs_checks_and_writes_the_view(tmp_path, capsys):
    html = tmp_path / "view.html"
    assert main(["quickstart", "--target", "cpu", "--lines", "5", "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert "vector add on the CPU" in out and "equal to numpy" in out
    assert "stages of add_kernel for cpu: source, ttir, llir, asm" in out
    header = next(line for line in out.splitlines() if "source" in line and "|" in line)
    assert [c.strip() for c in header.split("|")] == ["source", "ttir", "llir", "asm"]
    cut = next(line for line in out.splitlines() if line.startswith("... cut at 5 lines"))
    assert "ttir" in cut and "asm" in cut and " more" in cut
    text = html.read_text()
    assert text.startswith("<!doctype html>") and "data-src" in text


def test_unknown_target_is_refused_before_any_work(capsys):
    with pytest.raises(SystemExit) as info:
        main(["quickstart", "--target", "tpu"])
    assert info.value.code == 2
    err = capsys.readouterr()
    assert "unknown target 'tpu'" in err.err and "vector add" not in err.out
