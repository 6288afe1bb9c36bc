"""``tl.extra.cuda``: grid dependency control (a no-op on the host backends and below sm_90,
said in the compile report; ``griddepcontrol`` in the PTX for sm_90), ``num_warps`` and
``num_threads`` as compile-time constants, ``globaltimer`` and ``smid`` (CUDA only), and the
fp8e4b15 conversions, checked against the workbench's own casts with fresh random inputs."""
import numpy as np
import pytest

import workbench as wb
import workbench.language as tl
from workbench.errors import UnsupportedError
from workbench.language.extra import cuda as tlc


@wb.jit
def dependent_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    tlc.gdc_wait()
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tlc.gdc_launch_dependents()
    tl.store(out_ptr + offs, x * tlc.num_warps() + tlc.num_threads())


@wb.jit
def read_clock(out_ptr):
    t0 = tlc.globaltimer()
    sm = tlc.smid()
    t1 = tlc.globaltimer()
    tl.store(out_ptr, t1 - t0)
    tl.store(out_ptr + 1, sm.to(tl.int64))


@wb.jit
def e4b15_round_trip(x_ptr, down_ptr, up_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    y = tlc.convert_custom_float8_sm80(x, tl.float8e4b15)
    tl.store(down_ptr + offs, y.to(tl.int8, bitcast=True))
    tl.store(up_ptr + offs, tlc.convert_custom_float8_sm70(y, tl.float32))


@wb.jit
def plain_e4b15(x_ptr, down_ptr, up_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.load(x_ptr + offs).to(tl.float16, fp_downcast_rounding="rtz").to(tl.float8e4b15)
    tl.store(down_ptr + offs, y.to(tl.int8, bitcast=True))
    tl.store(up_ptr + offs, y.to(tl.float32))


@pytest.mark.parametrize("tgt", ["interpreter", "cpu"])
@pytest.mark.parametrize("num_warps", [1, 2, 8])
def test_gdc_is_a_no_op_on_the_host_and_counts_are_constants(rng, tgt, num_warps):
    x = rng.standard_normal(128).astype(np.float32)
    out = np.zeros_like(x)
    wb.compile(dependent_copy, x, out, target=tgt, num_warps=num_warps,
               BLOCK=128)[(1,)](x, out)
    np.testing.assert_array_equal(out, x * num_warps + 32 * num_warps)


def test_gdc_is_griddepcontrol_on_sm90_and_a_reported_no_op_on_sm80():
    k90 = wb.compile(dependent_copy, "*fp32", "*fp32", target="cuda:90", BLOCK=128)
    ptx = [ln.strip() for ln in k90.asm["ptx"].splitlines() if "griddepcontrol" in ln]
    assert [p.split(";")[0] for p in ptx] == ["griddepcontrol.wait",
                                              "griddepcontrol.launch_dependents"]
    assert not [n for n in k90.extra["notes"] if "gdc_wait" in n]
    k80 = wb.compile(dependent_copy, "*fp32", "*fp32", target="cuda:80", BLOCK=128)
    assert "griddepcontrol" not in k80.asm["ptx"]
    notes = [n for n in k80.extra["notes"] if "do nothing on sm_80" in n]
    assert [n.split(": ")[0].rsplit(":", 2)[1] for n in notes] == ["16", "19"]
    ttir = [ln for ln in k80.asm["ttir"].splitlines() if "griddepcontrol" in ln]
    assert 'tt.elementwise_inline_asm "griddepcontrol.wait; // dummy $0" {constraints = "=r", ' \
        'packed_element = 1 : i32, pure = false} -> i32' in ttir[0]


def test_launch_pdl_is_kept_for_sm90_and_reported_for_sm80():
    k90 = wb.compile(dependent_copy, "*fp32", "*fp32", target="cuda:90", BLOCK=128,
                     launch_pdl=True)
    assert k90.extra["launch_pdl"] is True
    k80 = wb.compile(dependent_copy, "*fp32", "*fp32", target="cuda:80", BLOCK=128,
                     launch_pdl=True)
    assert k80.extra["launch_pdl"] is False
    assert any("launch_pdl has no effect on sm_80" in n for n in k80.extra["notes"])
    plain = wb.compile(dependent_copy, "*fp32", "*fp32", target="cuda:90", BLOCK=128)
    assert plain.extra["launch_pdl"] is False


def test_timer_and_sm_id_compile_for_cuda_and_are_refused_on_the_host():
    k = wb.compile(read_clock, "*i64", target="cuda:90")
    assert k.asm["ptx"].count("%globaltimer") == 2 and "%smid" in k.asm["ptx"]
    with pytest.raises(UnsupportedError, match="only the CUDA backend can run it"):
        wb.compile(read_clock, "*i64", target="interpreter")


@pytest.mark.parametrize("tgt", ["interpreter", "cpu"])
def test_custom_fp8_conversions_are_the_fp8e4b15_casts(rng, tgt):
    x = np.clip(rng.standard_normal(256) * 0.5, -1.7, 1.7).astype(np.float32)  # max 1.75
    got = np.zeros(256, np.int8), np.zeros(256, np.float32)
    want = np.zeros(256, np.int8), np.zeros(256, np.float32)
    wb.compile(e4b15_round_trip, x, *got, target=tgt, BLOCK=256)[(1,)](x, *got)
    wb.compile(plain_e4b15, x, *want, target=tgt, BLOCK=256)[(1,)](x, *want)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert np.all(np.abs(got[1] - x) <= np.abs(x) / 8 + 2.0**-17)   # 3 mantissa bits


@pytest.mark.gpu
def test_on_the_gpu(rng):
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(rng.standard_normal(128).astype(np.float32)).cuda()
    out = torch.zeros_like(x)
    dependent_copy[(1,)](x, out, BLOCK=128, num_warps=2)
    np.testing.assert_array_equal(out.cpu().numpy(), x.cpu().numpy() * 2 + 64)
    # a chain of dependent launches, each waiting in gdc_wait for the one before
    y = x
    for _ in range(4):
        nxt = torch.zeros_like(x)
        dependent_copy[(1,)](y, nxt, BLOCK=128, num_warps=2, launch_pdl=True)
        y = nxt
    want = x.cpu().numpy()
    for _ in range(4):
        want = want * 2 + 64
    np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-6)
    clock = torch.zeros(2, dtype=torch.int64, device="cuda")
    read_clock[(1,)](clock)
    dt_ns, sm = clock.cpu().tolist()
    assert 0 <= dt_ns < 10**7 and 0 <= sm < torch.cuda.get_device_properties(0)\
        .multi_processor_count
