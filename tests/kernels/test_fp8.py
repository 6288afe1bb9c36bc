"""8-bit floats end to end: casts both ways for every fp8 dtype and every wider float, with
rtne and rtz, against ml_dtypes (saturating, as the workbench defines the conversions) and
against first principles for float8e4b15; fp8 arrays at launch (ml_dtypes, torch, uint8 bits
reinterpreted); the errors for casts Triton refuses. The kernels/ conftest also compiles each
CPU launch for cuda:80 and cuda:90."""
import numpy as np
import pytest
from fp8_ref import ML, e4b15_from_f16, e4b15_value, ml_dtypes, same_codes, saturating

import workbench as wb
import workbench.language as tl
from workbench.errors import CompilationError

FORMATS = list(ML)
N = 512


@pytest.fixture
def rng():
    """A generator with a fresh seed, printed so a failing run can be repeated."""
    seed = np.random.SeedSequence().entropy
    print(f"seed {seed}")
    return np.random.default_rng(seed)


@wb.jit
def down_up(x_ptr, y_ptr, z_ptr, DST: tl.constexpr, R: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    y = tl.load(x_ptr + offs).to(DST, fp_downcast_rounding=R)
    tl.store(y_ptr + offs, y)
    tl.store(z_ptr + offs, y.to(tl.float32))


@wb.jit
def upcast(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(y_ptr.dtype.element_ty))


@wb.jit
def from_bits(x_ptr, y_ptr, DST: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(DST, bitcast=True).to(tl.float32))


def _inputs(rng, dtype) -> np.ndarray:
    """Values over every binade an fp8 format has (and beyond), plus the edge cases."""
    x = rng.standard_normal(N) * 2.0 ** rng.integers(-22, 20, N)
    x[:10] = [np.nan, np.inf, -np.inf, 1e6, -1e6, 0.0, -0.0, 448.0, 464.0, 2.0 ** -10]
    return x.astype(dtype)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("src", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("rounding", [None, "rtz"])
def test_narrowing_to_fp8_matches_ml_dtypes(backend, rng, name, src, rounding):
    np_src = ml_dtypes.bfloat16 if src == "bfloat16" else np.dtype(src)
    x = _inputs(rng, np_src)
    y = np.full(N, 0x55, np.uint8).view(ML[name])
    z = np.full(N, np.nan, np.float32)
    down_up[(1,)](x, y, z, DST=getattr(tl, name), R=rounding, N=N)
    want = saturating(x.astype(np.float64), name, rtz=rounding == "rtz")
    ok = same_codes(y, want, name)
    assert ok.all(), (x[~ok][:8], y.view(np.uint8)[~ok][:8], want[~ok][:8])
    ref = want.view(ML[name]).astype(np.float32)
    np.testing.assert_array_equal(z, ref)


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("dst", [np.float32, np.float16, np.float64, ml_dtypes.bfloat16])
def test_widening_every_code_is_exact(backend, name, dst):
    codes = np.arange(256, dtype=np.uint8)
    x = codes.view(ML[name])
    y = np.zeros(256, dst)
    upcast[(1,)](x, y, N=256)
    want = x.astype(np.float64).astype(dst)
    np.testing.assert_array_equal(y.astype(np.float64), want.astype(np.float64))


@pytest.mark.parametrize("name", FORMATS)
def test_bitcast_from_uint8_and_int8(backend, name):
    codes = np.arange(256, dtype=np.uint8)
    y = np.zeros(256, np.float32)
    from_bits[(1,)](codes, y, DST=getattr(tl, name), N=256)
    np.testing.assert_array_equal(y, codes.view(ML[name]).astype(np.float32))
    from_bits[(1,)](codes.view(np.int8), y, DST=getattr(tl, name), N=256)
    np.testing.assert_array_equal(y, codes.view(ML[name]).astype(np.float32))


def test_fp8_to_fp8_goes_through_the_value(backend, rng):
    x = _inputs(rng, np.float32).astype(ML["float8e4nv"])
    y = np.zeros(N, ML["float8e5"])
    upcast[(1,)](x, y, N=N)
    want = saturating(x.astype(np.float64), "float8e5")
    assert same_codes(y, want, "float8e5").all()


def _f16_rtz(x: np.ndarray) -> np.ndarray:
    h = x.astype(np.float16)
    away = np.isfinite(x) & (np.abs(h.astype(np.float64)) > np.abs(x.astype(np.float64)))
    bits = h.view(np.uint16)
    return np.where(away, bits - np.uint16(1), bits).astype(np.uint16).view(np.float16)


@pytest.mark.parametrize("src", [np.float32, np.float16])
def test_float8e4b15_both_ways(backend, rng, src):
    """float8e4b15 has no array dtype: its bits travel as uint8 through ``wb.reinterpret``."""
    x = (rng.standard_normal(N) * 2.0 ** rng.integers(-16, 2, N)).astype(src)
    x[:6] = [np.nan, np.inf, -np.inf, 1.8, -1.8125, -0.0]
    y = np.zeros(N, np.uint8)
    z = np.zeros(N, np.float32)
    down_up[(1,)](x, wb.reinterpret(y, tl.float8e4b15), z, DST=tl.float8e4b15, R=None, N=N)
    h = x if src == np.float16 else _f16_rtz(x)
    want = e4b15_from_f16(h)
    bad = y != want
    assert not bad.any(), (x[bad][:8], y[bad][:8], want[bad][:8])
    np.testing.assert_array_equal(z, e4b15_value(want).astype(np.float32))


def test_ml_dtypes_arrays_copy_bit_exactly(backend, rng):
    @wb.jit
    def copy(x_ptr, y_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))

    for name, mlt in ML.items():
        x = rng.integers(0, 256, N, dtype=np.uint8).view(mlt)
        y = np.zeros(N, mlt)
        copy[(1,)](x, y, N=N)
        np.testing.assert_array_equal(y.view(np.uint8), x.view(np.uint8), err_msg=name)


def test_torch_fp8_tensors_are_accepted(backend, rng):
    torch = pytest.importorskip("torch", reason="torch fp8 tensors")
    x = torch.from_numpy(rng.standard_normal(N).astype(np.float32))
    y = torch.zeros(N, dtype=torch.float8_e5m2)
    z = torch.zeros(N, dtype=torch.float32)
    down_up[(1,)](x, y, z, DST=tl.float8e5, R=None, N=N)
    want = saturating(x.numpy(), "float8e5")
    np.testing.assert_array_equal(y.view(torch.uint8).numpy(), want)


def test_e4m3b11fnuz_arrays_are_refused_with_the_reason(backend):
    x = np.zeros(16, ml_dtypes.float8_e4m3b11fnuz)
    with pytest.raises(Exception, match="bias 11"):
        down_up[(1,)](np.zeros(16, np.float32), x, np.zeros(16, np.float32),
                      DST=tl.float8e4nv, R=None, N=16)


@wb.jit
def fp8_to_int(x_ptr, y_ptr):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.int32))


@wb.jit
def fp8_add(x_ptr, y_ptr):
    offs = tl.arange(0, 16)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x + x)


@wb.jit
def fp8_round_up(x_ptr, y_ptr):
    offs = tl.arange(0, 16)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.float32, fp_downcast_rounding="rtz"))


@pytest.mark.parametrize("kernel, line, words", [
    (fp8_to_int, ".to(tl.int32)", "8-bit floats convert only"),
    (fp8_add, "x + x", "not supported"),
    (fp8_round_up, "fp_downcast_rounding", "truncating"),
])
def test_refused_fp8_uses_point_at_the_line(backend, kernel, line, words):
    x = np.zeros(16, ML["float8e4nv"])
    out = np.zeros(16, np.int32 if kernel is fp8_to_int else np.float32)
    if kernel is fp8_add:
        out = np.zeros(16, ML["float8e4nv"])
    with pytest.raises(CompilationError) as info:
        kernel[(1,)](x, out)
    assert line in str(info.value) and words in str(info.value)


def test_ttir_prints_as_triton(backend):
    c = wb.compile(down_up, "*fp32", "*fp8e4nv", "*fp32", DST=tl.float8e4nv, R=None, N=16,
                   target="cpu")
    text = c.asm["ttir"]
    assert "tt.fp_to_fp %" in text
    assert ", rounding = rtne : tensor<16xf32> -> tensor<16xf8E4M3FN>" in text
    assert ": tensor<16xf8E4M3FN> -> tensor<16xf32>" in text
    assert "!tt.ptr<f8E4M3FN>" in text


@pytest.mark.parametrize("name, ptx", [("float8e4nv", "cvt.rn.satfinite.e4m3x2.f32"),
                                       ("float8e5", "cvt.rn.satfinite.e5m2x2.f32")])
def test_sm90_uses_the_cvt_instruction_and_sm80_software(name, ptx):
    sig = f"*fp8{'e4nv' if name == 'float8e4nv' else 'e5'}"
    c90 = wb.compile(down_up, "*fp32", sig, "*fp32", DST=getattr(tl, name), R=None, N=256,
                     target="cuda:90")
    assert ptx in c90.asm["ptx"]
    assert "cvt.rn.f16x2." + ptx.split(".")[3].replace("x2", "x2") in c90.asm["ptx"]
    if name == "float8e4nv":  # Triton's NVIDIA backend takes fp8e4nv from sm_89 only
        with pytest.raises(CompilationError, match="fp8e4nv not supported in this arch"):
            wb.compile(down_up, "*fp32", sig, "*fp32", DST=getattr(tl, name), R=None, N=256,
                       target="cuda:80")
        return
    c80 = wb.compile(down_up, "*fp32", sig, "*fp32", DST=getattr(tl, name), R=None, N=256,
                     target="cuda:80")
    assert "satfinite" not in c80.asm["ptx"]


def test_readme_fp8_example_runs(tmp_path):
    import pathlib
    import runpy
    text = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    start = text.index("```python\n", text.index("### 8-bit floats")) + len("```python\n")
    script = tmp_path / "fp8_example.py"
    script.write_text(text[start:text.index("```", start)], encoding="utf-8")
    ns = runpy.run_path(str(script))
    want = saturating(ns["x"], "float8e4nv")
    np.testing.assert_array_equal(ns["q"].view(np.uint8), want)


@wb.jit
def fp8_abs(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.abs(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("name", FORMATS + ["float8e4b15"])
def test_abs_of_every_code(backend, name):
    codes = np.arange(256, dtype=np.uint8)
    y = np.zeros(256, np.uint8)
    fp8_abs[(1,)](wb.reinterpret(codes, getattr(tl, name)), wb.reinterpret(y, getattr(tl, name)),
                  N=256)
    if name == "float8e4b15":
        np.testing.assert_array_equal(y, codes & 0x7F)
        return
    want = np.abs(codes.view(ML[name]).astype(np.float32))
    np.testing.assert_array_equal(y.view(ML[name]).astype(np.float32), want)
