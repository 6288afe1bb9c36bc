"""``python -m workbench quickstart``: the README's first command."""
import pytest

from workbench.__main__ import main


def test_quickstart_runs_checks_and_writes_the_view(tmp_path, capsys):
    html = tmp_path / "view.html"
    assert main(["quickstart", "--target", "cpu", "--lines", "5", "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert "vector add on the CPU" in out and "equal to numpy" in out
    # both kernels compiled and shown, each with its own columns, in the order launched
    assert "stages of add_kernel for cpu: source, ttir, llir, asm" in out
    assert "stages of softmax_kernel for cpu: source, ttir, llir, asm" in out
    assert out.index("add_kernel for cpu") < out.index("softmax_kernel for cpu")
    lines = out.splitlines()
    at = [i for i, line in enumerate(lines) if line.split("|")[0].strip() == "source"]
    assert len(at) == 2, out
    for i in at:
        assert [c.strip() for c in lines[i].split("|")] == ["source", "ttir", "llir", "asm"]
    softmax_rows = lines[at[1] + 2:]
    assert any("def softmax_kernel" in r.split("|")[0] for r in softmax_rows[:5]), out
    cuts = [line for line in lines if line.startswith("... cut at 5 lines")]
    assert len(cuts) == 2 and all("ttir" in c and "asm" in c and " more" in c for c in cuts)
    text = html.read_text()
    assert text.startswith("<!doctype html>") and "data-src" in text
    assert text.count('data-wb-view="ir"') == 2
    assert "add_kernel" in text and "tt.reduce" in text     # the softmax's view is there too


def test_unknown_target_is_refused_before_any_work(capsys):
    with pytest.raises(SystemExit) as info:
        main(["quickstart", "--target", "tpu"])
    assert info.value.code == 2
    err = capsys.readouterr()
    assert "unknown target 'tpu'" in err.err and "vector add" not in err.out


def test_quickstart_html_for_cuda_has_the_sass(tmp_path, capsys):
    from workbench.backends.nvidia_tools import find_tool
    if find_tool("ptxas") is None or find_tool("nvdisasm") is None:
        pytest.skip("ptxas and nvdisasm are needed for SASS (pip install 'tile-workbench[sass]')")
    html = tmp_path / "view.html"
    assert main(["quickstart", "--lines", "3", "--html", str(html)]) == 0
    text = html.read_text()
    assert text.count('data-stage="sass"') >= 2 and "not made yet" not in text
