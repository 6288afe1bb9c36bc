"""Printing and parsing of layout attributes: round trips, real Triton 3.6 text, bad input."""
import re
from pathlib import Path

import pytest

from workbench.layouts import (
    BlockedLayout,
    DotOperandLayout,
    LayoutError,
    LinearEncoding,
    LinearLayout,
    MmaLayout,
    NVMMASharedLayout,
    SliceLayout,
    SwizzledSharedLayout,
    check_num_warps,
    parse,
    parse_aliases,
    to_linear,
)

IR_DIR = Path("/work/shared/reference/triton-3.6-ir")

BLK = BlockedLayout((1, 8), (4, 8), (8, 1), (1, 0))
MMA2 = MmaLayout(2, (2, 2), (16, 8))
MMA3 = MmaLayout(3, (8, 1), (16, 128, 16))
ALL = [
    BlockedLayout((4,), (32,), (4,), (0,)),
    BLK,
    SliceLayout(1, BLK),
    SliceLayout(0, SliceLayout(2, BlockedLayout((1, 1, 4), (2, 4, 4), (1, 2, 2), (2, 1, 0)))),
    MMA2, MMA3,
    DotOperandLayout(0, MMA2, 2), DotOperandLayout(1, MMA2, 4), DotOperandLayout(0, MMA3, 2),
    DotOperandLayout(0, BLK), DotOperandLayout(1, BLK),
    SwizzledSharedLayout(8, 2, 4, (1, 0)), SwizzledSharedLayout(1, 1, 1, (0,)),
    NVMMASharedLayout(128, False, 16), NVMMASharedLayout(64, True, 8),
    LinearEncoding(to_linear(MMA2, (32, 32))),
    LinearEncoding(to_linear(BlockedLayout((4,), (32,), (4,), (0,)), (256,))),
]


@pytest.mark.parametrize("enc", ALL, ids=lambda e: str(e)[:40])
def test_round_trip(enc):
    assert parse(str(enc)) == enc
    assert hash(parse(str(enc))) == hash(enc)


def test_exact_triton_text():
    assert str(BlockedLayout([4], [32], [4], [0])) == (
        "#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>")  # noqa: E501
    assert str(MMA2) == ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = "
                         "[2, 2], instrShape = [16, 8]}>")
    assert str(SwizzledSharedLayout(8, 2, 4, [1, 0])) == (
        "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>")
    assert str(NVMMASharedLayout(128, False, 16)) == (
        "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>")


def test_inline_and_alias_printing():
    s = SliceLayout(1, BLK)
    assert str(s) == f"#ttg.slice<{{dim = 1, parent = {BLK}}}>"
    names = {BLK: "#blocked", MMA2: "#mma"}
    assert s.to_text(names.get) == "#ttg.slice<{dim = 1, parent = #blocked}>"
    d = DotOperandLayout(0, MMA2, 2)
    assert d.to_text(names.get) == "#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>"
    assert parse("#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>", {"mma": MMA2}) == d
    alias_names = (BLK.alias_name, MMA2.alias_name, s.alias_name, d.alias_name)
    assert alias_names == ("blocked", "mma", None, None)
    assert SwizzledSharedLayout(1, 1, 1, (1, 0)).alias_name == "shared"
    assert LinearEncoding(to_linear(MMA2, (16, 8))).alias_name == "linear"


def test_linear_text():
    enc = LinearEncoding(to_linear(MmaLayout(2, (1, 1), (16, 8)), (16, 8)))
    assert str(enc) == ("#ttg.linear<{register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], "
                        "[1, 0], [2, 0], [4, 0]], warp = [], block = []}>")


def test_every_layout_in_the_reference_ir_parses_and_round_trips():
    count = 0
    for path in sorted(IR_DIR.glob("ir_*.txt")):
        text = path.read_text()
        aliases = parse_aliases(text)
        for line in text.splitlines():
            m = re.match(r"(#\w+) = (#ttg\.\w+<.*)$", line)
            if m and "shared_memory" not in line:
                enc = parse(m.group(2), aliases)
                assert str(enc) == m.group(2)
                count += 1
        # inline slices / dot_ops inside tensor types
        for inline in set(re.findall(r"#ttg\.(?:slice|dot_op)<\{[^{}]*\}>", text)):
            enc = parse(inline, aliases)
            def alias_of(e, aliases=aliases):
                return next((k for k, v in aliases.items() if v == e), None)
            assert enc.to_text(alias_of) == inline
            count += 1
    assert count >= 15


def test_old_prefix_and_cta_tail_are_accepted():
    old = ("#triton_gpu.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = "
           "[4, 1], order = [1, 0], CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0]}>")
    assert parse(old) == BlockedLayout((1, 4), (2, 16), (4, 1), (1, 0))
    assert parse("#triton_gpu.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0], "
                 "hasLeadingOffset = false}>") == SwizzledSharedLayout(8, 1, 8, (1, 0))
    assert parse("#triton_gpu.mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], "
                 "instrShape = [16, 8]}>") == MMA2
    assert parse(f"#blocked = {BLK}") == BLK


# ---------------------------------------------------------------------- errors
def test_warp_of_31_threads_names_threads_per_warp():
    with pytest.raises(LayoutError, match="threadsPerWarp") as e:
        BlockedLayout((1,), (31,), (4,), (0,))
    assert isinstance(e.value, ValueError)
    with pytest.raises(LayoutError, match="threadsPerWarp.*product 16.*32"):
        BlockedLayout((1, 1), (4, 4), (4, 1), (1, 0))


def test_warps_product_mismatch():
    with pytest.raises(LayoutError, match=r"warpsPerCTA = \[2, 2\].*num_warps = 8"):
        check_num_warps(BlockedLayout((1, 1), (4, 8), (2, 2), (1, 0)), 8)
    check_num_warps(BlockedLayout((1, 1), (4, 8), (2, 2), (1, 0)), 4)
    with pytest.raises(LayoutError, match="warpsPerCTA"):
        check_num_warps(SliceLayout(0, BLK), 4)


@pytest.mark.parametrize("kwargs,param", [
    (dict(size_per_thread=(3,), threads_per_warp=(32,), warps_per_cta=(4,), order=(0,)), "sizePerThread"),  # noqa: E501
    (dict(size_per_thread=(1,), threads_per_warp=(32,), warps_per_cta=(3,), order=(0,)), "warpsPerCTA"),  # noqa: E501
    (dict(size_per_thread=(1, 1), threads_per_warp=(32, 1), warps_per_cta=(4, 1), order=(0, 0)), "order"),  # noqa: E501
    (dict(size_per_thread=(1, 1), threads_per_warp=(32,), warps_per_cta=(4, 1), order=(1, 0)), "threadsPerWarp"),  # noqa: E501
])
def test_bad_blocked_parameters(kwargs, param):
    with pytest.raises(LayoutError, match=param):
        BlockedLayout(**kwargs)


@pytest.mark.parametrize("text,needle", [
    ("#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4]}>", "order"),
    ("#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]", "end of text"),  # noqa: E501
    ("#ttg.blocked<{sizePerThread = 4, threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>", "sizePerThread"),  # noqa: E501
    ("#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [16], warpsPerCTA = [4], order = [0]}>", "threadsPerWarp"),  # noqa: E501
    ("#ttg.blocked<{sizePerThread = [4], threadsPrWarp = [32], warpsPerCTA = [4], order = [0]}>", "threadsPrWarp"),  # noqa: E501
    ("#ttg.blocked<{sizePerThread = [4] threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>", "threadsPerWarp"),  # noqa: E501
    ("#ttg.bloked<{sizePerThread = [4]}>", "bloked"),
    ("#ttg.slice<{dim = 1, parent = #blocked}>", "#blocked"),
    ("#ttg.slice<{dim = 2, parent = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>}>", "dim"),  # noqa: E501
    ("#ttg.nvidia_mma<{versionMajor = 1, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>", "versionMajor"),  # noqa: E501
    ("#ttg.swizzled_shared<{vec = 3, perPhase = 1, maxPhase = 1, order = [1, 0]}>", "vec"),
    ("#ttg.nvmma_shared<{swizzlingByteWidth = 96, transposed = false, elementBitWidth = 16}>", "swizzlingByteWidth"),  # noqa: E501
    ("#foo.blocked<{}>", "#foo"),
    ("blocked", "#ttg"),
    ("#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}> x", "'x'"),  # noqa: E501
    ("#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}> $", "'\\$'"),  # noqa: E501
])
def test_malformed_text_names_the_problem(text, needle):
    with pytest.raises(LayoutError, match=needle):
        parse(text)


def test_bad_encodings():
    with pytest.raises(LayoutError, match="instrShape"):
        MmaLayout(2, (2, 2), (16, 16))
    with pytest.raises(LayoutError, match="opIdx"):
        DotOperandLayout(2, MMA2, 2)
    with pytest.raises(LayoutError, match="kWidth"):
        DotOperandLayout(0, MMA2, 3)
    with pytest.raises(LayoutError, match="shared memory"):
        DotOperandLayout(1, MMA3, 2)
    with pytest.raises(LayoutError, match="lane"):
        LinearEncoding(LinearLayout({"register": [], "lane": [(1,)]}, ["dim0"]))
