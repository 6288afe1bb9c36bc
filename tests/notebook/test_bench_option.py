"""``%%tilekernel --bench "EXPR"``: option parsing, the launch split into kernel/grid/args, the
IR view of the bench's launch, the roofline shown with the run as a point (ceilings and timing
stubbed: fixed roofs, 2 ms per launch), errors as boxes."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from workbench.notebook.bench_cell import split_launch
from workbench.notebook.options import parse_options

cm = importlib.import_module("workbench.testing.ceilings")  # modules, not the functions
sw = importlib.import_module("workbench.testing.sweep")

CELL = '''\
@jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)
'''
ROOFS = cm.Ceilings(target="cpu", machine="test", bandwidth=10e9, compute={"fp32": 100e9})


@pytest.fixture
def stubbed(monkeypatch):
    monkeypatch.setattr(cm, "ceilings", lambda target="cpu", refresh=False, **kw: ROOFS)
    launched = []

    def time_ms(fn, device="cpu", warmup=25, rep=100):
        launched.append(fn())
        return 2.0
    monkeypatch.setattr(sw, "time_ms", time_ms)
    return launched


def test_option_parsed():
    opts = parse_options('--target cpu --bench "add[(4,)](x, y, o, n, BLOCK=256)"')
    assert opts.bench == "add[(4,)](x, y, o, n, BLOCK=256)"
    assert parse_options("").bench is None


def test_split_launch():
    import workbench.testing.examples as ex
    x = np.ones(8, np.float32)
    ns = {"k": ex.add_kernel, "x": x, "args": (x, x), "kw": {"BLOCK_SIZE": 8}}
    lnch = split_launch("k[(1,)](*args, x, 8, **kw)", ns)
    assert lnch.grid == (1,) and len(lnch.args) == 4 and lnch.kwargs == {"BLOCK_SIZE": 8}
    assert split_launch("print(1)", ns) is None
    assert split_launch("x[0](1)", ns) is None          # not a kernel


def test_bench_shows_view_and_roofline(shell, stubbed):
    shell.ns.update(x=np.ones(1024, np.float32), y=np.ones(1024, np.float32),
                    o=np.zeros(1024, np.float32))
    html = shell.html('%%tilekernel --target cpu --bench "add[(4,)](x, y, o, 1024, BLOCK=256)"\n'
                      + CELL)
    assert 'data-wb-view="ir"' in html and 'data-wb-view="roofline"' in html
    assert "<svg" in html and "<title>#1 add" in html   # the plot, with its tooltip
    assert "AI 0.0833 FLOP/B" in html                 # 1024 FLOP / 12288 bytes
    assert "0.00614 GB/s" in html                     # 12288 B / 2 ms
    assert "data-wb-error" not in html
    assert (shell.ns["o"] == 2).all() and stubbed     # it really launched


def test_bench_with_signature_view_and_flag(shell, stubbed, monkeypatch):
    slow = cm.Ceilings(target="cpu", machine="t", bandwidth=1e3, compute={"fp32": 1e3})
    monkeypatch.setattr(cm, "ceilings", lambda target="cpu", refresh=False, **kw: slow)
    shell.ns.update(x=np.ones(256, np.float32), y=np.ones(256, np.float32),
                    o=np.zeros(256, np.float32))
    html = shell.html('%%tilekernel --target cpu --signature "*fp32:16,*fp32:16,*fp32:16,i32" '
                      '-D BLOCK=256 --bench "add[(1,)](x, y, o, 256, BLOCK=256)"\n' + CELL)
    assert 'data-wb-view="roofline"' in html and "above its roof" in html


def test_bench_errors_are_boxes(shell, stubbed):
    html = shell.html('%%tilekernel --target cpu --bench "add[(1,)](nope, 1)"\n' + CELL,
                      fails=True)
    assert 'data-wb-error="1"' in html and "NameError" in html
    html = shell.html('%%tilekernel --target cpu --signature "*fp32,*fp32,*fp32,i32" -D BLOCK=16 '
                      '--bench "len([1])"\n' + CELL)
    assert "--bench expects a launch" in html
