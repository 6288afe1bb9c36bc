"""Shared test set-up: the ``backend`` parameter (every backend that runs kernels here) and
the automatic skip of ``gpu``-marked tests where no CUDA device is usable."""
from __future__ import annotations

import functools
import importlib
import os
import tempfile

import pytest


def pytest_configure(config):
    """Tests never read or fill the user's real cache: every run gets a fresh cache folder
    (compiled kernels, notebook cells, measured ceilings), removed at exit."""
    tmp = tempfile.TemporaryDirectory(prefix="workbench-test-cache-")
    config._workbench_cache = tmp
    os.environ["WORKBENCH_CACHE_DIR"] = tmp.name


def pytest_unconfigure(config):
    tmp = getattr(config, "_workbench_cache", None)
    if tmp is not None:
        tmp.cleanup()

# backend name -> module that must import for it to be tested
_RUNNABLE = {"cpu": "workbench.backends.cpu", "interpreter": "workbench.backends.interpreter"}


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and module.startswith(e.name):
            return False
        raise
    return True


def runnable_backends() -> list:
    """Backends kernel tests run on: "cpu" always (it must work), "interpreter" when
    ``workbench.backends.interpreter`` exists."""
    return ["cpu"] + [b for b in ("interpreter",) if _importable(_RUNNABLE[b])]


@functools.lru_cache(maxsize=1)
def cuda_device_usable() -> bool:
    """True when cuda-bindings is installed and the driver reports at least one device."""
    try:
        from cuda.bindings import driver as drv
    except ImportError:
        return False
    try:
        if drv.cuInit(0)[0] != drv.CUresult.CUDA_SUCCESS:
            return False
        err, count = drv.cuDeviceGetCount()
        return err == drv.CUresult.CUDA_SUCCESS and count > 0
    except Exception:  # a broken driver install counts as no device
        return False


@pytest.fixture(autouse=True, scope="session")
def _ir_round_trip():
    """Every kernel the suite compiles is an IR round-trip case (tests/ir/round_trip.py)."""
    from tests.ir.round_trip import install
    undo = install()
    yield
    undo()


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", runnable_backends(), indirect=True)


@pytest.fixture
def backend(request, monkeypatch):
    """The backend a kernel test launches on: "cpu" (numpy arrays run there) or
    "interpreter" (``WORKBENCH_INTERPRET=1`` for the test's duration)."""
    if request.param == "interpreter":
        monkeypatch.setenv("WORKBENCH_INTERPRET", "1")
    else:
        monkeypatch.delenv("WORKBENCH_INTERPRET", raising=False)
    return request.param


def pytest_collection_modifyitems(config, items):
    gpu_items = [it for it in items if it.get_closest_marker("gpu")]
    if gpu_items and not cuda_device_usable():
        skip = pytest.mark.skip(reason="needs an NVIDIA GPU with cuda-bindings; none usable here")
        for it in gpu_items:
            it.add_marker(skip)


@pytest.fixture(scope="session")
def browser():
    """Headless system Chromium (``shutil.which("chromium")``; playwright's own browser downloads
    are never used) through playwright's sync API, one for the whole session: the sync API
    cannot be started twice in one process, so every browser test shares this one."""
    import shutil

    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=shutil.which("chromium"), headless=True,
                              args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        yield b
        b.close()
