"""``%%tilekernel --signature`` with tuple-typed parameters, spelled in parentheses as
Triton's ``ASTSource(signature=...)`` takes a Python tuple of entries: the option parser's
groups, its errors, and a cell compiled from such a signature."""
from __future__ import annotations

import re

import pytest

from workbench.notebook.options import OptionsError, parse_options, split_signature
from workbench.viz.view_data import parse_view

PAIR = '''\
@jit
def scaled_copy(src, pair, out, BLOCK: tl.constexpr):
    ptr, scale = pair
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(src + offs) * scale + tl.load(ptr + offs))
'''


@pytest.mark.parametrize("text, want", [
    ("*fp32:16, (*fp32, i32), i32", ["*fp32:16", ("*fp32", "i32"), "i32"]),
    ("((*fp32,i32), None, 4),i64", [(("*fp32", "i32"), None, 4), "i64"]),
    ("(i32,), ()", [("i32",), ()]),
    ("*fp16:16", ["*fp16:16"]),
])
def test_groups_become_tuples(text, want):
    assert split_signature(text) == want
    assert parse_options(f'--signature "{text}"').signature == want


@pytest.mark.parametrize("text, message", [
    ("(*fp32, i32", "is not closed"), ("*fp32)", "without its"), ("(a,,b)", "empty element"),
    ("(a)b", "right after a ')'"), ("x(a)", "'(' after 'x'")])
def test_malformed_groups_are_named(text, message):
    with pytest.raises(OptionsError, match=re.escape(message)):
        split_signature(text)


def test_cell_with_a_tuple_parameter_compiles(shell):
    html = shell.html(f'%%tilekernel --target cpu --signature "*fp32, (*fp32:16, fp32), *fp32" '
                      f"-D BLOCK=64\n{PAIR}")
    d = parse_view(html)
    assert d.report["kernel"] == "scaled_copy"
    head = next(x.text for x in d.lines["ttir"] if "tt.func" in x.text)
    # the tuple is flattened into its elements, named as Triton 3.6 names them
    assert "(%src: !tt.ptr<f32>, %pair: !tt.ptr<f32> {tt.divisibility = 16 : i32}, " \
           "%pair_0: f32, %out: !tt.ptr<f32>)" in head
    assert any("arith.mulf" in x.text for x in d.lines["ttir"])
