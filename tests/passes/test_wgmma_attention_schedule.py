"""Hopper's schedule of attention's pipelined loop (two wgmma per iteration), as Triton 3.6's
pipeliner makes it: ``S = Q @ K^T`` asynchronous and waited for at once (``{pendings = 0}``,
which also returns the previous iteration's ``acc``), ``P @ V`` asynchronous and left in
flight into the next iteration, the copies of the next K and V tiles after both dots, and a
``{pendings = 0}`` wait after the loop. Checked on the ttgir (our own and, where Triton is
installed, op for op against Triton's), on the PTX (the wgmma / cp.async wait structure,
ptxas), and by the interpreter running the pipelined ttgir against numpy."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from tests.passes.pipeline_kernels import pipelined_ttgir, run_ttgir
from workbench.ir.printer import print_module
from workbench.runtime.aot import compile as wb_compile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fidelity"))
from fidelity_kernels import CASES, attention_k  # noqa: E402

CASE = next(c for c in CASES if c.name == "attention")


def loop_ops(ttgir: str) -> list:
    """The ``ttg.``/``ttng.`` ops of the body of the loop holding the wgmma, in order, each as
    ``name[attrs]:results`` (``pendings``, ``num``, ``isAsync`` and the result count of a
    multi-result op), then ``|`` and the same for the ops after the loop."""
    lines = ttgir.splitlines()
    start = next(i for i, ln in enumerate(lines) if "scf.for" in ln)
    out, depth = [], 0
    for ln in lines[start + 1:]:
        s = ln.strip()
        if s.startswith("scf.yield") and depth == 0:
            out.append("|")
            depth = -1
            continue
        m = re.match(r'^(?:%[\w#]+(?::(\d+))? = )?"?([a-z_]+\.[a-z_]+)', s)
        if not m or not m.group(2).startswith(("ttg.", "ttng.")):
            continue
        extra = re.findall(r"(pendings = \d+|num = \d+|isAsync = true)", s)
        out.append(m.group(2) + (f"[{','.join(extra)}]" if extra else "") +
                   (f":{m.group(1)}" if m.group(1) else ""))
    return out


def _body(ops: list) -> list:
    return ops[:ops.index("|")]


@pytest.fixture(scope="module", params=[4, 8])
def compiled(request):
    return wb_compile(attention_k, *CASE.signature, target="cuda:90", num_warps=request.param,
                      **CASE.constexprs)


def test_first_dot_waits_at_once_second_stays_in_flight(compiled):
    ops = loop_ops(compiled.asm["ttgir"])
    body = [o for o in _body(ops) if not o.startswith("ttg.memdesc_index")]
    dots = [i for i, o in enumerate(body) if o.startswith("ttng.warp_group_dot[")]
    assert len(dots) == 2
    assert all(body[i] == "ttng.warp_group_dot[isAsync = true]" for i in dots)
    # S's wait returns S, Q's and K's buffers and the carried acc (4 results)
    assert body[dots[0] + 1] == "ttng.warp_group_dot_wait[pendings = 0]:4"
    assert not any(o.startswith("ttng.warp_group_dot_wait") for o in body[dots[0] + 2:])
    # the next tiles' copies come after both dots: K, then V
    assert body[dots[1] + 1:] == ["ttg.async_copy_global_to_local", "ttg.async_commit_group"] * 2
    assert body[0] == "ttg.async_wait[num = 2]"
    after = ops[ops.index("|") + 1:]
    assert after[:2] == ["ttng.warp_group_dot_wait[pendings = 0]", "ttg.async_wait[num = 0]"]


def test_the_scaled_accumulator_is_read_after_the_wait(compiled):
    text = compiled.asm["ttgir"]
    body = text[text.index("scf.for"):text.index("scf.yield")]
    wait = re.search(r"(%[\w]+):4 = ttng\.warp_group_dot_wait %\w+, %\w+, %\w+, (%\w+) ", body)
    assert wait is not None
    name, acc_arg = wait.groups()
    # the carried acc goes through the wait; the softmax rescale reads the wait's result
    assert re.search(rf"arith\.mulf {name}#3, ", body)
    assert not re.search(rf"arith\.mulf {acc_arg}, ", body)
    # the second dot accumulates into the rescaled acc (triton-combine folded the addition)
    assert not re.search(r"arith\.addf %\w+, %\w+ : tensor<64x64xf32", body)


def _ptx_waits(ptx: str) -> list:
    found = re.findall(r"(wgmma\.fence|wgmma\.commit_group|wgmma\.wait_group\.sync\.aligned\s+\d+|"
                       r"cp\.async\.wait_group\s+\d+|cp\.async\.commit_group)", ptx)
    return [re.sub(r"\s+", " ", f) for f in found]


def test_ptx_wait_structure_and_ptxas(compiled):
    seq = _ptx_waits(compiled.asm["ptx"])
    loop = seq[seq.index("cp.async.wait_group 2"):]
    # in the loop: wait for this iteration's tiles, S (fence, commit, wait 0), P @ V (fence,
    # commit, no wait), the next tiles' two groups; after it: wgmma wait 0, cp.async wait 0
    assert loop == ["cp.async.wait_group 2", "wgmma.fence", "wgmma.commit_group",
                    "wgmma.wait_group.sync.aligned 0", "wgmma.fence", "wgmma.commit_group",
                    "cp.async.commit_group", "cp.async.commit_group",
                    "wgmma.wait_group.sync.aligned 0", "cp.async.wait_group 0"], loop
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas is not installed: the PTX text was checked, not assembled")
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(compiled.asm["ptx"])
        p = subprocess.run(["ptxas", "-arch=sm_90a", str(src), "-o", str(Path(d) / "k.cubin")],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert "serialized" not in p.stderr  # no wgmma serialised for register hazards


@pytest.mark.parametrize("warps", [4, 8])
def test_schedule_is_tritons_op_for_op(warps):
    pytest.importorskip("triton", reason="the comparison needs real Triton 3.6 (extra 'triton')")
    from workbench.runtime.compare import compare
    c = compare(CASE.kernel, *CASE.signature, target="cuda:90", num_warps=warps,
                **CASE.constexprs)
    ours, theirs = loop_ops(c.ours["ttgir"]), loop_ops(c.theirs["ttgir"])
    n = ours.index("|") + 3  # the body and the two waits after the loop (Triton then also
    assert ours[:n] == theirs[:n]  # deallocates its buffers, which we leave implicit)
    assert _ptx_waits(c.ours["ptx"]) == _ptx_waits(c.theirs["ptx"])
    assert all(c.agree.values()), c.summary()


@pytest.mark.parametrize("warps,stages,bm,bn,d,L", [
    (4, 3, 64, 32, 64, 192), (8, 3, 64, 32, 64, 192), (4, 2, 64, 32, 64, 128),
    (8, 4, 64, 32, 64, 256), (4, 3, 64, 64, 64, 64), (4, 3, 64, 16, 128, 128),
    (8, 3, 128, 64, 64, 256), (4, 4, 64, 32, 128, 64)])
def test_interpreter_runs_the_pipelined_attention(warps, stages, bm, bn, d, L):
    """L // bn iterations (one to eight), fewer or more than the stages in flight."""
    module = pipelined_ttgir(attention_k, CASE.signature, stages=stages, num_warps=warps,
                             target="cuda:90", BM=bm, BN=bn, D=d)
    text = print_module(module, locations=False)
    assert text.count("isAsync = true") == 2 and "{pendings = 0 : i32}" in text
    rng = np.random.default_rng()
    q, k, v = (rng.standard_normal((L, d)).astype(np.float16) for _ in range(3))
    o = np.full((L, d), np.nan, np.float32)
    run_ttgir(module, (L // bm, 1, 1), [q, k, v, o, L])
    s = q.astype(np.float32) @ k.astype(np.float32).T
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v.astype(np.float32)
    np.testing.assert_allclose(o, ref, rtol=2e-2, atol=2e-2)
