"""tools/probe_language.py: its kernels name the probed line, and a run over a few names
classifies every outcome with no BAD one (exit status 0)."""
import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "probe_language.py"


@pytest.fixture(scope="module")
def probe():
    spec = importlib.util.spec_from_file_location("probe_language", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_case_line_holds_its_call(probe, tmp_path):
    path = tmp_path / "k.py"
    lines = probe.write_kernels(path)
    text = path.read_text().splitlines()
    assert len(lines) == len(probe.C) > 500
    for (_name, expr, _store, _valid), line in zip(probe.C, lines, strict=True):
        assert expr in text[line - 1] and text[line - 1].endswith("# probe")


@pytest.mark.parametrize("name", ["clamp", "histogram", "x.reduce_or"])
def test_probe_of_fixed_names_finds_nothing_bad(probe, name, capsys):
    assert probe.main(["--only", name, "--target", "interpreter", "--target", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "interpreter:" in out and "cpu:" in out and "ok " in out
