"""Every ``WORKBENCH_*`` setting is read in workbench/config.py, by one parser."""
import ast
import re
from pathlib import Path

import pytest

from workbench import config

ROOT = Path(__file__).resolve().parents[1] / "workbench"


def _environment_reads(path: Path) -> list[int]:
    """Lines of ``path`` that touch ``os.environ`` or ``os.getenv``/``putenv``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv"):
            out.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and \
                any(a.name in ("environ", "getenv") for a in node.names):
            out.append(node.lineno)
    return out


def test_only_config_reads_the_environment():
    found = {str(p.relative_to(ROOT.parent)): lines for p in sorted(ROOT.rglob("*.py"))
             if p.name != "config.py" or p.parent != ROOT
             for lines in [_environment_reads(p)] if lines}
    assert not found, f"environment read outside workbench/config.py: {found}"


def test_every_setting_named_in_the_package_is_declared_and_documented():
    named = set()
    for p in ROOT.rglob("*.py"):
        named |= set(re.findall(r"WORKBENCH_[A-Z0-9_]+", p.read_text(encoding="utf-8")))
    assert named <= set(config.SETTINGS), named - set(config.SETTINGS)
    for name in config.SETTINGS:
        assert f"``{name}``" in config.__doc__, name
    readme = (ROOT.parent / "README.md").read_text(encoding="utf-8")
    for name in config.SETTINGS:
        assert f"`{name}" in readme, name


@pytest.mark.parametrize("value, want", [(None, None), ("", None), ("  ", None), ("0", False),
                                         ("false", False), ("No", False), (" OFF ", False),
                                         ("1", True), ("true", True), ("yes", True),
                                         ("on", True), ("2", True)])
def test_one_parser_for_on_off_settings(monkeypatch, value, want):
    for name in ("WORKBENCH_DISK_CACHE", "WORKBENCH_INTERPRET"):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
        expected = config.SETTINGS[name] if want is None else want
        assert config.env_flag(name) is expected


def test_text_settings_and_unknown_names(monkeypatch):
    monkeypatch.setenv("WORKBENCH_PTXAS", "  /opt/ptxas ")
    assert config.env_text("WORKBENCH_PTXAS") == "/opt/ptxas"
    monkeypatch.delenv("WORKBENCH_CUDA_MMA", raising=False)
    assert config.env_text("WORKBENCH_CUDA_MMA") == "auto"
    with pytest.raises(KeyError, match="SETTINGS"):
        config.env_flag("WORKBENCH_NO_SUCH_SETTING")
    with pytest.raises(KeyError):
        config.env_reader(("WORKBENCH_NO_SUCH_SETTING",))


def test_env_reader_sees_changes(monkeypatch):
    read = config.env_reader(config.LAUNCH_ENV)
    monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    monkeypatch.delenv("WORKBENCH_DEBUG", raising=False)
    first = read()
    # raw values: bytes where os.environ keeps them encoded (POSIX), else str
    assert first[0] in ("1", b"1") and first[config.LAUNCH_ENV.index("WORKBENCH_DEBUG")] is None
    monkeypatch.setenv("WORKBENCH_DEBUG", "yes")
    assert read()[config.LAUNCH_ENV.index("WORKBENCH_DEBUG")] in ("yes", b"yes")
