"""Every symbol of ``tl.extra.libdevice``'s TABLE is known to the interpreter and to the CPU
backend (a census that cannot silently regress: it iterates TABLE), and on fresh random inputs
the CPU backend's result equals the interpreter's: bit for bit for the exact families
(rounding-mode arithmetic, conversions, integer intrinsics, bit casts, nextafter, ilogb...),
within 1 ulp (fp32) / 4 ulp (fp64) for the functions both evaluate in double through
different libraries (libm on the CPU, numpy on the interpreter)."""
from __future__ import annotations

import numpy as np
import pytest
from llvmlite import ir

from tests.codegen import libdevice_jit as J
from workbench.backends.interp.extern import extern_fn
from workbench.codegen.cpu.extern import emit_extern
from workbench.codegen.cpu.llvmtypes import value_type
from workbench.language import dtypes as dt
from workbench.language.extra.libdevice import TABLE

rng = np.random.default_rng()
N = 64

#: functions correctly rounded (or exact) by definition, besides the ``_rn/_rz/_rd/_ru`` ones:
#: results must be identical on every target
EXACT_NAMES = set("""nextafter ilogb logb llrint llround saturatef rcp64h float_as_int
float_as_uint int_as_float uint_as_float longlong_as_double double_as_longlong double2loint
double2hiint hiloint2double fma abs copysign floor ceil trunc rint nearbyint round fmod fdim
ldexp scalbn isnan isinf finitef isfinited signbit sqrt remainder""".split())
LOOSE = {"lgamma", "tgamma", "j0", "j1", "y0", "y1", "jn", "yn"}
#: input ranges by function name (default: uniform(-10, 10))
DOMAIN = {"acosh": (1.0, 50.0), "log": (0.01, 100.0), "log2": (0.01, 100.0),
          "log10": (0.01, 100.0), "log1p": (-0.9, 50.0), "sqrt": (0.0, 100.0),
          "rsqrt": (0.01, 100.0), "rcbrt": (0.1, 10.0), "asin": (-1.0, 1.0),
          "acos": (-1.0, 1.0), "atanh": (-0.99, 0.99), "erfinv": (-1.0, 1.0),
          "erfcinv": (0.0, 2.0), "normcdfinv": (0.0, 1.0), "y0": (0.1, 30.0),
          "y1": (0.1, 30.0), "yn": (0.5, 30.0), "lgamma": (0.1, 20.0), "tgamma": (0.1, 20.0),
          "pow": (0.1, 4.0), "fast_powf": (0.1, 4.0), "fast_logf": (0.01, 100.0),
          "fast_log2f": (0.01, 100.0), "fast_log10f": (0.01, 100.0),
          "sqrt_rn": (0.0, 100.0), "sqrt_rz": (0.0, 100.0), "sqrt_rd": (0.0, 100.0),
          "sqrt_ru": (0.0, 100.0), "rsqrt_rn": (0.001, 1000.0)}


def _is_exact(name: str) -> bool:
    return name[-3:] in ("_rn", "_rz", "_rd", "_ru") or name in EXACT_NAMES


def _inputs(name, args):
    lo, hi = DOMAIN.get(name, (-10.0, 10.0))
    xs = []
    for a in args:
        if a in (dt.float32, dt.float64):
            xs.append(rng.uniform(lo, hi, N))
        elif name in ("jn", "yn") or a in (dt.int32, dt.int64) and name in ("pow", "ldexp",
                                                                          "scalbn"):
            xs.append(rng.integers(-6 if name in ("pow", "ldexp", "scalbn") else 0, 7, N))
        else:
            info = np.iinfo(J.NP[a])
            xs.append(rng.integers(info.min, info.max, N, dtype=J.NP[a], endpoint=True))
    return xs


ENTRIES = sorted((sym, name, args, ret) for name, es in TABLE.items()
                 for args, sym, ret in es)


def test_every_table_symbol_is_known_on_both_targets():
    missing_interp, missing_cpu = [], []
    for sym, _, args, ret in ENTRIES:
        ins, out = [J.IR[a] for a in args], J.IR[ret]
        try:
            extern_fn(sym, ins, out)
        except NotImplementedError:
            missing_interp.append(sym)
        module = ir.Module()
        fn = ir.Function(module, ir.FunctionType(value_type(out), [value_type(t) for t in ins]),
                         "f")
        b = ir.IRBuilder(fn.append_basic_block())
        try:
            b.ret(emit_extern(b, module, {"symbol": sym}, list(fn.args), ins, out))
        except Exception:  # noqa: BLE001 - any failure to emit counts as unknown
            missing_cpu.append(sym)
    assert len(ENTRIES) >= 313
    assert missing_interp == [] and missing_cpu == []


def _same(got, want, ret, exact, loose=False):
    if ret in (dt.float32, dt.float64):
        with np.errstate(invalid="ignore"):  # signalling NaN bit patterns (the bit casts)
            g, w = got.astype(np.float64), want.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        if exact:
            assert np.array_equal(got.view(got.dtype), want.astype(got.dtype)) or np.all(
                both_nan | ((g == w) & (np.signbit(g) == np.signbit(w)))), (got, want)
            return
        tol = 1 if ret == dt.float32 else 4
        spacing = np.spacing(np.abs(want).astype(J.NP[ret])).astype(np.float64)
        if loose:  # near their zeros lgamma and the Bessel functions lose relative accuracy
            spacing = np.maximum(spacing, np.spacing(J.NP[ret](1)))
        with np.errstate(invalid="ignore"):
            ok = both_nan | (g == w) | (np.abs(g - w) <= tol * spacing)
        assert ok.all(), (got[~ok], want[~ok])
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


@pytest.mark.parametrize("sym,name,args,ret", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_cpu_matches_interpreter(sym, name, args, ret):
    xs = _inputs(name, args)
    with np.errstate(all="ignore"):
        got = J.cpu(sym, *xs)
        want = J.interp(sym, *xs)
    _same(got, want, ret, _is_exact(name), name in LOOSE)


def test_a_symbol_outside_libdevice_is_refused_by_name():
    with pytest.raises(NotImplementedError, match="__nv_frobnicatef"):
        extern_fn("__nv_frobnicatef", [J.IR[dt.float32]], J.IR[dt.float32])
    with pytest.raises(NotImplementedError, match="__nv_fadd_rx"):
        extern_fn("__nv_fadd_rx", [J.IR[dt.float32]] * 2, J.IR[dt.float32])
