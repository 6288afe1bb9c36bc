"""binder/ installs as Binder (repo2docker) installs it: `pip install -r binder/requirements.txt`
from the repository root into a fresh virtual environment, then the quickstart gives every
stage (SASS included, with no second install) and JupyterLab is there to open the notebooks.
Needs the package registry (as `.ci/run` does); about a minute with pip's cache warm."""
from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_binder_requirements_install_into_a_fresh_environment(tmp_path):
    env_dir = tmp_path / "binder-env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", "-r",
                              "binder/requirements.txt"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=1200)
    assert install.returncode == 0, install.stderr[-3000:]
    quick = subprocess.run([str(py), "-m", "workbench", "quickstart", "--target", "cuda:90",
                            "--html", str(tmp_path / "q.html")], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=600)
    assert quick.returncode == 0, quick.stderr[-3000:]
    assert "stages of add_kernel for cuda:90: source, ttir, ttgir, llir, ptx, cubin, sass" \
        in quick.stdout
    lab = subprocess.run([str(env_dir / "bin" / "jupyter"), "lab", "--version"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert lab.returncode == 0 and int(lab.stdout.strip().split(".")[0]) >= 4
