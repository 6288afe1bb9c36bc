"""The README's library example runs as written (keeps the README true)."""
import pathlib
import runpy

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _block_after(heading: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("```python\n", text.index(heading)) + len("```python\n")
    return text[start:text.index("```", start)]


def test_library_example_runs(tmp_path, capsys):
    script = tmp_path / "readme_example.py"
    script.write_text(_block_after("## As a Python library"), encoding="utf-8")
    ns = runpy.run_path(str(script))
    assert ns["compiled"].metadata.target == "cuda:90"
    assert ".entry add" in capsys.readouterr().out
