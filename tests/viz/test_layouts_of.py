"""Layouts of a kernel's values read from ttgir text: ours (printed from the nvptx sample
kernels) and Triton 3.6's own dumps (shared/reference/triton-3.6-ir)."""
from pathlib import Path
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from workbench.codegen.nvptx import samples  # noqa: E402
from workbench.ir.core import Location  # noqa: E402
from workbench.ir.printer import print_module_with_map  # noqa: E402
from workbench.layouts import (  # noqa: E402
    BlockedLayout,
    DotOperandLayout,
    LayoutError,
    MmaLayout,
    SliceLayout,
    SwizzledSharedLayout,
    ownership,
)
from workbench.viz.layouts_of import (  # noqa: E402
    LayoutTable,
    draw_value,
    find_value,
    layouts,
    shared_accesses,
    value_layouts,
)

REF = Path(__file__).resolve().parents[3] / "shared" / "reference" / "triton-3.6-ir"
BLOCKED_2D = BlockedLayout((1, 1), (1, 32), (1, 4), (1, 0))


def _triton(name: str) -> str:
    path = REF / name
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    text = path.read_text()
    if "===== ttgir =====" in text:
        text = text[text.index("===== ttgir =====") + 17:]
        text = text[:text.index("=====")] if "=====" in text else text
    return text.split("===== ptx")[0]


@pytest.fixture(scope="module")
def reduce_text():
    text, line_locs = print_module_with_map(samples.reduce_2d(64, 128, axis=1), True)
    return text, line_locs


def test_our_ttgir_values_slices_and_reduce_result(reduce_text):
    text, _ = reduce_text
    vals = {v.name: v for v in value_layouts(text)}
    assert vals["%0"].encoding == SliceLayout(1, BLOCKED_2D) and vals["%0"].shape == (64,)
    assert vals["%1"].encoding == BLOCKED_2D and vals["%1"].shape == (64, 1)
    assert vals["%1"].element == "i32"
    # the tt.reduce result: its type comes from the closing "}) : (...) -> T" line
    red = vals["%12"]
    assert red.encoding == SliceLayout(1, BLOCKED_2D) and red.type.startswith("tensor<64xf32")
    # scalars (%c128_i32) and the reduce region's block arguments carry no layout
    assert "%c128_i32" not in vals and all(v.type.startswith("tensor<") for v in vals.values())
    # the location is the sample's source line
    assert red.loc.file == samples.FILE and red.loc.line > 1


def test_line_map_takes_precedence_over_loc_text(reduce_text):
    text, _ = reduce_text
    n = len(text.splitlines())
    locs = [Location("kernel.py", i + 1, 1) for i in range(n)]
    vals = value_layouts(text, locs)
    line_of = {i for i, line in enumerate(text.splitlines()) if line.strip().startswith("%1 =")}
    v1 = next(v for v in vals if v.name == "%1")
    assert v1.loc.file == "kernel.py" and v1.loc.line - 1 in line_of


def test_triton_matmul_values():
    vals = {v.name: v for v in value_layouts(_triton("ir_matmul_sm80.txt"))}
    mma = MmaLayout(2, (2, 2), (16, 8))
    assert vals["%a"].encoding == SwizzledSharedLayout(8, 2, 4, (1, 0))
    assert vals["%a"].shape == (2, 128, 32) and vals["%a"].element == "f16"
    assert vals["%b"].encoding == SwizzledSharedLayout(8, 1, 8, (1, 0))
    assert vals["%a_95"].encoding == DotOperandLayout(0, mma, 2)
    assert vals["%acc_98"].encoding == mma and vals["%acc_98"].shape == (128, 128)
    assert vals["%acc_98"].loc.file == "probe_ir.py" and vals["%acc_98"].loc.line == 82
    # scf.for results (%acc_77#k) and its iter_args have the loop's types
    assert vals["%acc_77#0"].encoding == mma and vals["%acc_80"].encoding == mma
    assert vals["%a_ptrs_81"].element == "!tt.ptr<f16>"
    assert "%acc_77#3" not in vals  # an i32 loop counter
    # arith.cmpi yields i1 over the operand's layout; tt.load yields the pointee type
    assert vals["%acc_46"].element == "i1"
    # casts "T1 to T2": the result is T2
    trunc = [v for v in vals.values() if v.element == "f16" and v.encoding == mma]
    assert trunc and trunc[0].shape == (128, 128)


def test_triton_softmax_loads_and_locations():
    vals = {v.name: v for v in value_layouts(_triton("ir_softmax.txt"))}
    assert vals["%x_4"].type == "tensor<1024xf32, #blocked>"  # tt.load of a pointer tensor
    assert vals["%mask_0"].element == "i1"
    assert vals["%cols"].loc.line == 49 and vals["%cols"].loc.name == "cols"
    assert "%row" not in vals and "%x_5" not in vals  # scalars: program id, 1-D reduce result


def test_shared_accesses_of_a_triton_buffer():
    text = _triton("ir_matmul_sm80.txt")
    acc = shared_accesses(text, "%a")
    ops = [op for op, _ in acc]
    assert ops.count("ttg.async_copy_global_to_local") == 3 and ops.count("ttg.local_load") == 1
    loads = [v for op, v in acc if op == "ttg.local_load"]
    assert loads[0].name == "%a_95"
    copies = [v for op, v in acc if op != "ttg.local_load"]
    assert all(v.encoding == BlockedLayout((1, 8), (8, 4), (4, 1), (1, 0)) for v in copies)


def test_draw_register_value_matches_ownership(reduce_text):
    text, _ = reduce_text
    fig = draw_value(text, "12")
    assert fig.workbench_value.name == "%12"
    want = ownership(SliceLayout(1, BLOCKED_2D), (64,))
    assert np.array_equal(fig.workbench_data.warp, want.warp)
    assert np.array_equal(fig.workbench_data.copies, want.copies)
    fig = draw_value(text, "%1", warp=2)
    assert np.array_equal(fig.workbench_highlight.reshape(-1),
                          (fig.workbench_data.warp == 2).reshape(-1))


def test_draw_shared_buffer_uses_its_accesses():
    text = _triton("ir_matmul_sm80.txt")
    fig = draw_value(text, "a")  # first access: the 16-byte cp.async writes
    op, val = fig.workbench_access
    rep = fig.workbench_data["reports"][0]
    assert op == "ttg.async_copy_global_to_local" and rep.vector_bytes == 16
    assert rep.shape == (128, 32) and rep.conflict_degree == 1
    k = [op for op, _ in shared_accesses(text, "%a")].index("ttg.local_load")
    assert k == 2  # two prologue copies, then the load in the loop
    fig = draw_value(text, "a", access=k)  # the local_load of the A fragment (4-byte reads)
    rep = fig.workbench_data["reports"][0]
    assert fig.workbench_access[0] == "ttg.local_load" and rep.vector_bytes == 4
    assert rep.conflict_degree == 1  # Triton's swizzle removes the 4-way conflict
    with pytest.raises(IndexError, match="access = 9"):
        draw_value(text, "a", access=9)


def test_errors_and_table(reduce_text):
    text, locs = reduce_text
    with pytest.raises(LayoutError, match="no value %nope.*%0"):
        find_value(text, "nope")
    cpu = SimpleNamespace(asm={"source": "", "ttir": "module {}", "llir": ""}, target="cpu")
    with pytest.raises(LayoutError, match="no ttgir stage.*cpu"):
        layouts(cpu)
    kernel = SimpleNamespace(asm={"ttgir": text}, line_maps={"ttgir": locs}, target="cuda:90")
    table = layouts(kernel)
    assert isinstance(table, LayoutTable) and [v.name for v in table] == \
        [v.name for v in value_layouts(text)]
    html = table._repr_html_()
    assert html.count("<tr>") == len(table) + 1 and "#ttg.slice" in html
    assert table.draw("%12").workbench_value.encoding == SliceLayout(1, BLOCKED_2D)
    bad = text.replace("threadsPerWarp = [1, 32]", "threadsPerWarp = [1, 16]")
    with pytest.raises(LayoutError, match="threadsPerWarp"):
        value_layouts(bad)
