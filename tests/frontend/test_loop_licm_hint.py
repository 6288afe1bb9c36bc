"""``disable_licm`` on ``tl.range`` and ``tl.condition``: the loop carries Triton's
``llvm.loop_annotation`` attribute in ttir (``scf.for`` after its body, ``scf.while`` as
``attributes {...}``), the text parses back, the CPU backend's LLVM IR gives the loop's back
edge ``!llvm.loop`` metadata naming ``llvm.licm.disable``, and the loops still compute the
right values. Python's ``print`` in a kernel is ``tl.device_print`` (a ``tt.print``), as in
Triton."""
import re

import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.ir.attrs import LICM_DISABLED, LoopAnnotation
from workbench.ir.parser import parse_module
from workbench.ir.printer import print_module

rng = np.random.default_rng()


@wb.jit
def _sum_for(x_ptr, out_ptr, n, NO_LICM: tl.constexpr):
    acc = 0.0
    for i in tl.range(0, n, disable_licm=NO_LICM):
        acc += tl.load(x_ptr + i) * tl.load(x_ptr)   # x[0]: a loop-invariant load
    tl.store(out_ptr, acc)


@wb.jit
def _count_while(x_ptr, out_ptr, n, NO_LICM: tl.constexpr):
    i = 0
    hits = 0
    while tl.condition(i < n, disable_licm=NO_LICM):
        hits += (tl.load(x_ptr + i) > tl.load(x_ptr + n)).to(tl.int32)
        i += 1
    tl.store(out_ptr, hits)


@wb.jit
def _prints(n):
    for i in tl.range(0, n):
        print("i", i)


def _loop_ops(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if "llvm.loop_annotation" in ln]


@pytest.mark.parametrize("no_licm", [True, False])
def test_ttir_carries_the_annotation_only_when_asked(no_licm):
    k = wb.compile(_sum_for, "*fp32", "*fp32", "i32", target="cpu", NO_LICM=no_licm)
    w = wb.compile(_count_while, "*fp32", "*i32", "i32", target="cpu", NO_LICM=no_licm)
    for_lines, while_lines = _loop_ops(k.asm["ttir"]), _loop_ops(w.asm["ttir"])
    if not no_licm:
        assert for_lines == [] and while_lines == []
        return
    assert len(for_lines) == 1 and for_lines[0].strip().startswith("} {llvm.loop_annotation")
    assert len(while_lines) == 1 and "} attributes {llvm.loop_annotation" in while_lines[0]
    assert str(LICM_DISABLED) in for_lines[0] and str(LICM_DISABLED) in while_lines[0]


def test_the_annotation_parses_back():
    text = wb.compile(_count_while, "*fp32", "*i32", "i32", target="cpu",
                      NO_LICM=True).asm["ttir"]
    module = parse_module(text)
    loops = [op for op in module.walk() if op.name == "scf.while"]
    note = loops[0].attributes["llvm.loop_annotation"]
    assert isinstance(note, LoopAnnotation) and note.licm_disabled and note == LICM_DISABLED
    assert _loop_ops(print_module(module)) == _loop_ops(text)
    assert not LoopAnnotation("licm = <versioningDisable = true>").licm_disabled


@pytest.mark.parametrize("which", ["for", "while"])
@pytest.mark.parametrize("no_licm", [True, False])
def test_llir_back_edge_metadata(which, no_licm):
    kernel, sig = ((_sum_for, ("*fp32", "*fp32", "i32")) if which == "for"
                   else (_count_while, ("*fp32", "*i32", "i32")))
    llir = wb.compile(kernel, *sig, target="cpu", NO_LICM=no_licm).asm["llir"]
    assert ("llvm.licm.disable" in llir) == no_licm
    if no_licm:
        m = re.search(r"br i1 .*!llvm\.loop (!\d+)", llir)
        assert m is not None
        ident = m.group(1)
        node = re.search(rf"^{ident} = (distinct )?!\{{(.*)\}}$", llir, re.M)
        assert node is not None and node.group(2).split(",")[0].strip() == ident


@pytest.mark.parametrize("no_licm", [True, False])
def test_annotated_loops_compute_the_same_values(backend, no_licm):
    n = int(rng.integers(5, 40))
    x = rng.standard_normal(n + 1).astype(np.float32)
    out = np.full(1, np.nan, np.float32)
    _sum_for[(1,)](x, out, n, NO_LICM=no_licm)
    np.testing.assert_allclose(out[0], np.sum(x[:n] * x[0], dtype=np.float64), rtol=1e-5,
                               atol=1e-6 * np.abs(x[:n] * x[0]).sum())  # the sum may cancel
    hits = np.full(1, -1, np.int32)
    _count_while[(1,)](x, hits, n, NO_LICM=no_licm)
    assert hits[0] == int(np.sum(x[:n] > x[n]))


def test_builtin_print_is_a_device_print(capsys):
    k = wb.compile(_prints, "i32", target="cpu")
    ttir = k.asm["ttir"]
    assert re.search(r'tt\.print "i " \{hex = false, isSigned = array<i32: 1>\} : %i : i32', ttir)
    assert "scf.for" in ttir
    assert capsys.readouterr().out == ""   # nothing printed while compiling


@wb.jit
def _print_loaded(x_ptr, n):
    for i in tl.range(0, n):
        print("v", tl.load(x_ptr + i))


def test_builtin_print_prints_when_the_kernel_runs(backend, capfd):
    n = int(rng.integers(2, 6))
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    _print_loaded[(1,)](x, n)
    lines = [ln for ln in capfd.readouterr().out.splitlines() if ln.strip()]
    assert [int(ln.split()[-1]) for ln in lines] == x.tolist()
