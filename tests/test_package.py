"""What ``import workbench`` gives a user: subpackages as attributes, loaded on first use."""
import subprocess
import sys


def test_subpackages_are_reachable_after_a_plain_import():
    code = ("import sys, workbench\n"
            "assert 'workbench.testing' not in sys.modules\n"  # still lazy
            "print(workbench.testing.do_bench.__name__, workbench.viz.layout.__module__,\n"
            "      workbench.layouts.parse.__name__, workbench.language.arange.__name__)\n"
            "try:\n"
            "    workbench.no_such_thing\n"
            "except AttributeError as e:\n"
            "    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       check=False)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    assert first.split()[0] == "do_bench" and first.split()[2:] == ["parse", "arange"]
    assert first.split()[1].startswith("workbench.viz")
    assert second == "module 'workbench' has no attribute 'no_such_thing'"
