"""The quickstart's terminal columns: each row fits the terminal's width."""
import random

import pytest

import workbench
import workbench.language as tl
from workbench.viz.text_view import side_by_side, strip_locations


@workbench.jit
def scale_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=mask)


@pytest.fixture(scope="module")
def compiled():
    block = 2 ** random.randint(6, 10)
    return workbench.compile(scale_add, "*fp32:16", "*fp32:16", "*fp32:16", "i32", "fp32",
                             target="cuda:90", BLOCK=block)


@pytest.mark.parametrize("width", [80, 97, 120, 160])
def test_four_stages_fit_the_width(compiled, width):
    stages = ("source", "ttir", "ttgir", "ptx")
    text = side_by_side(compiled, stages, width=width, colour=False, max_lines=12)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert [c.strip() for c in lines[0].split(" | ")] == list(stages)
    col = len(lines[0].split(" | ")[0])
    assert 4 * col + 9 > width - 4            # the width is used, not left empty
    # every cell is its stage's line, cut with an ellipsis where it is longer than the column
    for k, stage in enumerate(stages):
        want, _ = strip_locations(compiled.asm[stage], compiled.line_maps.get(stage, []))
        for i, row in enumerate(lines[2:14]):
            cell = row.split(" | ")[k]
            line = want[i].replace("\t", "    ") if i < len(want) else ""
            if len(line) > col:
                assert cell == line[: col - 1] + "…"
            else:
                assert cell == line.ljust(col)
